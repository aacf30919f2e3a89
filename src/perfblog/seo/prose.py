"""Words for a page's head that the author did not write: a page's prose read from its HTML, cut where
a reader stops, and what a view lists, in the page's language.

`pages` decides which text a page's head says; this module only shapes text and knows no MkDocs page,
so what a generated title or description looks like can be read (and tested) apart from the build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import lxml.html
from lxml import etree

from perfblog.seo import text
from perfblog.seo.rules import DESCRIPTION_MAX_WIDTH

#: A generated description is cut at a sentence or clause end at least this wide (about 50 汉字).
DESCRIPTION_CUT_MIN_WIDTH = 100
_SENTENCE_ENDS = "。！？!?"
_CLAUSE_ENDS = "，、；：,;:"
_TITLE_BREAKS = "：:｜|—–，、,;；"  # where a long title may be cut without an ellipsis (and spaces)
# Blocks whose text is not the page's prose: headings, code blocks, tables, figures, scripts.
_NOT_PROSE = etree.XPath(
    ".//pre | .//h1 | .//h2 | .//h3 | .//h4 | .//h5 | .//h6 | .//table | .//figure | .//script | .//style"
    " | .//svg | .//details | .//*[contains(concat(' ', @class, ' '), ' headerlink ')]"
    " | .//*[contains(concat(' ', @class, ' '), ' highlight ')]"
    " | .//*[contains(concat(' ', @class, ' '), ' admonition-title ')]"
)
_BLOCKS = {"p", "li", "dd", "dt", "blockquote", "div", "section", "article"}
_CJK = "\u3000-\u303f\uff00-\uffef\u4e00-\u9fff"  # ideographs and CJK punctuation
_CJK_GAP = re.compile(f"(?<=[{_CJK}]) (?=[{_CJK}])")  # the space joining two blocks of Chinese
_OPENING_BYTES = 16_384  # the first part of a page `opening` reads; four times more each time it is short


def cut(value: str, max_width: int) -> str:
    """The longest start of `value` within `max_width` display units, not ending inside a Latin word."""
    out, width = [], 0
    for char in value:
        width += text.display_width(char)
        if width > max_width:
            break
        out.append(char)
    kept = "".join(out)
    if len(kept) < len(value) and value[len(kept)].isalnum() and kept[-1:].isalnum():
        word_start = re.search(r"[A-Za-z0-9_.]*$", kept).start()
        if word_start > 0:
            kept = kept[:word_start]
    return kept.rstrip()


def shorten(value: str, max_width: int) -> str:
    """Cut `value` to `max_width` display units, ending with … when cut."""
    if text.display_width(value) <= max_width:
        return value
    return cut(value, max_width - 2).rstrip(_CLAUSE_ENDS + " ") + "…"


def summarise(value: str, max_width: int = DESCRIPTION_MAX_WIDTH,
              min_width: int = DESCRIPTION_CUT_MIN_WIDTH) -> str:
    """`value` cut where a reader would stop: the last sentence end that fits, else the last clause end
    (marked with …), else a plain cut with …; whole when it fits."""
    if text.display_width(value) <= max_width:
        return value
    kept = cut(value, max_width - 2)  # room for a closing …
    for ends, mark in ((_SENTENCE_ENDS, ""), (_CLAUSE_ENDS, "…")):
        for n in range(len(kept), 0, -1):
            if kept[n - 1] in ends and text.display_width(kept[:n]) >= min_width:
                return kept[:n] if not mark else kept[: n - 1] + mark
    return shorten(value, max_width)


def title_part(value: str, max_width: int) -> str:
    """A page title cut to `max_width`: at the last punctuation break (colon, dash, comma) that fits,
    else the last space, else with …; a subtitle dropped at a break needs no ellipsis."""
    if text.display_width(value) <= max_width:
        return value
    kept = cut(value, max_width)
    for is_break in (lambda c: c in _TITLE_BREAKS, str.isspace):
        for n in range(min(len(kept), len(value) - 1), 0, -1):
            if is_break(value[n]):
                head = value[:n].rstrip(_TITLE_BREAKS + " ")
                if text.display_width(head) >= max_width // 2:
                    return head
    return shorten(value, max_width)


def plain(content: str) -> str:
    """The prose of rendered page content: inline code kept, headings, code blocks and tables dropped."""
    if not content.strip():
        return ""
    root = lxml.html.fragment_fromstring(content, create_parent="div")
    for element in _NOT_PROSE(root):
        if element.getparent() is not None:
            element.drop_tree()
    for element in root.iter(*_BLOCKS):
        element.tail = " " + (element.tail or "")  # paragraphs do not run into each other
    return _CJK_GAP.sub("", " ".join(root.text_content().split()))


def opening(content: str, width: int) -> str:
    """The start of ``plain(content)``, more than `width` display units of it (all of it when shorter),
    read from as little of the HTML as holds it: a generated description needs its first 160 units, and a
    page of ten thousand highlighted lines (a real blog's) was parsed whole for them, on every build.

    The HTML is cut before a tag, so no tag or character reference is cut: the elements before the cut
    are parsed as in the whole, the one left open is closed there, and the prose of the part is the
    start of the whole's."""
    size = _OPENING_BYTES
    while size < len(content):
        cut_at = content.rfind("<", 0, size)
        said = plain(content[:cut_at]) if cut_at > 0 else ""
        if text.display_width(said) > width:
            return said
        size *= 4
    return plain(content)


def first_paragraph(content: str) -> str:
    """The text of the first paragraph with any text (a post's fallback description), else its prose."""
    if "<p" in content:
        root = lxml.html.fragment_fromstring(content, create_parent="div")
        for paragraph in root.iter("p"):
            said = plain(lxml.html.tostring(paragraph, encoding="unicode"))
            if said:
                return said
    return plain(content)



@dataclass(frozen=True)
class Words:
    """What generated titles and descriptions say in a page's language (an English blog's blog index
    does not read `Index，共 10 篇`)."""

    page: str  # a paginated view's number
    listing: str  # a view's lead and how many posts it lists
    one: str  # a view's lead when it lists one
    quoted: str  # a listed title
    joined: str  # between listed titles
    more: str  # after the titles when some did not fit
    stop: str  # ends a sentence before the site's description


#: By the page's primary language subtag; a language not here reads English.
WORDS = {
    "zh": Words("（第 {n} 页）", "{lead}，共 {n} 篇：", "{lead}：", "《{title}》", "、", "等", "。"),
    "en": Words(" (page {n})", "{lead}: {n} posts: ", "{lead}: ", "“{title}”", ", ", ", …", ". "),
}



def listing(lead: str, titles: list[str], max_width: int, words: Words = WORDS["zh"]) -> str:
    """`lead，共 N 篇：《a》、《b》等` (in the page's `words`): as many whole titles as fit, never one cut
    in half."""
    head = (words.listing if len(titles) > 1 else words.one).format(lead=lead, n=len(titles))
    shown: list[str] = []
    for title in titles:
        candidate = words.joined.join([*shown, words.quoted.format(title=title)])
        if shown and text.display_width(head + candidate + words.more) > max_width:
            break
        shown.append(words.quoted.format(title=title))
    listed = words.joined.join(shown) + (words.more if len(shown) < len(titles) else "")
    return summarise(head + listed, max_width)

