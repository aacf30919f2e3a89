"""Audit a folder of built HTML: each page's facts (`facts.read_page`) checked by its own rules
(`checks`), then the site-wide pass.

Works on any static site, not only ours: it reads files, not MkDocs objects. Site-wide rules compare
pages with each other (duplicate titles and descriptions, hreflang links that are not returned) and
with the site's robots.txt and sitemap.xml.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from perfblog.core.gcpause import collector_paused
from perfblog.core.workers import Task, Workers
from perfblog.seo import links, rules, sitemap, sitewide, text
from perfblog.seo import robots as robots_txt
from perfblog.seo.checks import page_findings
from perfblog.seo.errors import AuditError, SitemapError
from perfblog.seo.facts import PageFacts, read_page
from perfblog.seo.registry import Finding, Rule, Severity
from perfblog.seo.rules import CRAWLERS


def first_things_first(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in the order an author acts on them: leftover placeholders, then by severity."""
    order = list(Severity)
    return sorted(findings, key=lambda f: (f.rule != rules.PLACEHOLDER_UNFILLED.id, order.index(f.severity)))


def score(findings: Iterable[Finding]) -> int:
    """A page's score: 100 less each finding's penalty, never below 0 (the audit's and the panel's)."""
    return max(0, 100 - sum(f.severity.penalty for f in findings))


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

    def rated(self, findings: Iterable[Finding]) -> AuditReport:
        """This report holding `findings` instead: its own as a blog rates them (`findings.Judged`),
        each under its page again."""
        by_page: dict[str, list[Finding]] = defaultdict(list)
        for finding in findings:
            by_page[finding.page].append(finding)
        pages = [replace(page, findings=by_page.pop(page.page, [])) for page in self.pages]
        return AuditReport(pages, [finding for found in by_page.values() for finding in found])

    def to_json(self, new: Iterable[Finding] | None = None) -> str:
        """The contract: {"pages": N, "findings": [{"page", "rule", "severity", "message"}]}; given the
        findings a baseline does not know (`new`), each finding also says whether it is one ("new")."""
        fresh = None if new is None else set(map(id, new))
        found = [f.as_dict() | ({} if fresh is None else {"new": id(f) in fresh}) for f in self.findings]
        return json.dumps({"pages": len(self.pages), "findings": found}, ensure_ascii=False, indent=2)


def _url_path(rel: str) -> str:
    """The URL path a file is served at, relative to the site root: a/index.html -> a/."""
    return rel.removesuffix("index.html")


def page_order(rel: str) -> tuple[str, ...]:
    """The order pages are audited and reported in: their paths, folder by folder."""
    return tuple(rel.split("/"))


def html_files(site_dir: Path) -> list[str]:
    """Paths of the `.html` files under `site_dir`, relative to it, in `page_order`."""
    found = (path.relative_to(site_dir).as_posix() for path in site_dir.rglob("*.html"))
    return sorted(found, key=page_order)


def is_document(data: bytes) -> bool:
    """Whether a `.html` file is a document to audit (it has `<html`; a fragment or redirect stub is not)."""
    return b"<html" in data[:4096].lower()


def iter_pages(site_dir: Path, skip: Container[str] = ()) -> Iterator[tuple[str, bytes]]:
    """(relative path, bytes) of each HTML document under `site_dir` not in `skip`, in `page_order`."""
    for rel in html_files(site_dir):
        if rel in skip:
            continue
        path = site_dir / rel
        if not path.is_file():  # a folder named x.html, a dangling link: never aborts the audit
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise AuditError(f"{path}: cannot read it: {exc.strerror or exc}") from exc
        if is_document(data):
            yield rel, data


#: At most this many pages are remembered by a memo (`Auditor.read`); then it starts again.
MEMO_PAGES = 20_000


@dataclass(frozen=True)
class Audited:
    """One page audited: its result (its own rules' findings), what site-wide rules keep of it, and its
    facts (None when read back from a build's memo, which keeps no text: `perfblog.seo.memo`)."""

    result: PageResult
    entry: tuple[Any, frozenset[str]]  # sitewide.SiteIndex.entry
    linked: links.Linked
    facts: PageFacts | None = None

    @classmethod
    def of(cls, facts: PageFacts) -> Audited:
        result = PageResult(
            facts.page, facts.title, facts.description, facts.canonical, facts.noindex, facts.is_post,
            facts.words, list(page_findings(facts)), list(facts.hreflang), facts.lang,
        )  # fmt: skip
        return cls(result, sitewide.SiteIndex.entry(facts), links.Linked.of(facts), facts)


def audit_page(html: bytes, page: str) -> Audited:
    """One page audited, without its facts: what a worker process sends back (`Auditor.read`)."""
    return replace(Audited.of(read_page(html, page)), facts=None)


def page_key(html: bytes, page: str) -> bytes:
    """What a memo knows an audited page by: its bytes and its path."""
    return hashlib.blake2b(html + b"\0" + page.encode(), digest_size=20).digest()


