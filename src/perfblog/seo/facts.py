"""One built page's facts: what the audit's rules check (`PageFacts`), read from its HTML once (`read_page`).

Works on any static site, not only ours: it reads HTML, not MkDocs objects. The page is parsed once and
dropped; the facts keep only text and attribute values (no element, so no tree stays alive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import urlsplit

from lxml import etree

from perfblog.core import urls
from perfblog.core.trees import drop_tree
from perfblog.seo import text
from perfblog.seo.errors import AuditError

_NOINDEX = re.compile(r"\b(noindex|none)\b")
_SPACE = re.compile(r"\s+")


def says_noindex(robots: str) -> bool:
    """Whether a robots meta's content (lower case) keeps the page out of the index."""
    return bool(_NOINDEX.search(robots))


@dataclass
class PageFacts:
    """What `read_page` extracts from one HTML file; None means the element is absent."""

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
    hreflang: list[tuple[str, str]] = field(default_factory=list)  # (tag, href) of each hreflang link
    blocking: list[str] = field(default_factory=list)  # URLs of render-blocking head stylesheets and scripts
    unsized_images: list[str] = field(default_factory=list)  # srcs of images without width and height
    headings: list[tuple[int, str]] = field(default_factory=list)  # (level, text) in the content, in order
    fragments: list[str] = field(default_factory=list)  # "#…" links inside the content
    ids: frozenset[str] = frozenset()  # every id (and <a name>) a link's #fragment may target
    resources: list[str] = field(default_factory=list)  # stylesheets, scripts and images it loads
    size: int = 0  # bytes of HTML
    elements: int = 0  # elements in the DOM
    anchors: list[tuple[str | None, str]] = field(default_factory=list)  # every <a href>: (href, text)
    content_links: list[str] = field(default_factory=list)  # hrefs inside the article body
    authored_links: list[str] = field(default_factory=list)  # content_links minus list entries (excerpts)
    unparsable: list[tuple[str, str]] = field(default_factory=list)  # (where, URL) urllib cannot split
    body: str = ""  # article text, code and navigation removed
    intro: str = ""  # the opening: the first paragraph, and more up to a tenth of the paragraphs' text
    tokens: text.Tokens | None = None  # the body segmented (posts only: segmenting is the costly part)

    @property
    def words(self) -> int:
        return self.tokens.words if self.tokens else 0

    @cached_property
    def keyphrase_hits(self) -> list[int]:
        """Where the keyphrase occurs in the body (offsets into `tokens.text`), as whole tokens."""
        if not self.keyphrase or self.tokens is None:
            return []
        return self.tokens.find(text.default_segmenter().needle(self.keyphrase))

    def mentions(self, where: str | None) -> bool:
        """Whether `where` (the title, the description, a heading…) holds the keyphrase as whole tokens."""
        return bool(self.keyphrase and where) and text.default_segmenter().count(where, self.keyphrase) > 0

    @cached_property
    def body_normalized(self) -> str:
        """The body, NFKC + casefold, computed once: every keyword check searches it."""
        return text.normalize(self.body)

    @property
    def prose_chars(self) -> int:
        """Characters of the page's text outside its headings, spaces not counted."""
        return len(_SPACE.sub("", self.body)) - sum(len(_SPACE.sub("", label)) for _, label in self.headings)

    @property
    def noindex(self) -> bool:
        return says_noindex(self.robots) or self.page.rsplit("/", 1)[-1] == "404.html"

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


_CONTENT_ROOTS = (
    etree.XPath(
        "//div[contains(@class, 'md-content') and contains(concat(' ', @class, ' '), ' md-content ')]"
    ),
    etree.XPath("//main"),
    etree.XPath("//article"),
    etree.XPath("//body"),
)
# Not the article's text: navigation, chrome and code blocks (`_not_text`). Material's page intro is a
# <header class="md-typeset"> outside any article, and inline <code> is prose (`torch.compile`).
_NOT_TEXT = ("nav", "header", "footer", "aside", "script", "style", "noscript", "template", "pre", "form",
             "svg")
