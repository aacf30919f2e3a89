"""The audit's rules: thresholds, the registry of every rule (`RULES`), and the per-page checks.

Each rule is declared once below (id, severity, scope, panel topic, doc, fix); docs/seo-rules.md is
generated from these declarations. A check is a function of one page's facts (`PageFacts`, read by
`audit.py`) registered with the rules it reports, and it runs on the pages their scope covers:
structural rules on every (indexable) page, content rules (keywords, links, length) only on posts, so
an index or archive page is never asked for a keyphrase. Rules that compare pages with each other or
with robots.txt and sitemap.xml are checked by `audit.py`, through the same declarations.

Adding a rule: declare it here, write its check (here, or site-wide in `audit.py`), add its broken
page to tests/seo_pages.py, and regenerate the docs (`blog seo rules > docs/seo-rules.md`).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from urllib.parse import urljoin, urlsplit

from perfblog.core import urls as url_syntax
from perfblog.core.conventions import PLACEHOLDERS
from perfblog.core.slug import slugify
from perfblog.seo import text
from perfblog.seo.registry import Finding, Registry, Scope, Severity, Topic

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

# Thresholds. Lengths are display widths: a CJK character counts 2, a Latin letter 1.
TITLE_MAX_WIDTH = 60  # Google truncates at ~600 px, about 60 Latin letters or 30 汉字
DESCRIPTION_MIN_WIDTH = 60  # about 30 汉字: shorter snippets get rewritten by the engine
DESCRIPTION_MAX_WIDTH = 160  # about 80 汉字: Baidu and Google cut the snippet around here
# Keyword thresholds, calibrated on 249 real Chinese pages (tests/corpus, docs/seo-corpus.md).
DENSITY_LOW = 0.5  # percent of the words; below: information (Yoast's green band starts here)
DENSITY_HIGH = 8.0  # above: warning. Honest pages reach 9.5 % (数组 on a page about arrays); the
# corpus's 98th percentile is 7.3 %, and 8 % is the top of the range Chinese SEO guides quote (2-8 %)
DENSITY_MIN_WORDS = 100  # density is meaningless on shorter texts (content-too-thin covers them)
# Keyword stuffing is an error only on clear evidence, never on density alone: the same clause with
# the keyphrase STUFFING_REPEATS times or more (the corpus's most is 3), or STUFFING_BURST of the
# keyphrase within STUFFING_WINDOW words (40 %; the corpus's densest passage has 10, 20 %).
STUFFING_REPEATS = 5
STUFFING_WINDOW = 50
STUFFING_BURST = 20
KEYWORDS_MAX = 5  # more meta keywords than this reads as stuffing
CONTENT_MIN_WORDS = 300  # rjieba words outside code, about 600 汉字
INTERNAL_LINKS_MIN = 2  # other pages of the site a post's own text links to; fewer reads as a dead end
LINK_DEPTH_MAX = 3  # clicks from the home page; deeper pages are crawled late or not at all
PAGE_MIN_CHARS = 150  # characters of text outside headings, code and navigation, on any other page
DOM_MAX_ELEMENTS = 5000  # Lighthouse's dom-size is happier under 1400; Material with a 250-page navigation
# is at 1700 (the corpus's median) and 4100 (its 95th percentile); highlighted code adds a span a token
PAGE_MAX_BYTES = 1_600_000  # HTML + the local CSS, JS and images it loads, as stored: the mobile
# budget performance guides use (Lighthouse fails pages over 5 MB transferred)
TITLE_H1_MIN_SHARED = 0.5  # share of the H1's words the title must hold when neither contains the other
GENERIC_LINK_TEXT = frozenset(
    {
        "点击这里", "点击此处", "点这里", "这里", "此处", "更多", "阅读更多", "查看更多", "了解更多", "详情",
        "查看详情", "链接", "click here", "click this", "go", "here", "this", "start", "right here",
        "more", "more info", "more information", "learn more", "read more", "see more", "information",
    }
)  # fmt: skip
CRAWLERS = ("*", "googlebot", "baiduspider", "bingbot")
#: A BCP 47 tag as hreflang takes it: language, optional script and region (zh-CN, zh-Hans, en, es-419).
HREFLANG = re.compile(r"^(?:x-default|[a-z]{2,3}(?:-[A-Z][a-z]{3})?(?:-(?:[A-Z]{2}|\d{3}))?)$", re.IGNORECASE)
LANG_MIN_LETTERS = 50  # text shorter than this says too little about its language
# han_share bounds: below, a page is not Chinese; above, it is (formulas and code names sit between)
NOT_CHINESE_BELOW, CHINESE_ABOVE = 0.1, 0.5
#: Google's structured-data guidance, per JSON-LD @type: the properties this audit requires (an error)
#: and those Google recommends (a warning); "a.b" is property b of each value of a.
GOOGLE_PROPERTIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    **dict.fromkeys(
        ("Article", "BlogPosting", "NewsArticle"),
        (("headline", "datePublished", "author", "author.name"), ("author.url", "dateModified", "image")),
    ),
    "BreadcrumbList": (("itemListElement", "itemListElement.position", "itemListElement.name"), ()),
    "WebSite": (("name", "url"), ()),
}
_BLOCKING = re.compile(r"\b(noindex|none)\b")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_SPACE = re.compile(r"\s+")
_NON_WORD = re.compile(r"\W+")


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


def _properties(which: int) -> str:
    """GOOGLE_PROPERTIES' required (0) or recommended (1) properties, types with the same list together."""
    by_list: dict[tuple[str, ...], list[str]] = {}
    for kind, lists in GOOGLE_PROPERTIES.items():
        if lists[which]:
            by_list.setdefault(lists[which], []).append(kind)
    return "; ".join(f"{'/'.join(kinds)}: {', '.join(props)}" for props, kinds in by_list.items())


RULES = Registry()
_rule = RULES.declare
_PAGE, _INDEXABLE, _POSTS, _SITE = Scope.EVERY_PAGE, Scope.INDEXABLE, Scope.POSTS, Scope.SITE
_WORDS = f"(posts of at least {DENSITY_MIN_WORDS} words)"

# The registry, in the order of the panel's topics. Site-wide rules are checked in audit.py.
PLACEHOLDER_UNFILLED = _rule(
    "placeholder-unfilled", ERROR, _INDEXABLE, Topic.PLACEHOLDER,
    "the title, description, keywords, a heading or the text still hold a placeholder `blog new` wrote ("
    + ", ".join(PLACEHOLDERS.values()) + ")",
    "write what the placeholder stands for: front matter, headings and the opening paragraph")
