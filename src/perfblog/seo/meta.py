"""The head tags and JSON-LD a page gets, and how they replace the theme's own.

Material already writes `<title>`, a description and a canonical link, and its social plugin writes
Open Graph and X (Twitter) tags; we remove all of those from the head and write one complete, escaped
set, so a page never carries two descriptions, two titles or two og:image tags. An image the social
plugin drew is kept when the page has none of its own.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from html import escape, unescape
from urllib.parse import urljoin, urlsplit

from perfblog.seo.languages import Alternate

# The rest of a tag after its first attribute: quoted values may hold ">" (the theme does not escape it).
_ATTRS = r"""(?:\s+[^\s=>/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*\s*/?>"""
# Tags of the theme that ours replace; matched only inside <head>.
_REPLACED = re.compile(
    r"""\s*(?:<title\b[^>]*>.*?</title>"""
    r"""|<meta\s+name=["']?(?:description|keywords|robots)["']?""" + _ATTRS +
    r"""|<meta\s+(?:property|name)=["']?(?:og|twitter|article):[^"'\s>]*["']?""" + _ATTRS +
    r"""|<link\s+rel=["']?canonical["']?""" + _ATTRS + ")",
    re.IGNORECASE | re.DOTALL,
)
_THEME_IMAGE = re.compile(
    r"""<meta\s+property=["']?og:image["']?\s+content=["']([^"']+)["']""", re.IGNORECASE
)
_HEAD = re.compile(r"<head\b[^>]*>(.*?)</head>", re.IGNORECASE | re.DOTALL)
_HTML_LANG = re.compile(r"<html\b([^>]*)>", re.IGNORECASE)
_LANG_ATTR = re.compile(r"""\slang=("[^"]*"|'[^']*'|[^\s>]+)""", re.IGNORECASE)


class AuthorKind(enum.Enum):
    """What schema.org type the author is: Google reads `url` of either to tell authors apart."""

    PERSON = "Person"
    ORGANIZATION = "Organization"


@dataclass(frozen=True)
class Author:
    """Who wrote a post, as the JSON-LD `author` says it."""

    name: str
    url: str | None = None
    kind: AuthorKind = AuthorKind.PERSON


@dataclass(frozen=True)
class Image:
    """The page's image (og:image, JSON-LD `image`); size and alt text when known (a drawn card)."""

    url: str
    width: int | None = None
    height: int | None = None
    alt: str = ""


@dataclass(frozen=True)
class Crumb:
    """One step of a BreadcrumbList: a page's name and absolute URL."""

    name: str
    url: str


@dataclass(frozen=True)
class PageMeta:
    """Everything the head says about one page; values are plain text, escaped only when rendered."""

    title: str  # the <title>, site name included
    headline: str  # the page's own title: og:title, JSON-LD headline
    description: str
    canonical: str
    lang: str  # BCP 47: the page's front matter `lang`, else the site's language
    site_name: str
    site_url: str = ""  # ends with /
    og_type: str = "website"  # "article" for posts
    keywords: tuple[str, ...] = ()
    image: Image | None = None
    author: Author | None = None
    published: datetime | None = None
    modified: datetime | None = None  # for posts, always set: the sitemap's lastmod is the same value
    noindex: bool = False
    verification: dict[str, str] = field(default_factory=dict)  # meta name -> content
    feed: str | None = None  # absolute URL of the site's Atom feed
    alternates: tuple[Alternate, ...] = ()  # hreflang versions, this page included
    breadcrumbs: tuple[Crumb, ...] = ()  # from the home page down to this page
    home: bool = False  # the site's home page: it carries the WebSite JSON-LD
    site_description: str = ""


def _meta(name: str, content: str, attr: str = "name") -> str:
    return f'<meta {attr}="{escape(name)}" content="{escape(content)}">'


def _organisation(meta: PageMeta) -> dict:
    return {"@type": "Organization", "name": meta.site_name, "url": meta.site_url}


def _author(author: Author) -> dict:
    data = {"@type": author.kind.value, "name": author.name}
    if author.url:
        data["url"] = author.url
    return data


def blog_posting(meta: PageMeta) -> dict:
    """The schema.org BlogPosting of a post, with what Google's Article guidance recommends."""
    data: dict = {
        "@context": "https://schema.org",
        "@type": "BlogPosting",
        "headline": meta.headline,
        "description": meta.description,
        "mainEntityOfPage": {"@type": "WebPage", "@id": meta.canonical},
        "url": meta.canonical,
        "inLanguage": meta.lang,
    }
    if meta.published:
        data["datePublished"] = meta.published.isoformat()
        data["dateModified"] = (meta.modified or meta.published).isoformat()
    if meta.author:
        data["author"] = _author(meta.author)
    data["publisher"] = _organisation(meta)
    if meta.image:
        data["image"] = [meta.image.url]
    if meta.keywords:
        data["keywords"] = ", ".join(meta.keywords)
    return data


def website(meta: PageMeta) -> dict:
    """The schema.org WebSite of the home page: where Google reads the site's name."""
    data = {
        "@context": "https://schema.org",
        "@type": "WebSite",
        "name": meta.site_name,
        "url": meta.site_url,
        "inLanguage": meta.lang,
        "publisher": _organisation(meta),
    }
    if meta.site_description:
        data["description"] = meta.site_description
    return data


def breadcrumb_list(meta: PageMeta) -> dict:
    """The schema.org BreadcrumbList from the home page down to this page."""
    items = [
        {"@type": "ListItem", "position": n, "name": crumb.name, "item": crumb.url}
        for n, crumb in enumerate(meta.breadcrumbs, 1)
    ]
    return {"@context": "https://schema.org", "@type": "BreadcrumbList", "itemListElement": items}


def jsonld(meta: PageMeta) -> list[dict]:
    """Every JSON-LD item of the page: WebSite on the home page, BlogPosting on posts, breadcrumbs."""
    items = []
    if meta.home:
        items.append(website(meta))
    if meta.og_type == "article":
        items.append(blog_posting(meta))
    if len(meta.breadcrumbs) > 1:
        items.append(breadcrumb_list(meta))
    return items


def _script_json(data: object) -> str:
    """JSON safe inside <script>: `<`, `>` and `&` become \\u escapes, so `</script>` cannot close it."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _sitemap_shim(meta: PageMeta) -> str | None:
    """A script that points Material's sitemap requests beside our alternate links at the site's own.

    Material's language switcher fetches `sitemap.xml` next to every `<link rel="alternate">`
    (mkdocs-material#6582): it expects language roots, but ours name pages and the feed, so it would
    ask for /post/sitemap.xml (a 404 in the console) or, served away from site_url, for another host.
    """
    alternates = [a.url for a in meta.alternates] + ([meta.feed] if meta.feed else [])
    if not alternates:
        return None
    asked = sorted({urljoin(url, "sitemap.xml") for url in alternates})
    depth = max(0, urlsplit(meta.canonical).path.count("/") - urlsplit(meta.site_url or "/").path.count("/"))
    own = "../" * depth + "sitemap.xml"
    return (
        "<script>((o,s,r)=>{XMLHttpRequest.prototype.open=function(m,u,...a){"
        "return o.call(this,m,s.includes(String(u))?new URL(r,location).href:u,...a)}})"
        f"(XMLHttpRequest.prototype.open,{_script_json(asked)},{_script_json(own)})</script>"
    )


def render_head(meta: PageMeta) -> str:
    """The tags to insert before </head>, each value HTML-escaped."""
    tags = [f"<title>{escape(meta.title, quote=False)}</title>", _meta("description", meta.description)]
    if meta.keywords:
        tags.append(_meta("keywords", ", ".join(meta.keywords)))
    tags.append(f'<link rel="canonical" href="{escape(meta.canonical)}">')
    tags.extend(
        f'<link rel="alternate" hreflang="{escape(a.hreflang)}" href="{escape(a.url)}">'
        for a in meta.alternates
    )
    if meta.noindex:
        tags.append(_meta("robots", "noindex, follow"))
    # Baidu: do not transcode the page for mobile (no-transform) nor wrap it in a site app.
    tags.append('<meta http-equiv="Cache-Control" content="no-transform">')
    tags.append('<meta http-equiv="Cache-Control" content="no-siteapp">')
    if meta.feed:
        tags.append(f'<link rel="alternate" type="application/atom+xml" href="{escape(meta.feed)}">')
    for name, content in sorted(meta.verification.items()):
        tags.append(_meta(name, content))
    og = {
        "og:type": meta.og_type,
        "og:title": meta.headline,
        "og:description": meta.description,
        "og:url": meta.canonical,
        "og:site_name": meta.site_name,
        "og:locale": meta.lang.replace("-", "_"),
    }
    og.update(_image_tags("og:image", meta.image))
    if meta.og_type == "article" and meta.published:
        og["article:published_time"] = meta.published.isoformat()
        og["article:modified_time"] = (meta.modified or meta.published).isoformat()
    tags.extend(_meta(key, value, attr="property") for key, value in og.items())
    tags.append(_meta("twitter:card", "summary_large_image" if meta.image else "summary"))
    tags.append(_meta("twitter:title", meta.headline))
    tags.append(_meta("twitter:description", meta.description))
    if meta.image:
        tags.append(_meta("twitter:image", meta.image.url))
        if meta.image.alt:
            tags.append(_meta("twitter:image:alt", meta.image.alt))
    tags.extend(f'<script type="application/ld+json">{_script_json(item)}</script>' for item in jsonld(meta))
    shim = _sitemap_shim(meta)
    if shim:
        tags.append(shim)
    return "\n".join(tags)


def _image_tags(prefix: str, image: Image | None) -> dict[str, str]:
    if image is None:
        return {}
    tags = {prefix: image.url}
    if image.width and image.height:
        tags[f"{prefix}:width"] = str(image.width)
        tags[f"{prefix}:height"] = str(image.height)
    if image.alt:
        tags[f"{prefix}:alt"] = image.alt
    return tags


def inject(html: str, meta: PageMeta, front_matter: Mapping[str, object] | None = None) -> str:
    """Replace the theme's title, description, keywords, robots, canonical, Open Graph and X tags, and
    set `<html lang>`; the theme's og:image (Material's social plugin) stands when `meta` has none.

    Material prints the front matter's `description` and `author` into the head unescaped, so a `"` or
    `<` in them leaves a broken or live tag that no pattern can find; those exact tags are rewritten
    escaped first (``front_matter``: the page's meta).
    """
    html = _escape_theme_tags(html, front_matter or {})
    head = _HEAD.search(html)
    if head is None:
        return html
    theme_image = _THEME_IMAGE.search(head.group(1))
    if meta.image is None and theme_image:
        meta = replace(meta, image=Image(unescape(theme_image.group(1))))
    inner = _REPLACED.sub("", head.group(1))
    inner = inner.rstrip() + "\n" + render_head(meta) + "\n"
    html = html[: head.start(1)] + inner + html[head.end(1) :]
    return set_lang(html, meta.lang)


def _escape_theme_tags(html: str, front_matter: Mapping[str, object]) -> str:
    """The page with Material's head tags of raw front-matter values (base.html) rewritten escaped; the
    head comes first in the page, so the first occurrence of each is the theme's."""
    for name in ("description", "author"):
        raw = front_matter.get(name)
        if isinstance(raw, str) and raw:
            html = html.replace(f'<meta name="{name}" content="{raw}">', _meta(name, raw), 1)
    return html  # the title is escaped in the page's meta before the theme prints it (pages.escape_titles)


def set_lang(html: str, lang: str) -> str:
    """Give `<html>` this `lang` (the theme writes `zh`; Baidu and Lighthouse read `zh-CN` better)."""

    def replace(match: re.Match) -> str:
        attrs = _LANG_ATTR.sub("", match.group(1))
        return f'<html lang="{escape(lang)}"{attrs}>'

    return _HTML_LANG.sub(replace, html, count=1)
