"""Line ranges of a cell that run but are not shown: the checks and plumbing a reader does not copy.

In the spirit of sphinx-gallery's ignore blocks, with the vocabulary of the standard Jupyter cell tags
(``celltags.Tag``, which apply to whole cells)::

    result = compare(...)
    # blog: start remove-input
    glue("speedup", result.speedup("compiled"))      # runs; never shown
    # blog: end remove-input
    # blog: start hide-input
    assert result["compiled"].compile.graph_breaks == 0   # runs; shown folded, "how this was checked"
    # blog: end hide-input

``remove-input`` lines are executed and never shown; ``hide-input`` lines are executed and shown only
in a collapsed block under the code. Marker lines are comments: they change nothing a result depends on,
so they are left out of the cell's hash (moving a marker never makes a result stale).
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from perfblog.generator.errors import SnippetError
from perfblog.generator.source.celltags import Tag

#: Tags a line range takes: the cell tags remove-input and hide-input, applied to lines.
TAGS = (Tag.REMOVE_INPUT.value, Tag.HIDE_INPUT.value)
_MARKER = re.compile(r"^\s*#\s*blog:\s*(start|end)\b\s*(\S*)\s*$")


@dataclass(frozen=True)
class Shown:
    """What a page shows of a cell: the code, and the hide-input lines for the collapsed block."""

    code: str
    hidden: str = ""


def is_marker(line: str) -> bool:
    """Whether ``line`` is a range marker (left out of the cell's hash)."""
    return _MARKER.match(line) is not None


def split(source: str, where: str = "", first_line: int = 1) -> Shown:
    """The cell's shown code and hidden checks; a malformed marker is a SnippetError naming its line.

    ``first_line`` is the snippet line of the cell's first source line (its marker line + 1).
    """
    shown: list[str] = []
    hidden: list[str] = []
    open_tag: tuple[str, int] | None = None
    after_range = False  # just past a range: a blank line that doubles one before it is dropped
    for offset, line in enumerate(source.splitlines()):
        number = first_line + offset
        found = _MARKER.match(line)
        if found is None:
            if open_tag is None:
                if after_range and not line.strip() and (not shown or not shown[-1].strip()):
                    continue
                shown.append(line)
                after_range = after_range and not line.strip()
            elif open_tag[0] == Tag.HIDE_INPUT:
                hidden.append(line)
            continue
        action, tag = found.groups()
        if tag not in TAGS:
            raise SnippetError(f"{where}:{number}: unknown hide marker tag {tag!r} "
                               f"(a line range takes {' or '.join(TAGS)})")
        if action == "start":
            if open_tag is not None:
                raise SnippetError(f"{where}:{number}: '# blog: start {tag}' inside the {open_tag[0]} range "
                                   f"opened on line {open_tag[1]}; ranges do not nest")
            open_tag = (tag, number)
        elif open_tag is None or open_tag[0] != tag:
            opened = f" (the open range is {open_tag[0]}, from line {open_tag[1]})" if open_tag else ""
            raise SnippetError(f"{where}:{number}: '# blog: end {tag}' closes no {tag} range{opened}")
        else:
            open_tag = None
            after_range = True
            if hidden and hidden[-1].strip():
                hidden.append("")
    if open_tag is not None:
        raise SnippetError(f"{where}:{open_tag[1]}: '# blog: start {open_tag[0]}' is never closed "
                           f"(end it with '# blog: end {open_tag[0]}')")
    if len(shown) == len(source.splitlines()):
        return Shown(source)  # no marker: the cell as written
    return Shown("\n".join(shown).strip("\n"), textwrap.dedent("\n".join(hidden)).strip("\n"))


def check(source: str, where: str, first_line: int) -> None:
    """Refuse bad markers, and hidden ranges that leave shown code that is not Python (an empty block)."""
    shown = split(source, where, first_line)
    if shown.code == source or "%" in shown.code or "!" in shown.code:
        return  # nothing hidden, or IPython syntax the caller's own check reads
    try:
        ast.parse(shown.code)
    except SyntaxError as exc:
        raise SnippetError(f"{where}:{first_line}: the code left after hiding lines is not valid Python "
                           f"({exc.msg}, line {exc.lineno} of what is shown); hide whole statements") from exc