TITLE_MISSING = _rule(
    "title-missing", ERROR, _PAGE, Topic.TITLE, "no `<title>`, or it is empty",
    "give the page a title (front matter `title`, else its first heading)")
TITLE_TOO_LONG = _rule(
    "title-too-long", WARNING, _PAGE, Topic.TITLE,
    f"title wider than {TITLE_MAX_WIDTH} units (≈{TITLE_MAX_WIDTH // 2} 汉字)",
    "shorten the title, keyphrase first, or the site name: the seo plugin keeps the site name and cuts "
    "the page's part at a break, down to 20 units")
TITLE_DUPLICATE = _rule(
    "title-duplicate", ERROR, _INDEXABLE, Topic.TITLE, "another indexable page has the same title",
    "give each page a title of its own")
DESCRIPTION_MISSING = _rule(
    "description-missing", ERROR, _INDEXABLE, Topic.DESCRIPTION,
    'no `<meta name="description">`, or it is empty',
    "write `description` in the front matter")
DESCRIPTION_TOO_SHORT = _rule(
    "description-too-short", WARNING, _INDEXABLE, Topic.DESCRIPTION,
    f"description narrower than {DESCRIPTION_MIN_WIDTH} units (≈{DESCRIPTION_MIN_WIDTH // 2} 汉字)",
    "say what the reader learns; engines rewrite short snippets")
DESCRIPTION_TOO_LONG = _rule(
    "description-too-long", WARNING, _INDEXABLE, Topic.DESCRIPTION,
    f"description wider than {DESCRIPTION_MAX_WIDTH} units (≈{DESCRIPTION_MAX_WIDTH // 2} 汉字)",
    "cut it to what Baidu and Google show")
DESCRIPTION_DUPLICATE = _rule(
    "description-duplicate", WARNING, _INDEXABLE, Topic.DESCRIPTION,
    "another indexable page has the same description", "describe each page on its own")
KEYWORD_DENSITY_LOW = _rule(
    "keyword-density-low", INFO, _POSTS, Topic.DENSITY,
    f"the keyphrase (first meta keyword), counted as whole segmenter words, is under {DENSITY_LOW:g} % "
    f"of the words {_WORDS}",
    "use the keyphrase where it is natural, or choose the phrase the post is about")
KEYWORD_DENSITY_HIGH = _rule(
    "keyword-density-high", WARNING, _POSTS, Topic.DENSITY,
    f"the keyphrase is over {DENSITY_HIGH:g} % of the words {_WORDS}; on its own never an error",
    "say it once where it matters; vary the wording elsewhere")
KEYWORD_STUFFING = _rule(
    "keyword-stuffing", ERROR, _POSTS, Topic.DENSITY,
    f"clear evidence of stuffing: one clause with the keyphrase {STUFFING_REPEATS} times or more, or "
    f"the keyphrase {STUFFING_BURST} times within {STUFFING_WINDOW} words",
    "delete the repeated phrases: Baidu (清风) and Google demote stuffed pages")
KEYWORD_MISSING_TITLE = _rule(
    "keyword-missing-title", WARNING, _POSTS, Topic.PLACEMENT, "the keyphrase is not in the title",
    "put the keyphrase in the title")
KEYWORD_MISSING_DESCRIPTION = _rule(
    "keyword-missing-description", INFO, _POSTS, Topic.PLACEMENT,
    "the keyphrase is not in the description",
    "put the keyphrase in the description: engines bold it in the snippet")
KEYWORD_MISSING_INTRO = _rule(
    "keyword-missing-intro", INFO, _POSTS, Topic.PLACEMENT,
    "the keyphrase is not in the opening (the first paragraph, or the first tenth of the paragraphs)",
    "name the subject early")
KEYWORD_MISSING_H2 = _rule(
    "keyword-missing-h2", INFO, _POSTS, Topic.PLACEMENT, "the keyphrase is in no `<h2>`",
    "use it in a section heading (`##`)")
KEYWORD_MISSING_SLUG = _rule(
    "keyword-missing-slug", INFO, _POSTS, Topic.PLACEMENT,
    "the slug spells the title (in pinyin for a Chinese title, 重编译 → chong-bian-yi) but not the "
    "keyphrase; a slug in another language (背包 → knapsack) is not asked to",
    "put the keyphrase, spelt like the title, in the post's `slug`")
KEYWORD_MISSING_ALT = _rule(
    "keyword-missing-alt", INFO, _POSTS, Topic.PLACEMENT,
    "the post has images, and the keyphrase is in no alt text",
    "describe the main chart with the keyphrase")
KEYWORDS_META_STUFFED = _rule(
    "keywords-meta-stuffed", WARNING, _POSTS, Topic.PLACEMENT,
    f"more than {KEYWORDS_MAX} meta keywords, a repeated one, or one absent from the text",
    f"keep at most {KEYWORDS_MAX} keywords, each used in the post")
IMAGE_ALT_MISSING = _rule(
    "image-alt-missing", ERROR, _PAGE, Topic.IMAGES, "an `<img>` has no `alt` attribute",
    "describe the image: `![描述](image.png)`")
LINK_EMPTY_HREF = _rule(
    "link-empty-href", ERROR, _PAGE, Topic.LINKS, "a link's `href` is empty, `javascript:` or `file:`",
    "link to a URL crawlers can follow")
LINK_TEXT_GENERIC = _rule(
    "link-text-generic", WARNING, _PAGE, Topic.LINKS,
    "the link text says nothing about its target (点击这里, 这里, 更多, 阅读更多, 详情, click here, "
    "read more …)",
    "make the link text name what it links to")
INTERNAL_LINKS_NONE = _rule(
    "internal-links-none", WARNING, _POSTS, Topic.LINKS, "the article links to no other page of the site",
    "link a related post or the index")
INTERNAL_LINKS_FEW = _rule(
    "internal-links-few", INFO, _POSTS, Topic.LINKS,
    f"the article links to fewer than {INTERNAL_LINKS_MIN} other pages of the site (the generated "
    "related-posts block not counted)",
    "link the posts and pages the text builds on, where it mentions them")
