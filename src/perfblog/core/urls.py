"""URLs from outside (Markdown links, front matter, built HTML) that urllib cannot split.

``urlsplit`` raises ValueError on some text (`http://[::1`: an unclosed IPv6 bracket); a build or an
audit names such a URL and its file in one line instead of stopping with a traceback.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

#: Something that starts like an absolute URL, up to where Markdown or HTML would end it.
_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s()<>\"']*")


def parses(url: str) -> bool:
    """Whether ``urlsplit`` (and so ``urljoin``) takes ``url``."""
    try:
        urlsplit(url)
    except ValueError:
        return False
    return True


def first_unparsable(text: str) -> str | None:
    """The first absolute URL in ``text`` that urllib cannot split, None when all can (linear scan)."""
    return next((m.group() for m in _ABSOLUTE.finditer(text) if not parses(m.group())), None)


#: A run of percent-escapes of bytes outside ASCII: a UTF-8 character, or several.
_NON_ASCII_ESCAPES = re.compile(r"(?:%[89A-Fa-f][0-9A-Fa-f])+")


def readable(url: str) -> str:
    """``url`` as a reader reads it (its IRI form): escapes of non-ASCII UTF-8 decoded
    (``/%E5%8F%AF%E8%A7%86%E5%8C%96/`` -> ``/可视化/``), ASCII escapes (``%20``, ``%2F``, ``%2B``) kept, so
    the text still names the same address; for display only, a link's target stays ``url``."""

    def decode(match: re.Match[str]) -> str:
        raw = bytes.fromhex(match.group().replace("%", ""))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return match.group()

    return _NON_ASCII_ESCAPES.sub(decode, url)
