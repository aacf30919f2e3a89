"""Images: alt text, and a size the browser knows before the image loads.
"""

from __future__ import annotations

from collections.abc import Iterator

from perfblog.seo.facts import PageFacts
from perfblog.seo.registry import Finding
from perfblog.seo.rules import IMAGE_ALT_MISSING, IMAGE_SIZE_MISSING, RULES


@RULES.check(IMAGE_ALT_MISSING, IMAGE_SIZE_MISSING)
def check_images(p: PageFacts) -> Iterator[Finding]:
    for src, alt in p.images:
        if alt is None:
            yield IMAGE_ALT_MISSING.at(p.page, f"<img src={src!r}> has no alt attribute",
                                       f"图片 {src!r} 没有 alt 文字")
    for src in p.unsized_images:
        yield IMAGE_SIZE_MISSING.at(p.page, f"<img src={src!r}> has no width and height",
                                    f"图片 {src!r} 没有宽和高")