ORPHAN_POST = _rule(
    "orphan-post", WARNING, _POSTS, Topic.LINKS,
    "no other indexable page links to the post from its text: links in list pages' entries, "
    "navigation and related-posts blocks do not count (checked when the folder has a home page, "
    "`index.html`)",
    "link it from the posts and pages it belongs with, or from the home page's text")
LINK_DEPTH_DEEP = _rule(
    "link-depth-deep", WARNING, _POSTS, Topic.LINKS,
    f"the post is more than {LINK_DEPTH_MAX} clicks from the home page by any links (navigation, lists, "
    "related posts), or not reachable at all",
    "link it from a page nearer the home page; related-posts blocks and category pages shorten paths")
OUTBOUND_LINKS_NONE = _rule(
    "outbound-links-none", INFO, _POSTS, Topic.LINKS, "the article cites no page on another site",
    "cite the documentation or paper you rely on")
CONTENT_TOO_THIN = _rule(
    "content-too-thin", WARNING, _POSTS, Topic.LENGTH,
    f"fewer than {CONTENT_MIN_WORDS} words outside code (≈{CONTENT_MIN_WORDS * 2} 汉字)",
    "explain the code and its numbers in prose")
PAGE_THIN = _rule(
    "page-thin", WARNING, _INDEXABLE, Topic.LENGTH,
    f"a page that is not a post has under {PAGE_MIN_CHARS} characters of text outside headings "
    "(posts: `content-too-thin`)",
    "write what the page is for, merge it into another, or mark it `robots: noindex`")
TITLE_H1_MISMATCH = _rule(
    "title-h1-mismatch", WARNING, _INDEXABLE, Topic.TITLE,
    f"the title and the one `<h1>` disagree: neither holds the other, and the title has under "
    f"{TITLE_H1_MIN_SHARED:.0%} of the H1's words (one-character words like 的 aside; Baidu wants them "
    "to agree)",
    "let the `#` heading and the front matter `title` say the same thing")
HEADING_SKIP = _rule(
    "heading-skip", WARNING, _INDEXABLE, Topic.OTHER,
    "a heading is more than one level below the one before it (`<h1>` then `<h3>`)",
    "use the next level (`##` under `#`), or style the heading instead")
IMAGE_SIZE_MISSING = _rule(
    "image-size-missing", WARNING, _PAGE, Topic.IMAGES,
    "an `<img>` has no `width` and `height` (attributes or inline style): the page shifts as it loads",
    'give its size: `![描述](chart.png){ width="640" height="360" }` (attr_list)')
DOM_TOO_LARGE = _rule(
    "dom-too-large", WARNING, _INDEXABLE, Topic.OTHER,
    f"the page has over {DOM_MAX_ELEMENTS} elements (Lighthouse's dom-size), which slows every render",
    "split the page, or shorten the navigation (`navigation.prune`, fewer pages per section)")
PAGE_TOO_HEAVY = _rule(
    "page-too-heavy", WARNING, _INDEXABLE, Topic.OTHER,
    f"the page and the local stylesheets, scripts and images it loads weigh over "
    f"{PAGE_MAX_BYTES / 1e6:g} MB as stored",
    "compress or shrink the images (WebP, a smaller width); split a long page")
LINK_BROKEN = _rule(
    "link-broken", ERROR, _PAGE, Topic.LINKS,
    "a link in the content points into the site, to no file of the built site (a missing page, an "
    "unconverted `.md` link)",
    "correct the link: MkDocs resolves `[text](other.md)` relative to the Markdown file")
LINK_FRAGMENT_MISSING = _rule(
    "link-fragment-missing", WARNING, _PAGE, Topic.LINKS,
    "a link's `#fragment` names no id of the page it points to",
    "link to a heading's id as the built page spells it (see its ¶ link)")
CANONICAL_NOT_BUILT = _rule(
    "canonical-not-built", ERROR, _INDEXABLE, Topic.OTHER,
    "the canonical URL is on this site but no built page is served there",
    "fix `site_url`, or the page's `canonical_url`/slug")
SITEMAP_URL_NOT_BUILT = _rule(
    "sitemap-url-not-built", ERROR, _SITE, Topic.OTHER,
    "a `sitemap.xml` `<loc>` on this site maps to no built page",
    "rebuild: the seo plugin lists only the pages it built")
CONTENT_NEAR_DUPLICATE = _rule(
    "content-near-duplicate", WARNING, _INDEXABLE, Topic.OTHER,
    "another indexable page has nearly the same text (MinHash estimate of shared 5-character shingles "
    "≥ 0.85; pages of at least 60 characters of prose), such as a date archive repeating the home page; "
    "every copy is reported, however many there are",
    "merge the pages, or mark one `noindex, follow` (the seo plugin does for date archives)")
LANG_MISSING = _rule(
    "lang-missing", ERROR, _PAGE, Topic.OTHER, "`<html>` has no `lang` attribute",
    "set `theme.language` in mkdocs.yml (zh → zh-CN)")
CANONICAL_MISSING = _rule(
    "canonical-missing", WARNING, _INDEXABLE, Topic.OTHER, 'no `<link rel="canonical">`',
    "set `site_url` in mkdocs.yml; the seo plugin writes the canonical URL")
CANONICAL_NOT_ABSOLUTE = _rule(
    "canonical-not-absolute", ERROR, _INDEXABLE, Topic.OTHER, "the canonical is not an absolute http(s) URL",
    "set `site_url` to the site's full https address")
H1_MISSING = _rule(
    "h1-missing", WARNING, _INDEXABLE, Topic.OTHER, "no `<h1>`", "start the page with one `#` heading")
H1_MULTIPLE = _rule(
    "h1-multiple", WARNING, _INDEXABLE, Topic.OTHER, "more than one `<h1>`",
    "keep one `#` heading; use `##` below it")
OG_MISSING = _rule(
    "og-missing", WARNING, _INDEXABLE, Topic.OTHER, "og:title, og:description, og:type or og:url is missing",
    "give the page a title and description; the seo plugin writes Open Graph tags")
JSONLD_INVALID = _rule(
    "jsonld-invalid", ERROR, _PAGE, Topic.OTHER,
    "JSON-LD does not parse, has no `@type`/`@context`, or lacks a property this audit requires: "
    + _properties(0),
    "fix the template or theme override that writes it")
