"""Options of the `seo` plugin: declared once, flat, each prefixed `seo_`."""

from __future__ import annotations

from mkdocs.config import base
from mkdocs.config import config_options as c

from perfblog.seo.indexnow_key import KEY_FILE
from perfblog.seo.meta import AuthorKind
from perfblog.seo.related import COUNT as RELATED_COUNT
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
    seo_lean_highlighting = c.Type(bool, default=True)
    """Unwrap the highlighting spans that change little on screen (names, punctuation, operators)."""
    seo_copy_buttons_after_load = c.Type(bool, default=True)
    """Material's copy buttons (`content.code.copy`) added after the page has loaded, a few code blocks
    per task, instead of while it loads (a post with many code blocks blocked the main thread)."""
    seo_baidu_verification = c.Optional(c.Type(str))
    """Content of `<meta name="baidu-site-verification">`."""
    seo_google_verification = c.Optional(c.Type(str))
    """Content of `<meta name="google-site-verification">`."""
    seo_default_image = c.Optional(c.Type(str))
    """og:image of pages with no image of their own when cards are off; relative to docs_dir."""
    seo_related = c.Type(bool, default=True)
    """End each post with a block of links to up to `seo_related_count` related posts of its language."""
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
    seo_feed = c.Type(bool, default=True)
    """Write `feed.xml`, an Atom feed of the posts."""
    seo_indexnow_key_file = c.Type(str, default=KEY_FILE)
    """The committed IndexNow key, relative to mkdocs.yml; every build publishes it as `<key>.txt`."""