# Permalink marks a heading carries (Python-Markdown's ¶, or any symbol-only link to its own anchor).
_PERMALINKS = etree.XPath(
    "//*[contains(concat(' ', @class, ' '), ' headerlink ')]"
    " | //*[self::h1 or self::h2 or self::h3 or self::h4 or self::h5 or self::h6]/a[starts-with(@href, '#')]"
)
_WORDLIKE = re.compile(r"\w")
# XPaths that return strings are made with smart_strings=False: lxml's "smart" strings keep a reference
# to their element, and so the whole parsed page alive for as long as the audit keeps the string.
# These four and _HREFLANG, _BLOCKING are asked of the <head> element.
_META = etree.XPath("meta[@name or @property]")
_TITLE = etree.XPath("title")
_CANONICAL = etree.XPath("link[@rel='canonical']/@href", smart_strings=False)
_JSONLD = etree.XPath("//script[@type='application/ld+json']")
_H1 = etree.XPath("//body//h1")
_IMAGES = etree.XPath("//body//img")
_IDS = etree.XPath("//@id | //a/@name", smart_strings=False)
_ELEMENTS = etree.XPath("count(//*)")
_RESOURCES = etree.XPath("//link[@rel='stylesheet']/@href | //script/@src | //img/@src", smart_strings=False)
_HEADINGS = etree.XPath(".//*[self::h1 or self::h2 or self::h3 or self::h4 or self::h5 or self::h6]")
_SIZED = re.compile(r"\bwidth\s*:.*\bheight\s*:|\bheight\s*:.*\bwidth\s*:", re.IGNORECASE | re.DOTALL)
_ANCHORS = etree.XPath("//body//a[@href]")
_CONTENT_HREFS = etree.XPath(".//a/@href", smart_strings=False)
#: Links in the text, less those in list entries (Material's post excerpts on index, archive, category).
_AUTHORED_HREFS = etree.XPath(
    ".//a[not(ancestor::*[contains(concat(' ', @class, ' '), ' md-post--excerpt ')])]/@href",
    smart_strings=False,
)
_H2 = etree.XPath(".//h2")
_HREFLANG = etree.XPath("link[@hreflang][translate(@rel, 'ALTERNATE', 'alternate')='alternate']")
# What holds the first paint: stylesheets (unless for print) and scripts without async, defer or module.
_BLOCKING = etree.XPath(
    "link[contains(concat(' ', translate(@rel, 'STYLESHEET', 'stylesheet'), ' '), ' stylesheet ')]"
    "[@href][not(@disabled)][not(@media='print')]/@href"
    " | script[@src][not(@async)][not(@defer)][not(@type='module')]/@src",
    smart_strings=False,
)
_PARAGRAPHS = etree.XPath(".//p")


#: An element's text (lxml.html's `text_content`), as a plain string: see _CANONICAL.
_STRING = etree.XPath("string()", smart_strings=False)
#: lxml.html's parser without its element classes: the same tree, without a Python call per element.
_PARSER = etree.HTMLParser()


def _text(element: etree._Element) -> str:
    return " ".join(_STRING(element).split())


def _not_text(root: etree._Element) -> list[etree._Element]:
    """The elements under `root` whose text is not the article's, in document order."""
    return [element for element in root.iter(*_NOT_TEXT) if element is not root and (
        element.tag != "header" or (next(element.iterancestors("article"), None) is None
                                    and " md-typeset " not in f" {element.get('class', '')} "))]


def _decoded(html: bytes) -> str | bytes:
    """UTF-8 text when the bytes are UTF-8 (lxml would guess Latin-1 for a page without a charset);
    otherwise the bytes, for lxml to decode by the page's own declaration."""
    try:
        text = html.decode("utf-8")
    except UnicodeDecodeError:
        return html
    return html if text.lstrip().startswith("<?xml") else text  # lxml refuses str with a declaration