JSONLD_RECOMMENDED_MISSING = _rule(
    "jsonld-recommended-missing", WARNING, _PAGE, Topic.OTHER,
    "JSON-LD lacks a property Google's guidance recommends: " + _properties(1),
    "author.url: give the author a `url` in Material's `.authors.yml` (a front-matter `author:` or "
    "`authors:` takes the url of the entry with that id or name), or `seo_author_url` for the site's author; "
    "image: an `image` in front matter, or `seo_cards` on; dateModified: a `date` in front matter")
HREFLANG_INVALID = _rule(
    "hreflang-invalid", ERROR, _INDEXABLE, Topic.OTHER,
    "an hreflang value is not a language tag (`zh-CN`, `en`, `x-default`; not `zh_CN`), "
    "its href is not absolute, or one tag names two URLs",
    "declare `lang` in front matter with a BCP 47 tag; the seo plugin writes the links")
HREFLANG_MISSING = _rule(
    "hreflang-missing", WARNING, _INDEXABLE, Topic.OTHER,
    "the page lists language versions with hreflang but not itself",
    "list every version, this one included (the seo plugin does, from `translation_of`)")
HREFLANG_NOT_RECIPROCAL = _rule(
    "hreflang-not-reciprocal", ERROR, _INDEXABLE, Topic.OTHER,
    "a page of the site lists another as a language version, and that page does not list it back "
    "(Google ignores the pair)",
    "join the two with `translation_of` in the translation's front matter")
LANG_MISMATCH = _rule(
    "lang-mismatch", WARNING, _INDEXABLE, Topic.OTHER,
    f"`<html lang>` says Chinese and ideographs are under {NOT_CHINESE_BELOW:.0%} of the text's "
    f"ideographs and Latin words, or another language and over {CHINESE_ABOVE:.0%} "
    f"(texts of {LANG_MIN_LETTERS}+ letters)",
    "set the page's `lang` in front matter (a translation: `lang: en`)")
RENDER_BLOCKING_THIRD_PARTY = _rule(
    "render-blocking-third-party", WARNING, _PAGE, Topic.OTHER,
    "the head loads a stylesheet, or a script without `async`/`defer`, from another host: the page "
    "waits for it, and hosts such as fonts.googleapis.com stall or fail in mainland China (a warning: "
    "the page still renders and is indexed; Material loads Google Fonts unless told otherwise)",
    "serve it from the site (self-host the font or script, `seo_local_fonts: true` for the theme's "
    "font), load it async, or drop it (`theme.font: false`)")
ROBOTS_BLOCKS_CRAWLER = _rule(
    "robots-blocks-crawler", ERROR, _INDEXABLE, Topic.OTHER,
    "`robots.txt` disallows the page for " + ", ".join(f"`{c}`" for c in CRAWLERS)
    + ", or a bot's own robots meta says noindex",
    "remove the Disallow or the bot's meta, or mark the page noindex for every crawler")
NOINDEX_IN_SITEMAP = _rule(
    "noindex-in-sitemap", ERROR, Scope.NOINDEX, Topic.OTHER,
    "the page says noindex but `sitemap.xml` lists it",
    "leave noindex pages out of the sitemap (the seo plugin does)")
ROBOTS_TXT_INVALID = _rule(
    "robots-txt-invalid", ERROR, _SITE, Topic.OTHER,
    "a `robots.txt` line Lighthouse would reject: no `:`, an unknown directive, a pattern not starting "
    "with `/` or `*`, a `$` before the end, a rule before any User-agent, a relative Sitemap URL",
    "correct the line in docs_dir's robots.txt")
SITEMAP_INVALID = _rule(
    "sitemap-invalid", ERROR, _SITE, Topic.OTHER,
    "`sitemap.xml`, or a part its index names, is not well-formed XML",
    "rebuild with the seo plugin's sitemap, or fix the one you publish")

# What the build finds in a page's source (front matter). Never an error: a page MkDocs builds, the build
# builds; the head leaves out, or makes up for, what it cannot read.
FRONT_MATTER_INVALID = _rule(
    "front-matter-invalid", WARNING, Scope.SOURCE, Topic.OTHER,
    "the text between the page's first two `---` lines is not YAML, or not `key: value` lines: MkDocs "
    "renders it as text and reads no metadata from it",
    "correct the YAML; a page that opens with a horizontal rule starts with a blank line instead")
FRONT_MATTER_VALUE_INVALID = _rule(
    "front-matter-value-invalid", WARNING, Scope.SOURCE, Topic.OTHER,
    "a front-matter value the head uses has the wrong type (`description` not one text, `keywords` not "
    "a list or a comma-separated text, `image` not a URL): the head leaves it out",
    "write it as the message says")
DESCRIPTION_GENERATED = _rule(
    "description-generated", WARNING, Scope.SOURCE, Topic.DESCRIPTION,
    f"a post has no `description` in its front matter: the head says its first paragraph, cut to "
    f"{DESCRIPTION_MAX_WIDTH} units",
    "write `description` in the front matter: what the reader learns, in about "
    f"{DESCRIPTION_MIN_WIDTH}–{DESCRIPTION_MAX_WIDTH} units")
DATE_INVALID = _rule(
    "date-invalid", WARNING, Scope.SOURCE, Topic.OTHER,
    "a front-matter `date` or `updated` is not a date or an ISO date-time: the head, sitemap and feed "
    "leave it out (and date the page by git)",
    "write it as `2024-05-02` or `2024-05-02 10:30:00` (read in the blog's timezone) or with an offset")
ROBOTS_TXT_NOT_AT_ROOT = _rule(
    "robots-txt-not-at-root", WARNING, Scope.SOURCE, Topic.OTHER,
    "`site_url` has a path (`https://host/blog/`): the site's robots.txt is published under it, and "
    "crawlers read robots.txt only at the host's root",
    "put the lines the message quotes (at least its `Sitemap:` line) in the robots.txt at the host's root")
SLUG_NOT_ASCII = _rule(
    "slug-not-ascii", INFO, Scope.SOURCE, Topic.OTHER,
    "a front-matter `slug` is not lower-case ASCII words joined by hyphens: the URL is used as the blog "
    "gives it, and is percent-encoded wherever it is shared",
    "nothing, if the blog wants it so; else a slug like `torch-compile-fullgraph`")


