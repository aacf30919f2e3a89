"""What slows a page's first paint: a DOM too large, stylesheets and scripts from another host the head
waits for. (A page's weight with what it loads is site-wide: `sitewide`.)
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

from perfblog.seo.facts import PageFacts
from perfblog.seo.registry import Finding
from perfblog.seo.rules import DOM_MAX_ELEMENTS, DOM_TOO_LARGE, RENDER_BLOCKING_THIRD_PARTY, RULES


@RULES.check(DOM_TOO_LARGE)
def check_dom_size(p: PageFacts) -> Iterator[Finding]:
    """A DOM a browser lays out quickly (Lighthouse's dom-size)."""
    if p.elements > DOM_MAX_ELEMENTS:
        yield DOM_TOO_LARGE.at(p.page, f"{p.elements} elements (> {DOM_MAX_ELEMENTS})",
                               f"页面有 {p.elements} 个元素（超过 {DOM_MAX_ELEMENTS}）")


@RULES.check(RENDER_BLOCKING_THIRD_PARTY)
def check_render_blocking(p: PageFacts) -> Iterator[Finding]:
    """Stylesheets and synchronous scripts in the head hold the first paint until they arrive."""
    site = urlsplit(p.canonical or p.og.get("og:url", "")).netloc.lower()
    for url in p.blocking:
        host = urlsplit(url).netloc.lower()
        if host and host != site:
            yield RENDER_BLOCKING_THIRD_PARTY.at(p.page, f"the head waits for {url} from {host}",
                                                 f"页面要等 {host} 上的 {url} 才能显示")
