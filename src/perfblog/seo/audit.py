"""Audit a folder of built HTML: read each page's facts, apply the rules, add the site-wide checks.

Works on any static site, not only ours: it reads files, not MkDocs objects. Site-wide rules compare
pages with each other (duplicate titles and descriptions, hreflang links that are not returned) and
with the site's robots.txt and sitemap.xml.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import lxml.html
from lxml import etree

from perfblog.seo import links, rules, sitemap, sitewide, text
from perfblog.seo import robots as robots_txt
from perfblog.seo.errors import AuditError, SitemapError
from perfblog.seo.registry import Finding, Rule, Severity
from perfblog.seo.rules import CRAWLERS, PageFacts, page_findings


def first_things_first(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in the order an author acts on them: leftover placeholders, then by severity."""
    order = list(Severity)
    return sorted(findings, key=lambda f: (f.rule != rules.PLACEHOLDER_UNFILLED.id, order.index(f.severity)))


def score(findings: Iterable[Finding]) -> int:
    """A page's score: 100 less each finding's penalty, never below 0 (the audit's and the panel's)."""
    return max(0, 100 - sum(f.severity.penalty for f in findings))


_CONTENT_ROOTS = (
    etree.XPath(
        "//div[contains(@class, 'md-content') and contains(concat(' ', @class, ' '), ' md-content ')]"
    ),
    etree.XPath("//main"),
    etree.XPath("//article"),
    etree.XPath("//body"),
)
# Not the article's text: navigation, chrome and code blocks. Material's page intro is a
# <header class="md-typeset"> outside any article, and inline <code> is prose (`torch.compile`).
_NOT_TEXT = etree.XPath(
    "descendant::*[self::nav or self::header[not(ancestor::article)"
    " and not(contains(concat(' ', @class, ' '), ' md-typeset '))] or self::footer or self::aside"
    " or self::script or self::style or self::noscript or self::template or self::pre"
    " or self::form or self::svg]"
)
# Permalink marks a heading carries (Python-Markdown's ¶, or any symbol-only link to its own anchor).
_PERMALINKS = etree.XPath(
    "//*[contains(concat(' ', @class, ' '), ' headerlink ')]"
    " | //*[self::h1 or self::h2 or self::h3 or self::h4 or self::h5 or self::h6]/a[starts-with(@href, '#')]"
)
_WORDLIKE = re.compile(r"\w")
_META = etree.XPath("//head/meta[@name or @property]")
_TITLE = etree.XPath("//head/title")
_CANONICAL = etree.XPath("//head/link[@rel='canonical']/@href")
_JSONLD = etree.XPath("//script[@type='application/ld+json']")
_H1 = etree.XPath("//body//h1")
_IMAGES = etree.XPath("//body//img")
_IDS = etree.XPath("//@id | //a/@name")
_ELEMENTS = etree.XPath("count(//*)")
_RESOURCES = etree.XPath("//link[@rel='stylesheet']/@href | //script/@src | //img/@src")
_HEADINGS = etree.XPath(".//*[self::h1 or self::h2 or self::h3 or self::h4 or self::h5 or self::h6]")
_SIZED = re.compile(r"\bwidth\s*:.*\bheight\s*:|\bheight\s*:.*\bwidth\s*:", re.IGNORECASE | re.DOTALL)
_ANCHORS = etree.XPath("//body//a[@href]")
_CONTENT_HREFS = etree.XPath(".//a/@href")
#: Links in the text, less those in list entries (Material's post excerpts on index, archive, category).
_AUTHORED_HREFS = etree.XPath(
    ".//a[not(ancestor::*[contains(concat(' ', @class, ' '), ' md-post--excerpt ')])]/@href"
)
_H2 = etree.XPath(".//h2")
_HREFLANG = etree.XPath("//head/link[@hreflang][translate(@rel, 'ALTERNATE', 'alternate')='alternate']")
# What holds the first paint: stylesheets (unless for print) and scripts without async, defer or module.
_BLOCKING = etree.XPath(
    "//head/link[contains(concat(' ', translate(@rel, 'STYLESHEET', 'stylesheet'), ' '), ' stylesheet ')]"
    "[@href][not(@disabled)][not(@media='print')]/@href"
    " | //head/script[@src][not(@async)][not(@defer)][not(@type='module')]/@src"
)
_PARAGRAPHS = etree.XPath(".//p")