@RULES.check(TITLE_MISSING, TITLE_TOO_LONG)
def check_title(p: PageFacts) -> Iterator[Finding]:
    if not p.title:
        yield TITLE_MISSING.at(p.page, "no <title>, or it is empty", "没有 <title>，或它是空的")
    elif (w := text.display_width(p.title)) > TITLE_MAX_WIDTH:
        yield TITLE_TOO_LONG.at(p.page, f"title is {w} units wide (> {TITLE_MAX_WIDTH}); engines cut it",
                                f"标题宽 {w} 个单位（超过 {TITLE_MAX_WIDTH}），搜索结果会截断它")


_ZH_FIELDS = {"the title": "标题", "the description": "描述", "the keywords": "关键词", "a heading": "小标题"}


@RULES.check(PLACEHOLDER_UNFILLED)
def check_placeholders(p: PageFacts) -> Iterator[Finding]:
    """What `blog new` writes for the author to fill in must never be published, anywhere in the page."""
    headings = [label for _, label in p.headings]
    fields = {"the title": [p.title or ""], "the description": [p.description or ""],
              "the keywords": p.keywords or [], "a heading": headings}
    text: str | None = None
    for placeholder in PLACEHOLDERS.values():
        for name, values in fields.items():
            if any(placeholder in value for value in values):
                yield PLACEHOLDER_UNFILLED.at(p.page, f"placeholder {placeholder!r} left in {name}",
                                              f"{_ZH_FIELDS[name]}里还留着占位文字「{placeholder}」")
        if text is None:  # the body less its headings (which are part of the body's text), once
            text = p.body
            for label in headings:
                text = text.replace(label, " ", 1)
        if (at := text.find(placeholder)) >= 0:
            excerpt = text[at:at + 40].strip()
            yield PLACEHOLDER_UNFILLED.at(
                p.page, f"placeholder {placeholder!r} left in the text: {excerpt!r}",
                                          f"正文里还留着占位文字「{placeholder}」：「{excerpt}」")


@RULES.check(DESCRIPTION_MISSING, DESCRIPTION_TOO_SHORT, DESCRIPTION_TOO_LONG)
def check_description(p: PageFacts) -> Iterator[Finding]:
    if not p.description:
        yield DESCRIPTION_MISSING.at(p.page, 'no <meta name="description">, or it is empty',
                                     "没有描述（meta description），或它是空的")
        return
    width = text.display_width(p.description)
    if width < DESCRIPTION_MIN_WIDTH:
        yield DESCRIPTION_TOO_SHORT.at(p.page, f"description is {width} units (< {DESCRIPTION_MIN_WIDTH})",
                                       f"描述只有 {width} 个单位（少于 {DESCRIPTION_MIN_WIDTH}）")
    elif width > DESCRIPTION_MAX_WIDTH:
        yield DESCRIPTION_TOO_LONG.at(p.page, f"description is {width} units (> {DESCRIPTION_MAX_WIDTH})",
                                      f"描述有 {width} 个单位（超过 {DESCRIPTION_MAX_WIDTH}）")


@RULES.check(CANONICAL_MISSING, CANONICAL_NOT_ABSOLUTE)
def check_canonical(p: PageFacts) -> Iterator[Finding]:
    if p.canonical is None:
        bad = next((url for where, url in p.unparsable if where == "canonical"), None)
        if bad is not None:  # dropped by the audit's reader: no rule can split it
            yield CANONICAL_NOT_ABSOLUTE.at(p.page, f"canonical {bad!r} is not a URL",
                                            f"规范链接 {bad!r} 不是合法的地址")
        else:
            yield CANONICAL_MISSING.at(p.page, 'no <link rel="canonical">', "没有规范链接（canonical）")
        return
    parts = urlsplit(p.canonical)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        yield CANONICAL_NOT_ABSOLUTE.at(p.page, f"canonical {p.canonical!r} is not an absolute http(s) URL",
                                        f"规范链接 {p.canonical!r} 不是完整的 http(s) 地址")


@RULES.check(PAGE_THIN, TITLE_H1_MISMATCH, HEADING_SKIP, DOM_TOO_LARGE)
def check_structure(p: PageFacts) -> Iterator[Finding]:
    """What an indexable page's outline says: enough text, a title the H1 agrees with, no skipped
    heading level, a DOM a browser renders quickly."""
    if not p.is_post and (chars := prose_chars(p)) < PAGE_MIN_CHARS:
        yield PAGE_THIN.at(p.page, f"{chars} characters of text outside headings (< {PAGE_MIN_CHARS})",
                           f"标题之外只有 {chars} 个字符（少于 {PAGE_MIN_CHARS}）")
    if p.title and len(p.h1) == 1 and not _agrees(p.title, p.h1[0]):
        yield TITLE_H1_MISMATCH.at(p.page, f"title {p.title!r} and H1 {p.h1[0]!r} disagree",
                                   f"标题「{p.title}」与 H1「{p.h1[0]}」说的不是一回事")
    for (above, upper), (level, label) in itertools.pairwise(p.headings):
        if level > above + 1:
            yield HEADING_SKIP.at(p.page, f"<h{level}> {label[:40]!r} follows <h{above}> {upper[:40]!r}",
                                  f"<h{level}>「{label[:40]}」跳过了一级，"
                                  f"紧跟在 <h{above}>「{upper[:40]}」之后")
    if p.elements > DOM_MAX_ELEMENTS:
        yield DOM_TOO_LARGE.at(p.page, f"{p.elements} elements (> {DOM_MAX_ELEMENTS})",
                               f"页面有 {p.elements} 个元素（超过 {DOM_MAX_ELEMENTS}）")


def prose_chars(p: PageFacts) -> int:
    """Characters of the page's text outside its headings, spaces not counted."""
    return len(_SPACE.sub("", p.body)) - sum(len(_SPACE.sub("", label)) for _, label in p.headings)


def _agrees(title: str, h1: str) -> bool:
    """Whether a title and an H1 say the same thing: one holds the other (the title may add the site
    name or a page number), or the title holds at least `TITLE_H1_MIN_SHARED` of the H1's words."""
    t, h = _NON_WORD.sub("", text.normalize(title)), _NON_WORD.sub("", text.normalize(h1))
    if not t or not h or h in t or t in h:
        return True
    h1_words, title_words = _content_words(h1), _content_words(title)
    return len(h1_words & title_words) >= TITLE_H1_MIN_SHARED * len(h1_words)


