"""Options of the `seo` plugin: declared once, flat, each prefixed `seo_`."""

from __future__ import annotations

from mkdocs.config import base
from mkdocs.config import config_options as c

from perfblog.seo.indexnow_key import KEY_FILE
from perfblog.seo.meta import AuthorKind
from perfblog.seo.sitemap import MAX_URLS


class SeoConfig(base.Config):
    """`plugins: - seo: {seo_author: ..., ...}` in mkdocs.yml."""

    seo_author = c.Optional(c.Type(str))  # JSON-LD author; defaults to site_author
    seo_author_url = c.Optional(c.Type(str))  # the author's page (JSON-LD author.url); defaults to site_url
    seo_author_type = c.Choice([kind.value for kind in AuthorKind], default=AuthorKind.PERSON.value)
    seo_slogan = c.Optional(c.Type(str))  # the home page's <title> becomes "site_name - slogan"
    seo_cards = c.Type(bool, default=True)  # draw a 1200×630 social card for each page without an image
    seo_card_font = c.Optional(c.Type(str))  # a CJK font file for the cards; default: one found here
    seo_baidu_verification = c.Optional(c.Type(str))  # content of <meta name="baidu-site-verification">
    seo_google_verification = c.Optional(c.Type(str))  # content of <meta name="google-site-verification">
    seo_default_image = c.Optional(c.Type(str))  # og:image of pages without one when cards are off
    seo_audit = c.Type(bool, default=True)  # audit the built site at the end of every build
    seo_sitemap = c.Type(bool, default=True)  # replace MkDocs' sitemap; write robots.txt
    seo_sitemap_max_urls = c.Type(int, default=MAX_URLS)  # URLs per sitemap file before splitting
    seo_feed = c.Type(bool, default=True)  # write feed.xml (Atom) of the posts
    seo_indexnow_key_file = c.Type(str, default=KEY_FILE)  # committed IndexNow key; site gets <key>.txt