def read_page(html: bytes, page: str) -> PageFacts:
    """Extract what the rules need from one page's HTML; `page` is its path relative to the site.

    The page is parsed once (lxml), swept once for the elements the facts come from (`_Parts`),
    and its head and text searched by XPath; Python sees of the navigation Material repeats on
    every page only its links (their `href` and text).
    """
    try:
        doc = etree.fromstring(_decoded(html), _PARSER)
        if doc is None:
            raise etree.ParserError("Document is empty")
    except (etree.ParserError, ValueError) as exc:
        raise AuditError(f"{page}: cannot parse HTML: {exc}") from exc
    facts = PageFacts(page=page, lang=(doc.get("lang") or "").strip() or None, size=len(html))
    facts.elements = int(_ELEMENTS(doc))  # the DOM as served, nothing dropped yet
    facts.ids = frozenset(_IDS(doc))
    parts = _Parts.of(doc)
    facts.resources = parts.resources
    facts.jsonld = [s.text or "" for s in parts.jsonld]
    head = parts.head
    titles = _TITLE(head) if head is not None else []
    facts.title = _text(titles[0]) if titles else None
    for meta in _META(head) if head is not None else ():
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
    canonical = _CANONICAL(head) if head is not None else []
    facts.canonical = canonical[0].strip() if canonical else None
    dropped: set[etree._Element] = set()
    for mark in parts.permalinks:
        if mark.getparent() is not None and not _WORDLIKE.search(_STRING(mark)):
            dropped.update(mark.iter())
            drop_tree(mark)
    kept = (lambda found: [e for e in found if e not in dropped]) if dropped else list  # as if found now
    facts.h1 = [_text(h) for h in kept(parts.h1)]
    images = kept(parts.images)
    facts.images = [(img.get("src", ""), img.get("alt")) for img in images]
    if head is not None:
        facts.hreflang = [(x.get("hreflang", "").strip(), x.get("href", "").strip()) for x in _HREFLANG(head)]
        facts.blocking = [str(url).strip() for url in _BLOCKING(head)]
    facts.unsized_images = [img.get("src", "") for img in images if not _sized(img)]
    facts.anchors = [(a.get("href"), _text(a)) for a in kept(parts.anchors)]
    root = next((found[0] for xp in parts.roots if (found := xp(doc))), doc)  # bodiless: the page
    for element in _not_text(root):
        if element.getparent() is not None:
            drop_tree(element)
    hrefs = _CONTENT_HREFS(root)
    facts.content_links = [h for h in hrefs if not h.startswith("#")]
    facts.fragments = [h for h in hrefs if h.startswith("#")]
    facts.authored_links = [h for h in _AUTHORED_HREFS(root) if not h.startswith("#")]
    facts.headings = [(int(h.tag[1]), _text(h)) for h in _HEADINGS(root)]
    facts.h2 = [_text(h) for h in _H2(root)]
    facts.intro = _opening([t for p in _PARAGRAPHS(root) if (t := _text(p))])
    facts.body = _text(root)
    _screen_urls(facts)
    if facts.is_post:  # segmentation is the costly part; only posts need it
        facts.tokens = text.default_segmenter().tokens(facts.body_normalized, normalized=True)
    return facts


def _screen_urls(facts: PageFacts) -> None:
    """URLs urllib cannot split (`http://[::1`, an unclosed IPv6 bracket) leave the facts the rules and
    the site-wide checks split; ``facts.unparsable`` keeps the canonical and hreflang ones for the
    findings that name them (a link's is found among the anchors; a resource's is dropped)."""
    if facts.canonical is not None and not urls.parses(facts.canonical):
        facts.unparsable.append(("canonical", facts.canonical))
        facts.canonical = None
    if not urls.parses(facts.og.get("og:url", "")):
        facts.unparsable.append(("og:url", facts.og.pop("og:url")))
    if not all(urls.parses(href) for _, href in facts.hreflang):
        facts.unparsable.extend(("hreflang", href) for _, href in facts.hreflang if not urls.parses(href))
        facts.hreflang = [(tag, href) for tag, href in facts.hreflang if urls.parses(href)]
    for name in ("blocking", "resources", "content_links", "authored_links", "fragments"):
        found = getattr(facts, name)
        if not all(map(urls.parses, found)):
            setattr(facts, name, [url for url in found if urls.parses(url)])
    facts.images = [(src, alt) for src, alt in facts.images if urls.parses(src)]
    facts.unsized_images = [src for src in facts.unsized_images if urls.parses(src)]


