"""Options of the `seo` plugin: declared once, flat, each prefixed `seo_`."""

from __future__ import annotations

from mkdocs.config import base
from mkdocs.config import config_options as c

from perfblog.seo.baseline import FILE as BASELINE_FILE
from perfblog.seo.indexnow_key import KEY_FILE
from perfblog.seo.meta import AuthorKind
from perfblog.seo.related import COUNT as RELATED_COUNT
from perfblog.seo.related import PLACES as RELATED_PLACES
from perfblog.seo.sitemap import MAX_URLS


class SeoConfig(base.Config):
    """`plugins: - seo: {seo_author: ..., ...}` in mkdocs.yml."""

    seo_author = c.Optional(c.Type(str))
    """JSON-LD and feed author; default: `site_author`, else `site_name`."""
    seo_author_url = c.Optional(c.Type(str))
    """The author's page (JSON-LD `author.url`); default: `site_url`."""
    seo_author_type = c.Choice([kind.value for kind in AuthorKind], default=AuthorKind.PERSON.value)
    """The author's schema.org type."""
    seo_slogan = c.Optional(c.Type(str))
    """The home page's `<title>` becomes `site_name - slogan`."""
    seo_cards = c.Type(bool, default=True)
    """Draw a 1200×630 social card (og:image) for each page without an `image`."""
    seo_card_font = c.Optional(c.Type(str))
    """A CJK font file for the cards, relative to mkdocs.yml; default: one installed here."""

    # What readers see: each change of the theme is off until asked for (seo/theme.py).
    seo_local_fonts = c.Type(bool, default=False)
    """Google Fonts off (render-blocking, unreachable from mainland China): `theme.font`'s families lead a
    stack of fonts from the reader's system, with the CJK face each system ships."""
    seo_contrast = c.Type(bool, default=False)
    """Code comments, operators and punctuation, and the footer's light text, darker (4.5:1 contrast)."""
    seo_underline_links = c.Type(bool, default=False)
    """Links in running text underlined (colour alone does not mark them; Lighthouse's link-in-text-block)."""
    seo_legible_code = c.Type(bool, default=False)
    """Code at least 12 px on phones (Material's inline code in tables and admonitions is smaller)."""
    seo_lazy_blocks = c.Type(bool, default=False)
    """Tables and charts below the fold laid out only when scrolled near (CSS `content-visibility`)."""
    seo_search_dialog_name = c.Type(bool, default=False)
    """Template override: the search dialog gets an accessible name (Material's `partials/search.html`)."""
    seo_pin_list_item = c.Type(bool, default=False)
    """Template override: a pinned post's pin is a list item (Material's `partials/post.html`)."""
    seo_page_language_words = c.Type(bool, default=False)
    """A page whose front matter sets another `lang` than the site's shows Material's words and the blog's
    post dates in its own language (a template override of `partials/language.html`)."""
    seo_lean_highlighting = c.Type(bool, default=False)
    """Unwrap the highlighting spans that change little on screen (names, punctuation, operators): fewer
    DOM nodes, operators and punctuation in the code's own colour."""
    seo_copy_buttons_after_load = c.Type(bool, default=False)
    """Material's copy buttons (`content.code.copy`) added after the page has loaded, a few code blocks
    per task, instead of while it loads (a post with many code blocks blocked the main thread)."""
    seo_baidu_verification = c.Optional(c.Type(str))
    """Content of `<meta name="baidu-site-verification">`."""
    seo_google_verification = c.Optional(c.Type(str))
    """Content of `<meta name="google-site-verification">`."""
    seo_default_image = c.Optional(c.Type(str))
    """og:image of pages with no image of their own when cards are off; relative to docs_dir."""
    seo_related = c.Type(bool, default=False)
    """A block of links to up to `seo_related_count` related posts of its language in each post."""
    seo_related_place = c.Choice(tuple(RELATED_PLACES), default="end")
    """Where the block goes: `end` of the post's content, or `template` (only the page's context variable
    `seo_related`, for the blog's own template override to place)."""
    seo_related_count = c.Type(int, default=RELATED_COUNT)
    """How many posts a related-posts block lists at most."""
    seo_noindex_archives = c.Type(bool, default=True)
    """Material's date archives say `noindex, follow` and leave the sitemap: they list what the home
    page lists, and the audit would find them near-duplicates of it."""
    seo_audit = c.Type(bool, default=True)
    """Audit the built site at the end of every build (errors fail `mkdocs build --strict`)."""
    seo_sitemap = c.Type(bool, default=True)
    """Write the sitemaps (replacing MkDocs' own) and robots.txt."""
    seo_sitemap_max_urls = c.Type(int, default=MAX_URLS)
    """URLs per sitemap file before the sitemap splits under an index."""
    seo_feed = c.Optional(c.Type(bool))
    """Write `feed.xml`, an Atom feed of the posts, and link it from each page's head; default: unless a
    feed plugin (`rss`, Material's blog `rss`) already writes the site's feed."""
    seo_indexnow_key_file = c.Type(str, default=KEY_FILE)
    """The committed IndexNow key, relative to mkdocs.yml; every build publishes it as `<key>.txt`."""

    # Findings: what the build reports, what fails `--strict` (seo/registry.py, seo/baseline.py).
    seo_rules = c.Type(dict, default={})
    """The blog's own severity of a rule, or `off`: `{render-blocking-third-party: off, image-size-missing:
    info}`; each id is checked against `blog seo rules`."""
    seo_baseline = c.Type(str, default=BASELINE_FILE)
    """The findings `blog seo baseline` accepted, relative to mkdocs.yml: `--strict` fails only on others."""
    seo_posts = c.Type(list, default=[])
    """Glob patterns of docs_dir paths that are posts too (`notes/*.md`), for a blog without Material's blog
    plugin; its posts are posts in any case. A date in front matter alone makes no post."""
    seo_timezone = c.Optional(c.Type(str))
    """The timezone of front-matter times without an offset (`Asia/Shanghai`); default: the
    git-revision-date-localized plugin's `timezone`, else UTC."""
