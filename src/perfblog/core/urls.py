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