@dataclass
class _Parts:
    """The elements of a page the facts come from. A page shaped as parsers shape HTML (a root `html`
    holding `head` and `body`) is swept once, element by element (`_Parts.swept`: one pass in Python
    costs less than eight XPath searches of the whole page, each testing every element); any other
    is asked the XPath queries over the whole document (`_Parts.slowly`). Both find the same."""

    head: etree._Element | None
    resources: list[str]  # stylesheets' href, scripts' and images' src, in document order
    jsonld: list[etree._Element]
    permalinks: list[etree._Element]
    h1: list[etree._Element]  # in the body, and so are the next three
    images: list[etree._Element]
    anchors: list[etree._Element]
    roots: tuple[etree.XPath, ...]  # where the text may be: Material's md-content, else main, article, body

    @classmethod
    def of(cls, doc: etree._Element) -> _Parts:
        if doc.tag != "html" or any(child.tag not in _PARTS_OF_HTML for child in doc):
            return cls.slowly(doc)
        return cls.swept(doc)

    @classmethod
    def swept(cls, doc: etree._Element) -> _Parts:
        """What the XPath queries of `slowly` find, in one pass over a page of `head` and `body`."""
        parts = cls(doc.find("head"), [], [], [], [], [], [], _FAST_ROOTS)
        resources, permalinks = parts.resources, parts.permalinks
        for part in doc.iterchildren("head", "body"):
            body = part.tag == "body"
            for element in part.iter(etree.Element):
                tag, classes = element.tag, element.get("class")
                if classes is not None and "headerlink" in classes and " headerlink " in f" {classes} ":
                    permalinks.append(element)
                if tag == "a":
                    href = element.get("href")
                    if href is None:
                        continue
                    if href.startswith("#") and element.getparent().tag in _HEADINGS_TAGS and (
                            not permalinks or permalinks[-1] is not element):
                        permalinks.append(element)
                    if body:
                        parts.anchors.append(element)
                elif tag == "script":
                    if (src := element.get("src")) is not None:
                        resources.append(src)
                    if element.get("type") == "application/ld+json":
                        parts.jsonld.append(element)
                elif tag == "link":
                    if element.get("rel") == "stylesheet" and (href := element.get("href")) is not None:
                        resources.append(href)
                elif tag == "img":
                    if (src := element.get("src")) is not None:
                        resources.append(src)
                    if body:
                        parts.images.append(element)
                elif tag == "h1" and body:
                    parts.h1.append(element)
        return parts

    @classmethod
    def slowly(cls, doc: etree._Element) -> _Parts:
        heads = doc.xpath("//head")
        return cls(heads[0] if heads else None, _RESOURCES(doc), _JSONLD(doc), _PERMALINKS(doc), _H1(doc),
                   _IMAGES(doc), _ANCHORS(doc), _CONTENT_ROOTS)  # fmt: skip


_PARTS_OF_HTML = {"head", "body", etree.Comment, etree.ProcessingInstruction}
_HEADINGS_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# The same as _CONTENT_ROOTS, with the cheap test first: most elements fail it.
_FAST_ROOTS = (
    etree.XPath(
        "/html/body//div[contains(@class, 'md-content')][contains(concat(' ', @class, ' '), ' md-content ')]"
    ),
    etree.XPath("/html/body//main"),
    etree.XPath("/html/body//article"),
    etree.XPath("/html/body"),
)


#: Material's components whose image its stylesheet gives a box (an author's avatar in `.md-author`, the
#: logo in `.md-logo`): no layout shift, and no attribute the author of a page could add.
_THEME_SIZED = frozenset({"md-author", "md-logo"})


def _sized(img: etree._Element) -> bool:
    """Whether the browser knows an image's box before it loads (no layout shift): width and height
    attributes, both in its inline style, or a theme component that sizes it."""
    if (img.get("width") and img.get("height")) or _SIZED.search(img.get("style") or ""):
        return True
    parent = img.getparent()
    return parent is not None and not _THEME_SIZED.isdisjoint((parent.get("class") or "").split())


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

