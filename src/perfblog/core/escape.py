"""Text from outside the author's Markdown (a site's name from `blog init`, what `blog export` copies from
result files) made inert where it is printed.

In the core because both layers print such text: `blog init` writes the name into the home page's Markdown,
and the seo plugin hands it to the theme, which prints ``config.site_name`` unescaped in attributes.
"""

from __future__ import annotations

import re
import unicodedata

from markupsafe import Markup, escape

#: What Markdown (Python-Markdown with attr_list and md_in_html, CommonMark and its dialects) or HTML
#: could act on inside a line of text; ``:`` for the autolinks some dialects make of schemes.
_MARKUP = "\\`*_[]<>&|~$!#{}^=:"
_MARKDOWN = {ord(c): f"&#{ord(c)};" for c in _MARKUP}
_MARKDOWN.update({ord("\n"): "&#10;", ord("\t"): "&#9;"})
_MARKDOWN.update({c: None for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0D, 0x20), 0x7F)})
_MARKDOWN.update(dict.fromkeys(range(0xD800, 0xE000), "\ufffd"))  # a lone surrogate cannot be UTF-8
#: At a line's start, these begin a list or a rule.
_LINE_START = re.compile(r"^(?:[-+]|\d+[.)](?=\s|$))")


def html_text(value: str) -> Markup:
    """``value`` as HTML text, safe in element content and in quoted attributes alike.

    A ``Markup`` string: Jinja's ``| e`` leaves it as it is and escaping it again is a no-op, so a theme
    that escapes a value in one place and prints it raw in another shows it right in both. Text without
    ``& < > " '`` comes back unchanged, so such pages stay byte for byte the same.
    """
    return escape(value)


def markdown_text(value: object) -> str:
    """``value`` as one line of Markdown that shows as written: only what could start markup becomes a
    numeric character reference, so ``3.33`` and ``我的笔记`` stay as they are in the source."""
    line = str(value).translate(_MARKDOWN)
    return _LINE_START.sub(lambda m: f"{m.group(0)[:-1]}&#{ord(m.group(0)[-1])};", line, count=1)


def unprintable(value: str) -> str | None:
    """The first character of ``value`` that has no place in a one-line name or address (a control
    character, a line or paragraph separator, a lone surrogate, a byte-order mark), or None."""
    for char in value:
        if unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp") or char == "\ufeff":
            return char
    return None

