"""The head tags and JSON-LD a page gets, and how they replace the theme's own.

Material already writes `<title>`, a description and a canonical link; we remove those from the head
and write one complete, escaped set, so a page never carries two descriptions or two titles.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from html import escape

# The rest of a tag after its first attribute: quoted values may hold ">" (the theme does not escape it).
_ATTRS = r"""(?:\s+[^\s=>/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*\s*/?>"""
# Tags of the theme that ours replace; matched only inside <head>.
_REPLACED = re.compile(
    r"""\s*(?:<title\b[^>]*>.*?</title>"""
    r"""|<meta\s+name=["']?(?:description|keywords|robots)["']?""" + _ATTRS +
    r"""|<link\s+rel=["']?canonical["']?""" + _ATTRS + ")",
    re.IGNORECASE | re.DOTALL,
)
_HEAD = re.compile(r"<head\b[^>]*>(.*?)</head>", re.IGNORECASE | re.DOTALL)
_HTML_LANG = re.compile(r"<html\b([^>]*)>", re.IGNORECASE)
_LANG_ATTR = re.compile(r"""\slang=("[^"]*"|'[^']*'|[^\s>]+)""", re.IGNORECASE)


@dataclass(frozen=True)
class PageMeta:
    """Everything the head says about one page; values are plain text, escaped only when rendered."""

    title: str  # the <title>, site name included
    headline: str  # the page's own title: og:title, JSON-LD headline
    description: str
    canonical: str
    lang: str
    site_name: str
    og_type: str = "website"  # "article" for posts
    keywords: tuple[str, ...] = ()
    image: str | None = None
    author: str | None = None
    published: datetime | None = None
    modified: datetime | None = None
    noindex: bool = False
    verification: dict[str, str] = field(default_factory=dict)  # meta name -> content
    feed: str | None = None  # absolute URL of the site's Atom feed


def _meta(name: str, content: str, attr: str = "name") -> str:
    return f'<meta {attr}="{escape(name)}" content="{escape(content)}">'


def jsonld(meta: PageMeta) -> dict:
    """The schema.org BlogPosting of a post (https://schema.org/BlogPosting)."""
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
        data["author"] = {"@type": "Person", "name": meta.author}
        data["publisher"] = {"@type": "Organization", "name": meta.site_name}
    if meta.image:
        data["image"] = [meta.image]
    if meta.keywords:
        data["keywords"] = ", ".join(meta.keywords)
    return data


def _script_json(data: dict) -> str:
    """JSON safe inside <script>: `<`, `>` and `&` become \\u escapes, so `</script>` cannot close it."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_head(meta: PageMeta) -> str:
    """The tags to insert before </head>, each value HTML-escaped."""
    tags = [f"<title>{escape(meta.title, quote=False)}</title>", _meta("description", meta.description)]
    if meta.keywords:
        tags.append(_meta("keywords", ", ".join(meta.keywords)))
    tags.append(f'<link rel="canonical" href="{escape(meta.canonical)}">')
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
    if meta.image:
        og["og:image"] = meta.image
    if meta.og_type == "article" and meta.published:
        og["article:published_time"] = meta.published.isoformat()
        og["article:modified_time"] = (meta.modified or meta.published).isoformat()
    tags.extend(_meta(key, value, attr="property") for key, value in og.items())
    tags.append(_meta("twitter:card", "summary_large_image" if meta.image else "summary"))
    tags.append(_meta("twitter:title", meta.headline))
    tags.append(_meta("twitter:description", meta.description))
    if meta.image:
        tags.append(_meta("twitter:image", meta.image))
    if meta.og_type == "article":
        tags.append(f'<script type="application/ld+json">{_script_json(jsonld(meta))}</script>')
    return "\n".join(tags)


def inject(html: str, meta: PageMeta) -> str:
    """Replace the theme's title, description, keywords, robots and canonical, and set `<html lang>`."""
    head = _HEAD.search(html)
    if head is None:
        return html
    inner = _REPLACED.sub("", head.group(1))
    inner = inner.rstrip() + "\n" + render_head(meta) + "\n"
    html = html[: head.start(1)] + inner + html[head.end(1) :]
    return set_lang(html, meta.lang)


def set_lang(html: str, lang: str) -> str:
    """Give `<html>` this `lang` (the theme writes `zh`; Baidu and Lighthouse read `zh-CN` better)."""

    def replace(match: re.Match) -> str:
        attrs = _LANG_ATTR.sub("", match.group(1))
        return f'<html lang="{escape(lang)}"{attrs}>'

    return _HTML_LANG.sub(replace, html, count=1)
