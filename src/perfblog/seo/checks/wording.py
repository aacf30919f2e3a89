"""What a page says in its title, its description and its text: widths engines show, placeholders
`blog new` wrote and nobody replaced, a post's length.
"""

from __future__ import annotations

from collections.abc import Iterator

from perfblog.core.conventions import PLACEHOLDERS
from perfblog.seo import text
from perfblog.seo.facts import PageFacts
from perfblog.seo.registry import Finding
from perfblog.seo.rules import (
    CONTENT_MIN_WORDS,
    CONTENT_TOO_THIN,
    DESCRIPTION_MAX_WIDTH,
    DESCRIPTION_MIN_WIDTH,
    DESCRIPTION_MISSING,
    DESCRIPTION_TOO_LONG,
    DESCRIPTION_TOO_SHORT,
    PLACEHOLDER_UNFILLED,
    RULES,
    TITLE_MAX_WIDTH,
    TITLE_MISSING,
    TITLE_TOO_LONG,
)


@RULES.check(TITLE_MISSING, TITLE_TOO_LONG)
def check_title(p: PageFacts) -> Iterator[Finding]:
    if not p.title:
        yield TITLE_MISSING.at(p.page, "no <title>, or it is empty", "没有 <title>，或它是空的")
    elif (w := text.display_width(p.title)) > TITLE_MAX_WIDTH:
        yield TITLE_TOO_LONG.at(p.page, f"title is {w} units wide (> {TITLE_MAX_WIDTH}); engines cut it",
                                f"标题宽 {w} 个单位（超过 {TITLE_MAX_WIDTH}），搜索结果会截断它")


_ZH_FIELDS = {"the title": "标题", "the description": "描述", "the keywords": "关键词", "a heading": "小标题"}


@RULES.check(PLACEHOLDER_UNFILLED)
def check_placeholders(p: PageFacts) -> Iterator[Finding]:
    """What `blog new` writes for the author to fill in must never be published, anywhere in the page."""
    headings = [label for _, label in p.headings]
    fields = {"the title": [p.title or ""], "the description": [p.description or ""],
              "the keywords": p.keywords or [], "a heading": headings}
    text: str | None = None
    for placeholder in PLACEHOLDERS.values():
        for name, values in fields.items():
            if any(placeholder in value for value in values):
                yield PLACEHOLDER_UNFILLED.at(p.page, f"placeholder {placeholder!r} left in {name}",
                                              f"{_ZH_FIELDS[name]}里还留着占位文字「{placeholder}」")
        if text is None:  # the body less its headings (which are part of the body's text), once
            text = p.body
            for label in headings:
                text = text.replace(label, " ", 1)
        if (at := text.find(placeholder)) >= 0:
            excerpt = text[at:at + 40].strip()
            yield PLACEHOLDER_UNFILLED.at(
                p.page, f"placeholder {placeholder!r} left in the text: {excerpt!r}",
                                          f"正文里还留着占位文字「{placeholder}」：「{excerpt}」")


@RULES.check(DESCRIPTION_MISSING, DESCRIPTION_TOO_SHORT, DESCRIPTION_TOO_LONG)
def check_description(p: PageFacts) -> Iterator[Finding]:
    if not p.description:
        yield DESCRIPTION_MISSING.at(p.page, 'no <meta name="description">, or it is empty',
                                     "没有描述（meta description），或它是空的")
        return
    width = text.display_width(p.description)
    if width < DESCRIPTION_MIN_WIDTH:
        yield DESCRIPTION_TOO_SHORT.at(p.page, f"description is {width} units (< {DESCRIPTION_MIN_WIDTH})",
                                       f"描述只有 {width} 个单位（少于 {DESCRIPTION_MIN_WIDTH}）")
    elif width > DESCRIPTION_MAX_WIDTH:
        yield DESCRIPTION_TOO_LONG.at(p.page, f"description is {width} units (> {DESCRIPTION_MAX_WIDTH})",
                                      f"描述有 {width} 个单位（超过 {DESCRIPTION_MAX_WIDTH}）")



@RULES.check(CONTENT_TOO_THIN)
def check_length(p: PageFacts) -> Iterator[Finding]:
    if p.words < CONTENT_MIN_WORDS:
        yield CONTENT_TOO_THIN.at(p.page, f"{p.words} words outside code (< {CONTENT_MIN_WORDS})",
                                  f"代码之外只有 {p.words} 词（少于 {CONTENT_MIN_WORDS}）")
