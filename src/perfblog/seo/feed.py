"""An Atom feed (RFC 4287) of the posts, newest first: readers and engines discover new posts from it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lxml import etree

from perfblog.core import project
from perfblog.seo.sitemap import w3c

ATOM = "http://www.w3.org/2005/Atom"
FEED_NAME = "feed.xml"
#: Plugins that write a blog's feed themselves (mkdocs-rss-plugin is `rss`), named with or without a
#: theme's prefix: with one configured, the seo plugin writes no second feed unless asked.
FEED_PLUGINS = ("rss",)


def wanted(option: bool | None, config: Any) -> bool:
    """Whether the seo plugin writes its feed: as `seo_feed` says, else unless a feed plugin writes one."""
    if option is not None:
        return option
    return not any(project.material_plugin_config(config, name) is not None for name in FEED_PLUGINS)


@dataclass(frozen=True)
class Entry:
    title: str
    url: str
    summary: str
    published: datetime
    updated: datetime | None = None


#: What XML 1.0 cannot hold: controls other than tab and newlines, lone surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str | None) -> str | None:
    """`text` without the characters XML cannot hold (lxml refuses them; a title may have one)."""
    return None if text is None else _NOT_XML.sub("", text)


def write(
    entries: Iterable[Entry],
    path: Path,
    *,
    title: str,
    site_url: str,
    author: str,
    lang: str,
    limit: int = 50,
) -> None:
    """Write the feed; lxml escapes every value, and characters XML cannot hold (controls, lone
    surrogates) are dropped from the texts."""
    posts = sorted(entries, key=lambda e: e.published, reverse=True)[:limit]
    feed = etree.Element(f"{{{ATOM}}}feed", nsmap={None: ATOM})
    feed.set("{http://www.w3.org/XML/1998/namespace}lang", lang)
    etree.SubElement(feed, f"{{{ATOM}}}title").text = xml_text(title)
    etree.SubElement(feed, f"{{{ATOM}}}id").text = site_url
    etree.SubElement(feed, f"{{{ATOM}}}link", href=site_url)
    etree.SubElement(
        feed, f"{{{ATOM}}}link", href=site_url + FEED_NAME, rel="self", type="application/atom+xml"
    )
    newest = max((e.updated or e.published for e in posts), default=datetime.now(UTC))
    etree.SubElement(feed, f"{{{ATOM}}}updated").text = w3c(newest)
    etree.SubElement(etree.SubElement(feed, f"{{{ATOM}}}author"), f"{{{ATOM}}}name").text = xml_text(author)
    for post in posts:
        entry = etree.SubElement(feed, f"{{{ATOM}}}entry")
        etree.SubElement(entry, f"{{{ATOM}}}title").text = xml_text(post.title)
        etree.SubElement(entry, f"{{{ATOM}}}id").text = post.url
        etree.SubElement(entry, f"{{{ATOM}}}link", href=post.url)
        etree.SubElement(entry, f"{{{ATOM}}}published").text = w3c(post.published)
        etree.SubElement(entry, f"{{{ATOM}}}updated").text = w3c(post.updated or post.published)
        etree.SubElement(entry, f"{{{ATOM}}}summary").text = xml_text(post.summary)
    path.write_bytes(etree.tostring(feed, xml_declaration=True, encoding="UTF-8", pretty_print=True))
