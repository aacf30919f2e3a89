"""What a post's file must be before any plugin reads it: UTF-8 text whose front matter is a mapping.

MkDocs and Material's blog plugin fail on anything else with a traceback that does not name the file
(a GBK or Latin-1 post, front matter that is a YAML list); here it is one line naming it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import yaml

from perfblog.core.errors import BlogError
from perfblog.core.fsio import display_path


class PostError(BlogError):
    """A page's file cannot be read as a post; the message names the file (and line). (Here, not in
    ``core.errors``, which snippets import through the harness: changing that file stales every result.)"""


def check_sources(paths: Iterable[Path]) -> None:
    """Raise ``PostError`` for the first page that is not UTF-8 or whose front matter is not a mapping."""
    for path in paths:
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except OSError as exc:
            raise PostError(f"{display_path(path)}: cannot read it: {exc.strerror or exc}") from exc
        except UnicodeDecodeError as exc:
            line = path.read_bytes()[: exc.start].count(b"\n") + 1
            raise PostError(f"{display_path(path)}:{line}: not UTF-8 text ({exc.reason} at byte "
                            f"{exc.start}); save it as UTF-8") from exc
        front = _front_matter(text)
        if front is None:
            continue
        try:
            data = yaml.load(front, Loader=_LOADER)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f":{mark.line + 2}" if mark is not None else ""
            raise PostError(f"{display_path(path)}{line}: the front matter is not valid YAML") from exc
        if data is not None and not isinstance(data, dict):
            raise PostError(f"{display_path(path)}:1: the front matter must be a mapping (key: value lines), "
                            f"not a {type(data).__name__}")


def _front_matter(text: str) -> str | None:
    """The YAML between a first line ``---`` and the next ``---`` (or ``...``) line, as MkDocs reads it."""
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    for n, line in enumerate(lines[1:], start=1):
        if line.rstrip() in ("---", "..."):
            return "\n".join(lines[1:n])
    return None


#: libyaml's parser where PyYAML has it (ten times faster: every page is read before every build).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
