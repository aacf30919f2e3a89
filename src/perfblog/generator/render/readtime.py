"""Reading time of a post from its prose only: code, outputs, tables and charts from snippets are skimmed,
not read, and counting them turned a 10-minute post into "31 分钟".

Han characters are read at ``HAN_PER_MINUTE``, other words at ``WORDS_PER_MINUTE``. Left out: ``pre``
and ``code`` blocks, SVG, figures, folded ``details``, tables, and everything an embed produced
(elements with a ``snippet-`` class). With its `readtime_prose` option (off by default: the blog's own
words per minute and Material's count stay), the snippets plugin gives the result to Material's blog
plugin as the post's ``readtime`` unless the post sets one in its front matter.
"""

from __future__ import annotations

import math
import re

from lxml import etree

from perfblog.core.trees import drop_tree

HAN_PER_MINUTE = 400
WORDS_PER_MINUTE = 265
_SKIPPED = {"pre", "code", "svg", "figure", "details", "table", "script", "style"}
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")  # runs: a page has hundreds, not thousands
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’.+_-]*")


def prose(html: str) -> str:
    """The text a reader reads: the page's HTML without code, outputs, tables, charts and embeds."""
    if not html.strip():
        return ""
    document = etree.fromstring(html, _PARSER)  # html and body: the parser adds what is missing
    root = document.find("body") if document is not None else None
    if root is None:  # nothing but a comment
        return ""
    doomed = [*root.iter(*_SKIPPED), *_EMBEDS(root)]
    for element in doomed:
        if element.getparent() is not None:  # not inside one removed before
            drop_tree(element)
    return _STRING(root)


def minutes(html: str) -> int:
    """Whole minutes to read the prose of ``html`` (at least one)."""
    text = prose(html)
    han = sum(map(len, _HAN.findall(text)))
    words = len(_WORD.findall(_HAN.sub(" ", text)))  # a run of Han ends a Latin word, as one space does
    return max(1, math.ceil(han / HAN_PER_MINUTE + words / WORDS_PER_MINUTE))


#: lxml's HTML parser without lxml.html's element classes: the same tree, no Python call an element.
_PARSER = etree.HTMLParser()
#: Everything an embed produced: elements with a class that starts with ``snippet-``.
_EMBEDS = etree.XPath(".//*[contains(concat(' ', normalize-space(@class)), ' snippet-')]")
_STRING = etree.XPath("string()", smart_strings=False)