def _content_words(value: str) -> set[str]:
    """The words of a title, without one-character Chinese words (的, 与, 和 carry no subject)."""
    words = text.default_segmenter().words(text.normalize(value))
    return {w for w in words if len(w) > 1 or not _HAN.match(w)}


@RULES.check(LANG_MISSING)
def check_lang(p: PageFacts) -> Iterator[Finding]:
    if not p.lang:
        yield LANG_MISSING.at(p.page, "<html> has no lang attribute (use zh-CN for Chinese pages)",
                              "<html> 没有 lang 属性（中文页面用 zh-CN）")


@RULES.check(H1_MISSING, H1_MULTIPLE)
def check_headings(p: PageFacts) -> Iterator[Finding]:
    if not p.h1:
        yield H1_MISSING.at(p.page, "no <h1>", "没有 <h1>")
    elif len(p.h1) > 1:
        yield H1_MULTIPLE.at(
            p.page, f"{len(p.h1)} <h1> elements; use one", f"有 {len(p.h1)} 个 <h1>，只留一个")


@RULES.check(IMAGE_ALT_MISSING, IMAGE_SIZE_MISSING)
def check_images(p: PageFacts) -> Iterator[Finding]:
    for src, alt in p.images:
        if alt is None:
            yield IMAGE_ALT_MISSING.at(p.page, f"<img src={src!r}> has no alt attribute",
                                       f"图片 {src!r} 没有 alt 文字")
    for src in p.unsized_images:
        yield IMAGE_SIZE_MISSING.at(p.page, f"<img src={src!r}> has no width and height",
                                    f"图片 {src!r} 没有宽和高")


@RULES.check(LINK_EMPTY_HREF, LINK_TEXT_GENERIC)
def check_anchors(p: PageFacts) -> Iterator[Finding]:
    for href, label in p.anchors:
        target = (href or "").strip()
        if not target or target.lower().startswith(("javascript:", "file:")):
            yield LINK_EMPTY_HREF.at(
                p.page, f"link {label[:40]!r} has href {href!r}, which crawlers cannot follow",
                                     f"链接「{label[:40]}」的地址是 {href!r}，爬虫无法跟随")
        elif not url_syntax.parses(target):
            yield LINK_EMPTY_HREF.at(
                p.page, f"link {label[:40]!r} has href {href!r}, which is not a URL",
                f"链接「{label[:40]}」的地址 {href!r} 不是合法的地址")
        elif _generic(label):
            yield LINK_TEXT_GENERIC.at(p.page, f"link text {label!r} says nothing about {target[:60]!r}",
                                       f"链接文字「{label}」没有说出 {target[:60]!r} 是什么")


@lru_cache(maxsize=1 << 14)  # every page repeats the navigation's links
def _generic(label: str) -> bool:
    """Whether a link's text says nothing of where it goes (点击这里, read more)."""
    return text.normalize(label).strip(" .:：。!！>»→") in GENERIC_LINK_TEXT


@RULES.check(OG_MISSING)
def check_open_graph(p: PageFacts) -> Iterator[Finding]:
    missing = [k for k in ("og:title", "og:description", "og:type", "og:url") if not p.og.get(k)]
    if missing:
        yield OG_MISSING.at(p.page, f"missing Open Graph tags: {', '.join(missing)}",
                            f"缺少 Open Graph 标签：{'、'.join(missing)}")


@RULES.check(JSONLD_INVALID, JSONLD_RECOMMENDED_MISSING)
def check_jsonld(p: PageFacts) -> Iterator[Finding]:
    for block in p.jsonld:
        try:
            data = json.loads(block)
        except ValueError as exc:
            yield JSONLD_INVALID.at(p.page, f"JSON-LD does not parse: {exc}", f"JSON-LD 无法解析：{exc}")
            continue
        except RecursionError:
            yield JSONLD_INVALID.at(p.page, "JSON-LD is nested too deeply to read",
                                    "JSON-LD 嵌套太深，无法读取")
            continue
        items = data if isinstance(data, list) else [data]
        for item in items:
            if not isinstance(item, dict) or "@type" not in item:
                yield JSONLD_INVALID.at(p.page, "JSON-LD item has no @type", "JSON-LD 的一项没有 @type")
                continue
            if not isinstance(data, list) and "@context" not in item:
                yield JSONLD_INVALID.at(p.page, "JSON-LD has no @context", "JSON-LD 没有 @context")
            kind = item["@type"] if isinstance(item["@type"], str) else "(a non-text @type)"
            required, recommended = GOOGLE_PROPERTIES.get(kind, ((), ()))
            if missing := [path for path in required if not _has(item, path)]:
                yield JSONLD_INVALID.at(p.page, f"{kind} lacks {', '.join(missing)}",
                                        f"{kind} 缺少 {'、'.join(missing)}")
            if missing := [path for path in recommended if not _has(item, path)]:
                yield JSONLD_RECOMMENDED_MISSING.at(p.page, f"{kind} lacks {', '.join(missing)}",
                                                    f"{kind} 缺少建议的 {'、'.join(missing)}")


def _has(item: object, path: str) -> bool:
    """Whether `item` has a non-empty value at `path` ("author.url": every author has a url)."""
    name, _, rest = path.partition(".")
    value = item.get(name) if isinstance(item, dict) else None
    if value in (None, "", [], {}):
        return False
    if not rest:
        return True
    values = value if isinstance(value, list) else [value]
    return all(_has(v, rest) for v in values)


@RULES.check(HREFLANG_INVALID, HREFLANG_MISSING)
def check_hreflang(p: PageFacts) -> Iterator[Finding]:
    """Each hreflang link names a language tag and an absolute URL; the page lists itself among them."""
    for where, href in p.unparsable:
        if where == "hreflang":
            yield HREFLANG_INVALID.at(p.page, f"an hreflang link names {href!r}, which is not a URL",
                                      f"hreflang 链接指向 {href!r}，不是合法的地址")
    if not p.hreflang:
        return
    urls: dict[str, set[str]] = {}
    for tag, href in p.hreflang:
        parts = urlsplit(href)
        if not HREFLANG.match(tag):
            yield HREFLANG_INVALID.at(p.page, f"hreflang={tag!r} is not a language tag (zh-CN, en)",
                                      f"hreflang={tag!r} 不是语言标签（zh-CN、en）")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            yield HREFLANG_INVALID.at(p.page, f"hreflang={tag!r} names {href!r}, not an absolute URL",
                                      f"hreflang={tag!r} 指向 {href!r}，不是完整地址")
        urls.setdefault(tag.lower(), set()).add(href)
    for tag, hrefs in sorted(urls.items()):
        if len(hrefs) > 1:
            named = ", ".join(sorted(hrefs))
            yield HREFLANG_INVALID.at(p.page, f"hreflang={tag!r} names {len(hrefs)} URLs: {named}",
                                      f"hreflang={tag!r} 指向 {len(hrefs)} 个地址：{named}")
    if p.canonical and p.canonical not in {href for _, href in p.hreflang}:
        yield HREFLANG_MISSING.at(p.page, f"its hreflang links do not list the page itself ({p.canonical})",
                                  f"hreflang 链接没有列出页面自己（{p.canonical}）")


