"""Reading time of a post from its prose only: code, outputs, tables and charts from snippets are skimmed,
not read, and counting them turned a 10-minute post into "31 分钟".

Han characters are read at ``HAN_PER_MINUTE``, other words at ``WORDS_PER_MINUTE``. Left out: ``pre``
and ``code`` blocks, SVG, figures, folded ``details``, tables, and everything an embed produced
(elements with a ``snippet-`` class). The snippets plugin gives the result to Material's blog plugin
as the post's ``readtime`` unless the post sets one in its front matter.
"""

from __future__ import annotations

import math
import re

HAN_PER_MINUTE = 400
WORDS_PER_MINUTE = 265
_SKIPPED = {"pre", "code", "svg", "figure", "details", "table", "script", "style"}
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’.+_-]*")


def prose(html: str) -> str:
    """The text a reader reads: the page's HTML without code, outputs, tables, charts and embeds."""
    from lxml import html as lxml_html

    if not html.strip():
        return ""
    root = lxml_html.fragment_fromstring(html, create_parent="div")
    doomed = [el for el in root.iter() if isinstance(el.tag, str) and (
        el.tag in _SKIPPED or any(c.startswith("snippet-") for c in (el.get("class") or "").split()))]
    for el in doomed:
        if el.getparent() is not None:
            el.drop_tree()
    return root.text_content()


def minutes(html: str) -> int:
    """Whole minutes to read the prose of ``html`` (at least one)."""
    text = prose(html)
    han = len(_HAN.findall(text))
    words = len(_WORD.findall(_HAN.sub(" ", text)))
    return max(1, math.ceil(han / HAN_PER_MINUTE + words / WORDS_PER_MINUTE))
