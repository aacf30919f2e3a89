"""Links: hrefs crawlers can follow, link text that names its target, and a post's own text linking
to other pages of the site and elsewhere. (The link graph of the whole site is `seo.links`'.)
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from urllib.parse import urljoin, urlsplit

from perfblog.core import urls as url_syntax
from perfblog.seo import text
from perfblog.seo.facts import PageFacts
from perfblog.seo.registry import Finding
from perfblog.seo.rules import (
    GENERIC_LINK_TEXT,
    INTERNAL_LINKS_FEW,
    INTERNAL_LINKS_MIN,
    INTERNAL_LINKS_NONE,
    LINK_EMPTY_HREF,
    LINK_TEXT_GENERIC,
    OUTBOUND_LINKS_NONE,
    RULES,
)


@RULES.check(LINK_EMPTY_HREF, LINK_TEXT_GENERIC)
def check_anchors(p: PageFacts) -> Iterator[Finding]:
    for href, label in p.anchors:
        target = (href or "").strip()
        if not target or target.lower().startswith(("javascript:", "file:")):
            yield LINK_EMPTY_HREF.at(
                p.page, f"link {label[:40]!r} has href {href!r}, which crawlers cannot follow",
                                     f"链接「{label[:40]}」的地址是 {href!r}，爬虫无法跟随")
        elif not _parses(target):
            yield LINK_EMPTY_HREF.at(
                p.page, f"link {label[:40]!r} has href {href!r}, which is not a URL",
                f"链接「{label[:40]}」的地址 {href!r} 不是合法的地址")
        elif _generic(label):
            yield LINK_TEXT_GENERIC.at(p.page, f"link text {label!r} says nothing about {target[:60]!r}",
                                       f"链接文字「{label}」没有说出 {target[:60]!r} 是什么")


@lru_cache(maxsize=1 << 14)  # every page repeats the navigation's links (a 391-page blog: 142,000 hrefs)
def _parses(href: str) -> bool:
    return url_syntax.parses(href)


@lru_cache(maxsize=1 << 14)  # every page repeats the navigation's links
def _generic(label: str) -> bool:
    """Whether a link's text says nothing of where it goes (点击这里, read more)."""
    return text.normalize(label).strip(" .:：。!！>»→") in GENERIC_LINK_TEXT



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