@RULES.check(LANG_MISMATCH)
def check_lang_matches_text(p: PageFacts) -> Iterator[Finding]:
    """`<html lang>` agrees with the script of the text: Chinese pages are written in Chinese."""
    if not p.lang or not _has_letters(p.body, LANG_MIN_LETTERS):
        return
    primary = p.lang.split("-")[0].lower()
    share = text.han_share(p.body)
    if primary == "zh" and share < NOT_CHINESE_BELOW:
        yield LANG_MISMATCH.at(p.page, f'<html lang="{p.lang}"> but the text is not Chinese '
                                       f"({share:.0%} ideographs among ideographs and words)",
                               f'<html lang="{p.lang}">，但正文不是中文（汉字只占 {share:.0%}）')
    elif primary not in ("zh", "ja", "ko") and share > CHINESE_ABOVE:
        yield LANG_MISMATCH.at(p.page, f'<html lang="{p.lang}"> but the text is Chinese '
                                       f"({share:.0%} ideographs among ideographs and words)",
                               f'<html lang="{p.lang}">，但正文是中文（汉字占 {share:.0%}）')


def _has_letters(body: str, least: int) -> bool:
    """Whether `body` has at least `least` letters: counted in its opening first, where most texts
    have them, and in the whole only if need be."""
    return sum(map(str.isalpha, body[: 4 * least])) >= least or sum(map(str.isalpha, body)) >= least


@RULES.check(RENDER_BLOCKING_THIRD_PARTY)
def check_render_blocking(p: PageFacts) -> Iterator[Finding]:
    """Stylesheets and synchronous scripts in the head hold the first paint until they arrive."""
    site = urlsplit(p.canonical or p.og.get("og:url", "")).netloc.lower()
    for url in p.blocking:
        host = urlsplit(url).netloc.lower()
        if host and host != site:
            yield RENDER_BLOCKING_THIRD_PARTY.at(p.page, f"the head waits for {url} from {host}",
                                                 f"页面要等 {host} 上的 {url} 才能显示")


@RULES.check(ROBOTS_BLOCKS_CRAWLER)
def check_bot_meta(p: PageFacts) -> Iterator[Finding]:
    for bot, content in sorted(p.bot_robots.items()):
        if _BLOCKING.search(content):
            tag = f'<meta name="{bot}" content="{content}">'
            yield ROBOTS_BLOCKS_CRAWLER.at(p.page, f"{tag} keeps it out", f"{tag} 不让它被收录")


@RULES.check(KEYWORDS_META_STUFFED, KEYWORD_DENSITY_LOW, KEYWORD_DENSITY_HIGH, KEYWORD_STUFFING,
             KEYWORD_MISSING_TITLE, KEYWORD_MISSING_DESCRIPTION, KEYWORD_MISSING_INTRO, KEYWORD_MISSING_H2,
             KEYWORD_MISSING_SLUG, KEYWORD_MISSING_ALT)
def check_keywords(p: PageFacts) -> Iterator[Finding]:
    """Density and placement of the focus keyphrase (the first meta keyword), and keyword stuffing."""
    phrase = p.keyphrase
    if not phrase:
        return
    terms = [text.normalize(k) for k in p.keywords or []]
    if len(terms) > KEYWORDS_MAX:
        yield KEYWORDS_META_STUFFED.at(p.page, f"{len(terms)} meta keywords (> {KEYWORDS_MAX})",
                                       f"有 {len(terms)} 个关键词（超过 {KEYWORDS_MAX}）")
    if len(set(terms)) < len(terms):
        yield KEYWORDS_META_STUFFED.at(p.page, "meta keywords repeat a term", "关键词里有重复")
    absent = [
        k for k in p.keywords or [] if not text.count_occurrences(p.body_normalized, k, normalized=True)
    ]
    if absent:
        yield KEYWORDS_META_STUFFED.at(p.page, f"meta keywords not in the text: {', '.join(absent)}",
                                       f"正文里没有这些关键词：{'、'.join(absent)}")
    hits = len(p.keyphrase_hits)
    if p.words >= DENSITY_MIN_WORDS:
        density = 100.0 * hits / p.words
        detail = f"{phrase!r} {hits}× in {p.words} words = {density:.2f}%"
        zh = f"「{phrase}」在 {p.words} 词中出现 {hits} 次 = {density:.2f}%"
        if density < DENSITY_LOW:
            yield KEYWORD_DENSITY_LOW.at(
                p.page, f"{detail} (< {DENSITY_LOW}%)", f"{zh}（低于 {DENSITY_LOW}%）")
        elif density > DENSITY_HIGH:
            yield KEYWORD_DENSITY_HIGH.at(
                p.page, f"{detail} (> {DENSITY_HIGH}%)", f"{zh}（高于 {DENSITY_HIGH}%）")
    if (evidence := stuffing(p)) is not None:
        yield KEYWORD_STUFFING.at(p.page, *evidence)
    if not p.mentions(p.title):
        yield KEYWORD_MISSING_TITLE.at(p.page, f"{phrase!r} is not in the title", f"标题里没有「{phrase}」")
    if not p.mentions(p.description):
        yield KEYWORD_MISSING_DESCRIPTION.at(p.page, f"{phrase!r} is not in the description",
                                             f"描述里没有「{phrase}」")
    if not p.mentions(p.intro):
        yield KEYWORD_MISSING_INTRO.at(p.page, f"{phrase!r} is not in the opening paragraphs",
                                       f"开头几段里没有「{phrase}」")
    if not any(p.mentions(h) for h in p.h2):
        yield KEYWORD_MISSING_H2.at(p.page, f"{phrase!r} is in no <h2>", f"没有一个 <h2> 含「{phrase}」")
    title = p.og.get("og:title") or p.title or ""
    spelt = slugify(phrase, max_length=None)
    if _slug_follows(p.slug, title) and not _in_slug(spelt, p.slug):
        yield KEYWORD_MISSING_SLUG.at(
            p.page, f"{phrase!r} (as a slug: {spelt!r}) is not in the slug {p.slug!r}",
                                      f"slug {p.slug!r} 里没有「{phrase}」（写成 slug 是 {spelt!r}）")
    if p.images and not any(p.mentions(alt) for _, alt in p.images):
        yield KEYWORD_MISSING_ALT.at(p.page, f"{phrase!r} is in no image's alt text",
                                     f"没有一张图片的 alt 文字含「{phrase}」")


