"""Cheaper highlighting: the Pygments spans that change little or nothing on screen are unwrapped.

A long post's code blocks are most of its DOM: the flagship had 4,600 highlighting spans among 5,900
elements, all styled and laid out before the first paint on a phone. In Material's palette, names
(`n`) and keyword constants (`kc`) take the code's own colour and whitespace (`w`) none, so their spans
change nothing; punctuation (`p`) and operators (`o`) lose their grey and take the code's colour. The
text stays as it was; keywords, strings, numbers, comments and function names keep their colours.
"""

from __future__ import annotations

import re

#: Pygments token classes whose spans are unwrapped.
PLAIN = ("n", "kc", "w", "p", "o")
_BLOCK = re.compile(r"<pre\b[^>]*>.*?</pre>", re.DOTALL | re.IGNORECASE)
_SPAN = re.compile(r'<span class="(?:' + "|".join(PLAIN) + r')">([^<]*)</span>')


def lighten(html: str) -> str:
    """`html` with the PLAIN spans inside its <pre> blocks replaced by their text."""
    return _BLOCK.sub(lambda block: _SPAN.sub(r"\1", block.group(0)), html)
