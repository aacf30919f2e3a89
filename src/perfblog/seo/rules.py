"""The audit's rules: thresholds and the registry of every rule (`RULES`).

Each rule is declared once below (id, severity, scope, panel topic, doc, fix); docs/seo-rules.md is
generated from these declarations. The per-page checks are `checks`' (one module a topic), each a
function of one page's facts (`facts.PageFacts`) registered with the rules it reports; it runs on the
pages their scope covers: structural rules on every (indexable) page, content rules (keywords, links,
length) only on posts, so an index or archive page is never asked for a keyphrase. Rules that compare
pages with each other or with robots.txt and sitemap.xml are checked by `audit.py`, through the same
declarations.

Adding a rule: declare it here, write its check (in `checks/`, or site-wide in `audit.py`), add its
broken page to tests/seo_pages.py, and regenerate the docs (`blog seo rules > docs/seo-rules.md`).
"""
from __future__ import annotations

import re

from perfblog.core.conventions import PLACEHOLDERS
from perfblog.seo.registry import Registry, Scope, Severity, Topic

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

# Thresholds. Lengths are display widths: a CJK character counts 2, a Latin letter 1.
TITLE_MAX_WIDTH = 60  # Google truncates at ~600 px, about 60 Latin letters or 30 汉字
DESCRIPTION_MIN_WIDTH = 60  # about 30 汉字: shorter snippets get rewritten by the engine
DESCRIPTION_MAX_WIDTH = 160  # about 80 汉字: Baidu and Google cut the snippet around here
# Keyword thresholds, calibrated on 249 real Chinese pages (tests/data/corpus, docs/seo-corpus.md).
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