_CLAUSE_END = re.compile(r"[。．！？；，、!?;,]|\.(?:\s|$)")


def _clauses(body: str) -> list[str]:
    """The clauses of a text, each normalised (`text.normalize`) without its spaces. They are
    normalised in one call, joined by NUL: no character combines with NUL, nor any with it, so each
    comes out as it would alone."""
    parts = _CLAUSE_END.split(body)
    if "\x00" in body:
        return [text.normalize(part).replace(" ", "") for part in parts]
    return text.normalize("\x00".join(parts)).replace(" ", "").split("\x00")


def stuffing(p: PageFacts) -> tuple[str, str] | None:
    """The clear evidence of keyword stuffing in a post (in English and Chinese), or None: one clause
    holding the keyphrase repeated `STUFFING_REPEATS` times, or `STUFFING_BURST` keyphrases within
    `STUFFING_WINDOW` words."""
    hits = p.keyphrase_hits
    if p.tokens is None or not p.keyphrase or len(hits) < min(STUFFING_REPEATS, STUFFING_BURST):
        return None
    words = [p.tokens.word_at(offset) for offset in hits]
    for first, last in zip(words, words[STUFFING_BURST - 1 :], strict=False):
        if last - first < STUFFING_WINDOW:
            return (f"{p.keyphrase!r} {STUFFING_BURST}× within {last - first + 1} words "
                    f"(from word {first + 1}; honest prose stays under half that)",
                    f"「{p.keyphrase}」在 {last - first + 1} 词内出现 {STUFFING_BURST} 次"
                    f"（从第 {first + 1} 词起；"
                    f"正常行文不到一半）")
    needle = text.normalize(p.keyphrase).replace(" ", "")
    clauses = Counter(clause for clause in _clauses(p.body) if needle in clause)
    if clauses and (top := clauses.most_common(1)[0])[1] >= STUFFING_REPEATS:
        return (f"the clause {top[0][:40]!r} with {p.keyphrase!r} is repeated {top[1]}×",
                f"含「{p.keyphrase}」的分句「{top[0][:40]}」重复了 {top[1]} 次")
    return None


def _slug_follows(slug: str, title: str) -> bool:
    """Whether `slug` is the title in the title's own language: more than half its parts are words
    of the title's slug, and for a title with Chinese, some are the pinyin of that Chinese. Only
    such a slug is asked to spell the keyphrase: an English slug for a Chinese title (背包 DP as
    knapsack, AVL 树 as avl) is the author's choice of language, not a missing keyphrase."""
    parts = [part for part in slug.lower().split("-") if part]
    words = set(slugify(title, max_length=None).split("-"))
    if not parts or 2 * sum(part in words for part in parts) <= len(parts):
        return False
    chinese = "".join(_HAN.findall(title))
    return not chinese or bool(set(parts) & set(slugify(chinese, max_length=None).split("-")))


def _in_slug(spelt: str, slug: str) -> bool:
    """Whether the keyphrase, spelt as `seo.slug` spells it (重编译 -> chong-bian-yi), is in the slug.

    Letters only are compared (tu-duan-lie, torch-compile), so a slug made with another separator
    still matches; spelling with the slug module's own reading keeps the audit from asking for a
    spelling the site would never produce.
    """
    letters = re.sub(r"[^a-z0-9]", "", spelt)
    return bool(letters) and letters in re.sub(r"[^a-z0-9]", "", slug.lower())


@RULES.check(INTERNAL_LINKS_NONE, INTERNAL_LINKS_FEW, OUTBOUND_LINKS_NONE)
def check_links(p: PageFacts) -> Iterator[Finding]:
    """A post's own text links to other pages of the site (some of them) and to a page elsewhere."""
    here = p.canonical or p.page
    host = urlsplit(p.canonical).netloc if p.canonical else ""
    internal: set[str] = set()
    outbound = 0
    for href in p.content_links:
        parts = urlsplit(href)
        if parts.scheme in ("mailto", "tel", "javascript"):
            continue
        if parts.netloc and parts.netloc != host:
            outbound += 1
        elif parts.path:  # same host or relative, and not only a #fragment
            target = urlsplit(urljoin(here, parts.path)).path.removesuffix("index.html")
            if target != urlsplit(here).path.removesuffix("index.html"):
                internal.add(target)
    if not internal:
        yield INTERNAL_LINKS_NONE.at(p.page, "the article links to no other page of the site",
                                     "正文没有链接到本站的其他页面")
    elif len(internal) < INTERNAL_LINKS_MIN:
        yield INTERNAL_LINKS_FEW.at(
            p.page,
            f"the article links to {len(internal)} other page(s) of the site (< {INTERNAL_LINKS_MIN})",
            f"正文只链接到本站 {len(internal)} 个其他页面（少于 {INTERNAL_LINKS_MIN}）")
    if not outbound:
        yield OUTBOUND_LINKS_NONE.at(
            p.page, "the article cites no page on another site", "正文没有引用其他网站的页面")


@RULES.check(CONTENT_TOO_THIN)
def check_length(p: PageFacts) -> Iterator[Finding]:
    if p.words < CONTENT_MIN_WORDS:
        yield CONTENT_TOO_THIN.at(p.page, f"{p.words} words outside code (< {CONTENT_MIN_WORDS})",
                                  f"代码之外只有 {p.words} 词（少于 {CONTENT_MIN_WORDS}）")


def page_findings(p: PageFacts) -> Iterator[Finding]:
    """Every per-page rule whose scope covers this page: noindex pages get only every-page rules."""
    return RULES.page_findings(p, noindex=p.noindex, post=p.is_post)
