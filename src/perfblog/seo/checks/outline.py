"""A page's outline: enough text for a page that is not a post, a title its one H1 agrees with, one H1,
no skipped heading level.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from perfblog.seo import text
from perfblog.seo.facts import PageFacts
from perfblog.seo.registry import Finding
from perfblog.seo.rules import (
    H1_MISSING,
    H1_MULTIPLE,
    HEADING_SKIP,
    PAGE_MIN_CHARS,
    PAGE_THIN,
    RULES,
    TITLE_H1_MIN_SHARED,
    TITLE_H1_MISMATCH,
)

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_NON_WORD = re.compile(r"\W+")

@RULES.check(PAGE_THIN, TITLE_H1_MISMATCH, HEADING_SKIP)
def check_structure(p: PageFacts) -> Iterator[Finding]:
    """What an indexable page's outline says: enough text, a title the H1 agrees with, no skipped
    heading level."""
    if not p.is_post and (chars := p.prose_chars) < PAGE_MIN_CHARS:
        yield PAGE_THIN.at(p.page, f"{chars} characters of text outside headings (< {PAGE_MIN_CHARS})",
                           f"标题之外只有 {chars} 个字符（少于 {PAGE_MIN_CHARS}）")
    if p.title and len(p.h1) == 1 and not _agrees(p.title, p.h1[0]):
        yield TITLE_H1_MISMATCH.at(p.page, f"title {p.title!r} and H1 {p.h1[0]!r} disagree",
                                   f"标题「{p.title}」与 H1「{p.h1[0]}」说的不是一回事")
    for (above, upper), (level, label) in itertools.pairwise(p.headings):
        if level > above + 1:
            yield HEADING_SKIP.at(p.page, f"<h{level}> {label[:40]!r} follows <h{above}> {upper[:40]!r}",
                                  f"<h{level}>「{label[:40]}」跳过了一级，"
                                  f"紧跟在 <h{above}>「{upper[:40]}」之后")


def _agrees(title: str, h1: str) -> bool:
    """Whether a title and an H1 say the same thing: one holds the other (the title may add the site
    name or a page number), or the title holds at least `TITLE_H1_MIN_SHARED` of the H1's words."""
    t, h = _NON_WORD.sub("", text.normalize(title)), _NON_WORD.sub("", text.normalize(h1))
    if not t or not h or h in t or t in h:
        return True
    h1_words, title_words = _content_words(h1), _content_words(title)
    return len(h1_words & title_words) >= TITLE_H1_MIN_SHARED * len(h1_words)


def _content_words(value: str) -> set[str]:
    """The words of a title, without one-character Chinese words (的, 与, 和 carry no subject)."""
    words = text.default_segmenter().words(text.normalize(value))
    return {w for w in words if len(w) > 1 or not _HAN.match(w)}



@RULES.check(H1_MISSING, H1_MULTIPLE)
def check_headings(p: PageFacts) -> Iterator[Finding]:
    if not p.h1:
        yield H1_MISSING.at(p.page, "no <h1>", "没有 <h1>")
    elif len(p.h1) > 1:
        yield H1_MULTIPLE.at(
            p.page, f"{len(p.h1)} <h1> elements; use one", f"有 {len(p.h1)} 个 <h1>，只留一个")
