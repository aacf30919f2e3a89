"""The audit's rules: stable ids, thresholds, and the checks on what a page says about itself.

A rule is a function of one page's facts (`PageFacts`, read by `audit.py`) that yields findings.
Structural rules apply to every indexable page; content rules (keywords, links, length) only to posts,
i.e. pages that declare themselves articles (og:type article or a JSON-LD BlogPosting), so an index
or archive page is never asked for a keyphrase.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import urlsplit

from perfblog.core.conventions import PLACEHOLDER
from perfblog.core.slug import slugify
from perfblog.seo import text

ERROR, WARNING, INFO = "error", "warning", "info"

# Thresholds. Lengths are display widths: a CJK character counts 2, a Latin letter 1.
TITLE_MAX_WIDTH = 60  # Google truncates at ~600 px, about 60 Latin letters or 30 汉字
DESCRIPTION_MIN_WIDTH = 60  # about 30 汉字: shorter snippets get rewritten by the engine
DESCRIPTION_MAX_WIDTH = 160  # about 80 汉字: Baidu and Google cut the snippet around here
DENSITY_LOW = 0.5  # percent; Yoast's green band is 0.5-3 %
DENSITY_HIGH = 3.0  # above: warning
DENSITY_STUFFED = 4.0  # above: error (keyword stuffing, Baidu 清风)
DENSITY_MIN_WORDS = 100  # density is meaningless on shorter texts (content-too-thin covers them)
KEYWORDS_MAX = 5  # more meta keywords than this reads as stuffing
CONTENT_MIN_WORDS = 300  # rjieba words outside code, about 600 汉字
GENERIC_LINK_TEXT = frozenset(
    {
        "点击这里", "点击此处", "点这里", "这里", "此处", "更多", "阅读更多", "查看更多", "了解更多", "详情",
        "查看详情", "链接", "click here", "click this", "go", "here", "this", "start", "right here",
        "more", "more info", "more information", "learn more", "read more", "see more", "information",
    }
)  # fmt: skip
CRAWLERS = ("*", "googlebot", "baiduspider", "bingbot")
_BLOCKING = re.compile(r"\b(noindex|none)\b")


@dataclass(frozen=True)
class Finding:
    """One problem on one page; `page` is relative to the audited folder, with `/` separators."""

    page: str
    rule: str
    severity: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"page": self.page, "rule": self.rule, "severity": self.severity, "message": self.message}


@dataclass
class PageFacts:
    """What `audit.read_page` extracts from one HTML file; None means the element is absent."""

    page: str
    lang: str | None = None
    title: str | None = None
    description: str | None = None
    keywords: list[str] | None = None
    canonical: str | None = None
    robots: str = ""
    bot_robots: dict[str, str] = field(default_factory=dict)  # lower-case bot name -> content
    og: dict[str, str] = field(default_factory=dict)
    jsonld: list[str] = field(default_factory=list)
    h1: list[str] = field(default_factory=list)
    h2: list[str] = field(default_factory=list)
    images: list[tuple[str, str | None]] = field(default_factory=list)  # (src, alt)
    anchors: list[tuple[str | None, str]] = field(default_factory=list)  # every <a href>: (href, text)
    content_links: list[str] = field(default_factory=list)  # hrefs inside the article body
    body: str = ""  # article text, code and navigation removed
    intro: str = ""  # first paragraph of the article
    words: int = 0

    @cached_property
    def body_normalized(self) -> str:
        """The body, NFKC + casefold, computed once: every keyword check searches it."""
        return text.normalize(self.body)

    @property
    def noindex(self) -> bool:
        return bool(_BLOCKING.search(self.robots)) or self.page.rsplit("/", 1)[-1] == "404.html"

    @property
    def is_post(self) -> bool:
        if self.og.get("og:type", "").strip().lower() == "article":
            return True
        return any('"BlogPosting"' in block or '"Article"' in block for block in self.jsonld)

    @property
    def keyphrase(self) -> str | None:
        return self.keywords[0] if self.keywords else None

    @property
    def slug(self) -> str:
        path = urlsplit(self.canonical).path if self.canonical else self.page
        parts = [p for p in path.split("/") if p and p != "index.html"]
        return parts[-1].removesuffix(".html") if parts else ""


Rule = Callable[[PageFacts], Iterator[Finding]]


def _f(page: PageFacts, rule: str, severity: str, message: str) -> Finding:
    return Finding(page.page, rule, severity, message)


def check_title(p: PageFacts) -> Iterator[Finding]:
    if not p.title:
        yield _f(p, "title-missing", ERROR, "no <title>, or it is empty")
    elif (w := text.display_width(p.title)) > TITLE_MAX_WIDTH:
        yield _f(
            p, "title-too-long", WARNING, f"title is {w} units wide (> {TITLE_MAX_WIDTH}); engines cut it"
        )


def check_description(p: PageFacts) -> Iterator[Finding]:
    if not p.description:
        yield _f(p, "description-missing", ERROR, 'no <meta name="description">, or it is empty')
        return
    width = text.display_width(p.description)
    if width < DESCRIPTION_MIN_WIDTH:
        yield _f(
            p, "description-too-short", WARNING, f"description is {width} units (< {DESCRIPTION_MIN_WIDTH})"
        )
    elif width > DESCRIPTION_MAX_WIDTH:
        yield _f(
            p, "description-too-long", WARNING, f"description is {width} units (> {DESCRIPTION_MAX_WIDTH})"
        )


def check_canonical(p: PageFacts) -> Iterator[Finding]:
    if p.canonical is None:
        yield _f(p, "canonical-missing", WARNING, 'no <link rel="canonical">')
        return
    parts = urlsplit(p.canonical)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        yield _f(
            p, "canonical-not-absolute", ERROR, f"canonical {p.canonical!r} is not an absolute http(s) URL"
        )


def check_lang(p: PageFacts) -> Iterator[Finding]:
    if not p.lang:
        yield _f(p, "lang-missing", ERROR, "<html> has no lang attribute (use zh-CN for Chinese pages)")


def check_headings(p: PageFacts) -> Iterator[Finding]:
    if not p.h1:
        yield _f(p, "h1-missing", WARNING, "no <h1>")
    elif len(p.h1) > 1:
        yield _f(p, "h1-multiple", WARNING, f"{len(p.h1)} <h1> elements; use one")


def check_images(p: PageFacts) -> Iterator[Finding]:
    for src, alt in p.images:
        if alt is None:
            yield _f(p, "image-alt-missing", ERROR, f"<img src={src!r}> has no alt attribute")


def check_anchors(p: PageFacts) -> Iterator[Finding]:
    for href, label in p.anchors:
        target = (href or "").strip()
        if not target or target.lower().startswith(("javascript:", "file:")):
            yield _f(
                p,
                "link-empty-href",
                ERROR,
                f"link {label[:40]!r} has href {href!r}, which crawlers cannot follow",
            )
        elif text.normalize(label).strip(" .:：。!！>»→") in GENERIC_LINK_TEXT:
            yield _f(
                p, "link-text-generic", WARNING, f"link text {label!r} says nothing about {target[:60]!r}"
            )


def check_open_graph(p: PageFacts) -> Iterator[Finding]:
    missing = [k for k in ("og:title", "og:description", "og:type", "og:url") if not p.og.get(k)]
    if missing:
        yield _f(p, "og-missing", WARNING, f"missing Open Graph tags: {', '.join(missing)}")


def check_jsonld(p: PageFacts) -> Iterator[Finding]:
    for block in p.jsonld:
        try:
            data = json.loads(block)
        except ValueError as exc:
            yield _f(p, "jsonld-invalid", ERROR, f"JSON-LD does not parse: {exc}")
            continue
        items = data if isinstance(data, list) else [data]
        for item in items:
            if not isinstance(item, dict) or "@type" not in item:
                yield _f(p, "jsonld-invalid", ERROR, "JSON-LD item has no @type")
                continue
            if not isinstance(data, list) and "@context" not in item:
                yield _f(p, "jsonld-invalid", ERROR, "JSON-LD has no @context")
            if item["@type"] in ("BlogPosting", "Article"):
                missing = [k for k in ("headline", "datePublished", "author") if not item.get(k)]
                if missing:
                    yield _f(p, "jsonld-invalid", ERROR, f"{item['@type']} lacks {', '.join(missing)}")


def check_bot_meta(p: PageFacts) -> Iterator[Finding]:
    for bot, content in sorted(p.bot_robots.items()):
        if _BLOCKING.search(content):
            yield _f(
                p, "robots-blocks-crawler", ERROR, f'<meta name="{bot}" content="{content}"> keeps it out'
            )


def check_keywords(p: PageFacts) -> Iterator[Finding]:
    """Density and placement of the focus keyphrase (the first meta keyword), and keyword stuffing."""
    phrase = p.keyphrase
    if not phrase:
        return
    terms = [text.normalize(k) for k in p.keywords or []]
    if len(terms) > KEYWORDS_MAX:
        yield _f(p, "keywords-meta-stuffed", WARNING, f"{len(terms)} meta keywords (> {KEYWORDS_MAX})")
    if len(set(terms)) < len(terms):
        yield _f(p, "keywords-meta-stuffed", WARNING, "meta keywords repeat a term")
    absent = [
        k for k in p.keywords or [] if not text.count_occurrences(p.body_normalized, k, normalized=True)
    ]
    if absent:
        yield _f(p, "keywords-meta-stuffed", WARNING, f"meta keywords not in the text: {', '.join(absent)}")
    if p.words >= DENSITY_MIN_WORDS:
        hits = text.count_occurrences(p.body_normalized, phrase, normalized=True)
        density = 100.0 * hits / p.words
        detail = f"{phrase!r} {hits}× in {p.words} words = {density:.2f}%"
        if density < DENSITY_LOW:
            yield _f(p, "keyword-density-low", WARNING, f"{detail} (< {DENSITY_LOW}%)")
        elif density > DENSITY_STUFFED:
            yield _f(p, "keyword-density-high", ERROR, f"{detail} (> {DENSITY_STUFFED}%: stuffing)")
        elif density > DENSITY_HIGH:
            yield _f(p, "keyword-density-high", WARNING, f"{detail} (> {DENSITY_HIGH}%)")
    if not text.contains(p.title or "", phrase):
        yield _f(p, "keyword-missing-title", WARNING, f"{phrase!r} is not in the title")
    if not text.contains(p.description or "", phrase):
        yield _f(p, "keyword-missing-description", WARNING, f"{phrase!r} is not in the description")
    if not text.contains(p.intro, phrase):
        yield _f(p, "keyword-missing-intro", WARNING, f"{phrase!r} is not in the first paragraph")
    if not any(text.contains(h, phrase) for h in p.h2):
        yield _f(p, "keyword-missing-h2", INFO, f"{phrase!r} is in no <h2>")
    spelt = slugify(phrase, max_length=None)
    if not _in_slug(spelt, p.slug):
        yield _f(
            p,
            "keyword-missing-slug",
            INFO,
            f"{phrase!r} (as a slug: {spelt!r}) is not in the slug {p.slug!r}",
        )
    if p.images and not any(alt and text.contains(alt, phrase) for _, alt in p.images):
        yield _f(p, "keyword-missing-alt", INFO, f"{phrase!r} is in no image's alt text")


def _in_slug(spelt: str, slug: str) -> bool:
    """Whether the keyphrase, spelt as `seo.slug` spells it (重编译 -> chong-bian-yi), is in the slug.

    Letters only are compared (tu-duan-lie, torch-compile), so a slug made with another separator
    still matches; spelling with the slug module's own reading keeps the audit from asking for a
    spelling the site would never produce.
    """
    letters = re.sub(r"[^a-z0-9]", "", spelt)
    return bool(letters) and letters in re.sub(r"[^a-z0-9]", "", slug.lower())


def check_links(p: PageFacts) -> Iterator[Finding]:
    """A post links to at least one other page of the site and one page elsewhere."""
    host = urlsplit(p.canonical).netloc if p.canonical else ""
    internal = outbound = 0
    for href in p.content_links:
        parts = urlsplit(href)
        if parts.scheme in ("mailto", "tel", "javascript"):
            continue
        if parts.netloc and parts.netloc != host:
            outbound += 1
        elif parts.path:  # same host or relative, and not only a #fragment
            internal += 1
    if not internal:
        yield _f(p, "internal-links-none", WARNING, "the article links to no other page of the site")
    if not outbound:
        yield _f(p, "outbound-links-none", INFO, "the article cites no page on another site")


def check_length(p: PageFacts) -> Iterator[Finding]:
    if p.words < CONTENT_MIN_WORDS:
        yield _f(p, "content-too-thin", WARNING, f"{p.words} words outside code (< {CONTENT_MIN_WORDS})")


def check_placeholders(p: PageFacts) -> Iterator[Finding]:
    """What `blog new` writes for the author to fill in must never be published."""
    fields = {"title": [p.title or ""], "description": [p.description or ""], "keywords": p.keywords or []}
    for name, values in fields.items():
        if any(PLACEHOLDER in value for value in values):
            message = f"the {name} still holds the placeholder {PLACEHOLDER!r}"
            yield _f(p, "placeholder-unfilled", ERROR, message)


ALWAYS: tuple[Rule, ...] = (check_title, check_lang, check_images, check_anchors, check_jsonld)
INDEXABLE: tuple[Rule, ...] = (
    check_placeholders,
    check_description,
    check_canonical,
    check_headings,
    check_open_graph,
    check_bot_meta,
)
POSTS: tuple[Rule, ...] = (check_keywords, check_links, check_length)


def page_findings(p: PageFacts) -> Iterator[Finding]:
    """Every rule that applies to this kind of page: noindex pages get only ALWAYS, posts get all."""
    rules = ALWAYS if p.noindex else ALWAYS + INDEXABLE + (POSTS if p.is_post else ())
    for rule in rules:
        yield from rule(p)