class Auditor:
    """Audits pages as they come, then the site: a page's own rules run when it is added and only what
    the site-wide rules compare is kept, so memory does not grow with the text of the site.

    The build adds each page as it renders it (its HTML parsed once); `audit_site` adds the files.
    """

    def __init__(self, site_dir: Path, memo: dict[bytes, Audited] | None = None, *,
                 memo_facts: bool = True, workers: Workers | None = None) -> None:
        """`memo_facts`: the memo keeps each page's facts too (`serve`'s panel shows them); a build's
        memo, kept on disk, does not (nor, then, does the build keep every page's text in memory).
        `workers`: pages not in the memo are audited in them, and `read` gives no facts."""
        self.site_dir = site_dir
        self._workers = workers if not memo_facts else None  # a page's facts stay in the process reading it
        self._auditing: dict[str, tuple[bytes, Task[Audited]]] = {}  # page -> its memo key, its audit
        self._results: dict[str, PageResult] = {}
        self._linked: list[links.Linked] = []
        self._index = sitewide.SiteIndex(site_dir)
        self._memo = memo
        self._memo_facts = memo_facts
        self._graph: dict[frozenset[str], list[Finding]] = {}
        #: The memo's keys of the pages this audit saw: what a build's memo keeps for the next.
        self.keys: list[bytes] = []

    def read(self, html: bytes, page: str) -> PageFacts | None:
        """Audit one page from its HTML; its facts (None when the memo knew the page and kept no text).
        With a memo (`serve`'s, which rebuilds the whole site after each edit, or a build's, read from
        the last build) a page whose HTML and path were audited before is not parsed again."""
        key = page_key(html, page)
        audited = self._memo.get(key) if self._memo is not None else None
        if audited is None and self._workers is not None:
            self._auditing[page] = (key, self._workers.run(audit_page, html, page))
            self._settle(ready_only=True)  # each page's HTML is let go as soon as its audit is back
            return None
        if audited is None:
            audited = Audited.of(read_page(html, page))
            self._remember(key, audited)
        self.keys.append(key)
        self._keep(audited)
        return audited.facts

    def _remember(self, key: bytes, audited: Audited) -> None:
        if self._memo is not None:
            if len(self._memo) > MEMO_PAGES:
                self._memo.clear()
            self._memo[key] = audited if self._memo_facts else replace(audited, facts=None)

    def _settle(self, *, ready_only: bool = False) -> None:
        """Keep what the workers found of the pages handed to them, in the order they were (`ready_only`:
        up to the first the workers are not done with, without waiting)."""
        while self._auditing:
            page, (key, task) = next(iter(self._auditing.items()))
            if ready_only and not task.ready:
                break
            audited = task.result()
            self._remember(key, audited)
            self.keys.append(key)
            self._keep(audited)
            del self._auditing[page]

    def __contains__(self, page: str) -> bool:
        return page in self._results or page in self._auditing

    def add(self, facts: PageFacts) -> PageResult:
        """Audit one page; its findings so far (the site-wide ones are added by `finish`)."""
        return self._keep(Audited.of(facts))

    def _keep(self, audited: Audited) -> PageResult:
        self._index.add_entry(audited.entry)
        self._linked.append(audited.linked)
        kept = audited.result  # a memo's: `finish` adds to the copy's findings, never to the memo's
        result = replace(kept, findings=list(kept.findings), hreflang=list(kept.hreflang))
        self._results[result.page] = result
        return result

    def add_files(self) -> None:
        """Audit the documents under the site folder that were not added yet (404.html, copied pages)."""
        if not self.site_dir.is_dir():
            raise AuditError(f"{self.site_dir}: not a folder of built HTML")
        for rel, html in iter_pages(self.site_dir, skip=self):
            self.read(html, rel)

    @property
    def linked(self) -> list[links.Linked]:
        """Every page added, as the link graph sees it."""
        self._settle()
        return sorted(self._linked, key=lambda p: page_order(p.page))

    def link_findings(self, published: frozenset[str] = frozenset()) -> list[Finding]:
        """The link graph's findings (`links.findings`), worked out once for each `published`."""
        if published not in self._graph:
            self._graph[published] = list(links.findings(self.linked, published))
        return self._graph[published]

    @collector_paused()
    def finish(self) -> AuditReport:
        """The report: every page's findings, then the rules that compare pages, robots.txt and sitemaps."""
        self._settle()
        site_dir = self.site_dir
        robots = robots_txt.read(site_dir)
        results = {page: self._results[page] for page in sorted(self._results, key=page_order)}
        if robots:
            for result in results.values():
                if not result.noindex:
                    result.findings.extend(_robots_findings(result, robots))
        for finding in self.link_findings():
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
        self._index.sort(page_order)
        for finding in self._index.findings(sorted(listed), declared):
            if finding.page in results:
                results[finding.page].findings.append(finding)
            else:
                report.site_findings.append(finding)
        if robots:
            invalid = rules.ROBOTS_TXT_INVALID
            report.site_findings.extend(invalid.at("robots.txt", line, f"robots.txt 有误：{line}")
                                        for line in robots.errors)
        return report


def audit_site(site_dir: Path) -> AuditReport:
    """Audit every page under `site_dir`."""
    auditor = Auditor(site_dir)
    auditor.add_files()
    return auditor.finish()


def _robots_findings(facts: PageResult, robots: robots_txt.Robots) -> Iterable[Finding]:
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