@dataclass
class PageResult:
    """One audited page: its findings and score, plus what site-wide rules compare."""

    page: str
    title: str | None
    description: str | None
    canonical: str | None
    noindex: bool
    is_post: bool
    words: int
    findings: list[Finding] = field(default_factory=list)
    hreflang: list[tuple[str, str]] = field(default_factory=list)
    lang: str | None = None

    @property
    def score(self) -> int:
        return score(self.findings)


@dataclass
class AuditReport:
    """All pages audited and every finding, in page order."""

    pages: list[PageResult]
    site_findings: list[Finding] = field(default_factory=list)  # about robots.txt or sitemap.xml themselves

    @property
    def findings(self) -> list[Finding]:
        return [f for p in self.pages for f in p.findings] + self.site_findings

    @property
    def language(self) -> str:
        """The site's language as its home page declares it (else its first page's): the report's words."""
        home = next((p for p in self.pages if p.page == "index.html"), self.pages[0] if self.pages else None)
        return (home.lang if home else None) or "en"

    @property
    def has_errors(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    def to_json(self) -> str:
        """The contract: {"pages": N, "findings": [{"page", "rule", "severity", "message"}]}."""
        return json.dumps(
            {"pages": len(self.pages), "findings": [f.as_dict() for f in self.findings]},
            ensure_ascii=False,
            indent=2,
        )


def _text(element: etree._Element) -> str:
    return " ".join(element.text_content().split())


def _decoded(html: bytes) -> str | bytes:
    """UTF-8 text when the bytes are UTF-8 (lxml would guess Latin-1 for a page without a charset);
    otherwise the bytes, for lxml to decode by the page's own declaration."""
    try:
        text = html.decode("utf-8")
    except UnicodeDecodeError:
        return html
    return html if text.lstrip().startswith("<?xml") else text  # lxml refuses str with a declaration


def read_page(html: bytes, page: str) -> PageFacts:
    """Extract what the rules need from one page's HTML; `page` is its path relative to the site."""
    try:
        doc = lxml.html.document_fromstring(_decoded(html))
    except (etree.ParserError, ValueError) as exc:
        raise AuditError(f"{page}: cannot parse HTML: {exc}") from exc
    facts = PageFacts(page=page, lang=(doc.get("lang") or "").strip() or None, size=len(html))
    facts.elements = int(_ELEMENTS(doc))  # the DOM as served, nothing dropped yet
    facts.ids = frozenset(_IDS(doc))
    facts.resources = list(_RESOURCES(doc))
    titles = _TITLE(doc)
    facts.title = _text(titles[0]) if titles else None
    for meta in _META(doc):
        name = (meta.get("name") or meta.get("property") or "").strip().lower()
        content = (meta.get("content") or "").strip()
        if name == "description":
            facts.description = content
        elif name == "keywords":
            facts.keywords = [k.strip() for k in content.replace("，", ",").split(",") if k.strip()]
        elif name == "robots":
            facts.robots = content.lower()
        elif name in ("googlebot", "baiduspider", "bingbot"):
            facts.bot_robots[name] = content.lower()
        elif name.startswith("og:"):
            facts.og[name] = content
    canonical = _CANONICAL(doc)
    facts.canonical = canonical[0].strip() if canonical else None
    facts.jsonld = [s.text or "" for s in _JSONLD(doc)]
    for mark in _PERMALINKS(doc):
        if mark.getparent() is not None and not _WORDLIKE.search(mark.text_content()):
            mark.drop_tree()
    facts.h1 = [_text(h) for h in _H1(doc)]
    facts.images = [(img.get("src", ""), img.get("alt")) for img in _IMAGES(doc)]
    facts.hreflang = [(x.get("hreflang", "").strip(), x.get("href", "").strip()) for x in _HREFLANG(doc)]
    facts.blocking = [str(url).strip() for url in _BLOCKING(doc)]
    facts.unsized_images = [img.get("src", "") for img in _IMAGES(doc) if not _sized(img)]
    facts.anchors = [(a.get("href"), _text(a)) for a in _ANCHORS(doc)]
    root = next((found[0] for xp in _CONTENT_ROOTS if (found := xp(doc))), doc)  # bodiless: the page
    for element in _NOT_TEXT(root):
        if element.getparent() is not None:
            element.drop_tree()
    hrefs = _CONTENT_HREFS(root)
    facts.content_links = [h for h in hrefs if not h.startswith("#")]
    facts.fragments = [h for h in hrefs if h.startswith("#")]
    facts.authored_links = [h for h in _AUTHORED_HREFS(root) if not h.startswith("#")]
    facts.headings = [(int(h.tag[1]), _text(h)) for h in _HEADINGS(root)]
    facts.h2 = [_text(h) for h in _H2(root)]
    facts.intro = _opening([t for p in _PARAGRAPHS(root) if (t := _text(p))])
    facts.body = _text(root)
    if facts.is_post:  # segmentation is the costly part; only posts need it
        facts.tokens = text.default_segmenter().tokens(facts.body)
    return facts


def _sized(img: etree._Element) -> bool:
    """Whether the browser knows an image's box before it loads (no layout shift): width and height
    attributes, or both in its inline style."""
    return bool(img.get("width") and img.get("height")) or bool(_SIZED.search(img.get("style") or ""))


def _opening(paragraphs: list[str]) -> str:
    """The first paragraph, and the next ones until a tenth of all the paragraphs' text (Rank Math's
    "beginning of the content"): a page that opens with a short note still has an opening."""
    total = sum(map(len, paragraphs))
    taken: list[str] = []
    for paragraph in paragraphs:
        if taken and 10 * sum(map(len, taken)) >= total:
            break
        taken.append(paragraph)
    return " ".join(taken)


def _url_path(rel: str) -> str:
    """The URL path a file is served at, relative to the site root: a/index.html -> a/."""
    return rel.removesuffix("index.html")


def iter_pages(site_dir: Path) -> Iterator[tuple[str, bytes]]:
    """(relative path, bytes) of each HTML document under `site_dir`, sorted; skips files without <html>,
    and what is not a file (a folder named x.html, a dangling link), which never aborts the audit."""
    for path in sorted(site_dir.rglob("*.html")):
        if not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise AuditError(f"{path}: cannot read it: {exc.strerror or exc}") from exc
        if b"<html" in data[:4096].lower():
            yield path.relative_to(site_dir).as_posix(), data


def read_site(site_dir: Path) -> list[PageFacts]:
    """The facts of every page under `site_dir`, in path order."""
    if not site_dir.is_dir():
        raise AuditError(f"{site_dir}: not a folder of built HTML")
    return [read_page(html, rel) for rel, html in iter_pages(site_dir)]


def audit_site(site_dir: Path, pages: list[PageFacts] | None = None) -> AuditReport:
    """Audit every page under `site_dir` (``pages``: their facts, when the caller has read them)."""
    if pages is None:
        pages = read_site(site_dir)
    robots = robots_txt.read(site_dir)
    results: dict[str, PageResult] = {}
    index = sitewide.SiteIndex(site_dir)
    for facts in pages:
        index.add(facts)
        findings = list(page_findings(facts))
        if robots and not facts.noindex:
            findings.extend(_robots_findings(facts, robots))
        results[facts.page] = PageResult(
            facts.page, facts.title, facts.description, facts.canonical, facts.noindex, facts.is_post,
            facts.words, findings, facts.hreflang, facts.lang,
        )  # fmt: skip
    for finding in links.findings(pages):
        results[finding.page].findings.append(finding)
    report = AuditReport(list(results.values()))
    _duplicates(report.pages, "title", rules.TITLE_DUPLICATE)
    _duplicates(report.pages, "description", rules.DESCRIPTION_DUPLICATE)
    _not_reciprocal(report.pages)
    listed: set[str] = set()
    try:
        listed = set(sitemap.locs(site_dir))
    except SitemapError as exc:
        report.site_findings.append(rules.SITEMAP_INVALID.at(
            "sitemap.xml", str(exc), f"sitemap.xml 无法读取：{exc}"))
    _noindex_in_sitemap(report.pages, listed)
    declared = robots.sitemaps[0] if robots and robots.sitemaps else None
    for finding in index.findings(sorted(listed), declared):
        if finding.page in results:
            results[finding.page].findings.append(finding)
        else:
            report.site_findings.append(finding)
    if robots:
        report.site_findings.extend(rules.ROBOTS_TXT_INVALID.at(
            "robots.txt", line, f"robots.txt 有误：{line}")
                                    for line in robots.errors)
    return report


def _robots_findings(facts: PageFacts, robots: robots_txt.Robots) -> Iterable[Finding]:
    path = urlsplit(facts.canonical).path if facts.canonical else "/" + _url_path(facts.page)
    blocked = [agent for agent in CRAWLERS if not robots.allowed(agent, path or "/")]
    if blocked:
        yield rules.ROBOTS_BLOCKS_CRAWLER.at(
            facts.page, f"robots.txt disallows {path} for {', '.join(blocked)}",
                                             f"robots.txt 不让 {'、'.join(blocked)} 抓取 {path}")


_ZH_ATTRIBUTES = {"title": "标题", "description": "描述"}


def _duplicates(pages: list[PageResult], attr: str, rule: Rule) -> None:
    groups: dict[str, list[PageResult]] = defaultdict(list)
    for page in pages:
        value = getattr(page, attr)
        if value and not page.noindex:
            groups[text.normalize(value)].append(page)
    for group in groups.values():
        if len(group) < 2:
            continue
        for page in group:
            others = ", ".join(o.page for o in group if o is not page)
            page.findings.append(rule.at(page.page, f"same {attr} as {others}",
                                         f"{_ZH_ATTRIBUTES[attr]}与 {others} 相同"))


def _not_reciprocal(pages: list[PageResult]) -> None:
    """Both ends of each hreflang link between two audited pages must list each other."""
    by_url = {p.canonical: p for p in pages if p.canonical and not p.noindex}
    for page in by_url.values():
        for tag, href in page.hreflang:
            other = by_url.get(href)
            if other is None or other is page:
                continue  # not a page of this site (or of this build): nothing to compare
            if page.canonical not in {url for _, url in other.hreflang}:
                rule = rules.HREFLANG_NOT_RECIPROCAL
                page.findings.append(rule.at(page.page, f"lists {other.page} as its {tag} version, "
                                                        f"which does not list it back",
                                             f"把 {other.page} 列为 {tag} 版本，对方没有列回它"))
                other.findings.append(rule.at(other.page, f"{page.page} lists it as its {tag} version; "
                                                          f"it does not list {page.page}",
                                              f"{page.page} 把它列为 {tag} 版本，它没有列回 {page.page}"))


def _noindex_in_sitemap(pages: list[PageResult], listed: set[str]) -> None:
    """Flag the noindex pages the sitemap (its <loc>s: `listed`) lists."""
    noindex = [p for p in pages if p.noindex]
    if not noindex:
        return
    suffixes: set[str] = set()
    for loc in listed:
        segments = urlsplit(loc).path.lstrip("/").split("/")
        suffixes.update("/".join(segments[i:]) for i in range(len(segments)))
    for page in noindex:
        url_path = _url_path(page.page)
        if page.canonical in listed or (url_path and url_path in suffixes):
            page.findings.append(rules.NOINDEX_IN_SITEMAP.at(
                page.page, "page says noindex but sitemap.xml lists it",
                                                             "页面声明 noindex，sitemap.xml 却列出了它"))
