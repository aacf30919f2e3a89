"""Read a snippet file in any jupytext format into cells that know where they are in the file.

jupytext's reader decides what the cells are. This module then finds each cell's source in the file,
which gives every cell its line numbers, and checks that every line the file holds as code belongs to a
code cell. jupytext reads some prose as a Markdown code fence (a line of ``~~~`` under a reStructuredText
heading opens one; the next equally long line closes it), and everything in between, code cells
included, becomes Markdown: such a file is refused, naming the lines, instead of silently running less.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfblog.core.conventions import SNIPPET_SUFFIXES as SUFFIXES
from perfblog.generator.errors import SnippetError

#: The jupytext formats a snippet may be written in, by the name jupytext gives them.
FORMATS = {
    "percent": "cells start at `# %%` (a title and options may follow: `# %% Title name=\"x\"`)",
    "hydrogen": "percent, with IPython magics left uncommented",
    "light": "cells separated by blank lines and `# +` / `# -` markers; comment blocks are Markdown",
    "sphinx": "sphinx-gallery scripts: `#####` lines start text blocks, the module docstring is prose",
    "markdown": "a Markdown file whose ```` ```python ```` fences are the code cells",
    "myst": "MyST Markdown: ```` ```{code-cell} ```` directives are the code cells, `:tags:` their tags",
    "ipynb": "a Jupyter notebook",
}

#: Text that opens a fenced block in Markdown; jupytext's commented prose in `.py` files follows the rule.
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
#: Lines jupytext writes commented out in a script: IPython magics, shell escapes, help.
_MAGIC = re.compile(r"^\s*([%!?]|(cat|cd|cp|ls|mkdir|mv|pwd|rm|rmdir|pip|conda)\b)")
#: Cells a jupytext reader adds that are not in the file: (format, source).
_ADDED = {("sphinx", "%matplotlib inline")}
_CODE_FENCE = {
    "markdown": re.compile(r"^(`{3,}|~{3,})\s*(python3?|ipython3?|py)\b"),
    "myst": re.compile(r"^(`{3,}|~{3,})\s*\{code-cell\}"),
}


@dataclass(frozen=True)
class RawCell:
    """A cell as jupytext read it, with where it is: ``line`` where it starts (its marker, fence or first
    line), ``body`` the line of its first source line (so line K of the source is ``body + K - 1``)."""

    kind: str  # "code", "markdown" or "raw"
    source: str
    metadata: dict[str, Any]
    line: int
    body: int


@dataclass(frozen=True)
class Notebook:
    """A snippet file's cells and notebook metadata, in the format it was read as."""

    format: str  # a key of FORMATS
    cells: tuple[RawCell, ...]
    metadata: dict[str, Any]


def read(path: Path, text: str, where: str) -> Notebook:
    """The cells of ``text`` (the file ``path``); SnippetError naming the file and line on anything wrong."""
    suffix = path.suffix
    if suffix not in SUFFIXES:
        raise SnippetError(f"{where}:1: not a snippet format (use {', '.join(SUFFIXES)})")
    name = _format_name(text, suffix)
    if name not in FORMATS:
        raise SnippetError(f"{where}:1: jupytext reads this file as its '{name}' format, which snippets do "
                           f"not use (formats: {', '.join(FORMATS)})")
    import jupytext

    try:
        nb = jupytext.reads(text, fmt="ipynb" if name == "ipynb" else f"{suffix[1:]}:{name}")
    except Exception as exc:  # jupytext and nbformat raise many kinds on bad input
        raise SnippetError(f"{where}:1: cannot read the {name} notebook: {exc}") from exc
    cells = [(c.cell_type, c.source, dict(c.metadata)) for c in nb.cells]
    if name == "ipynb":
        placed = _json_lines(cells, text)
    else:
        spans = _locate(cells, text.splitlines(), name, where)
        _check_coverage(cells, spans, _code_lines(text, name), where)
        placed = _starts(spans, cells, text.splitlines())
    return Notebook(format=name, metadata=dict(nb.metadata),
                    cells=tuple(RawCell(kind, source, meta, line, body)
                                for (kind, source, meta), (line, body) in zip(cells, placed, strict=True)))


def _format_name(text: str, suffix: str) -> str:
    """The format jupytext should read: as the header declares it, else as jupytext guesses it."""
    if suffix == ".ipynb":
        return "ipynb"
    from jupytext.formats import guess_format, read_metadata

    declared = read_metadata(text, suffix).get("jupytext", {})
    name = declared.get("text_representation", {}).get("format_name")
    if not name:  # `formats: ipynb,py:percent` names this file's format by its extension
        for entry in str(declared.get("formats", "")).split(","):
            ext, _, fmt = entry.strip().partition(":")
            if fmt and ext.lstrip(".") == suffix[1:]:
                name = fmt
    if not name:
        name = guess_format(text, suffix)[0]
    return "markdown" if name == "md" else name


# --- where each cell is -----------------------------------------------------------------------------------

Span = tuple[int, int] | None  # first and last line (1-based) of a cell's source found in the file


def _candidates(line: str, kind: str, script: bool) -> tuple[str, ...]:
    """How a source line may appear in the file: as is, or commented out (prose, and magics in code)."""
    if not script:
        return (line,)
    commented = ("# " + line, "#" + line)
    return (line, *commented) if kind != "code" or _MAGIC.match(line) else (line,)


Cells = list[tuple[str, str, dict[str, Any]]]  # (kind, source, metadata) as jupytext read them


def _locate(cells: Cells, lines: list[str], name: str, where: str) -> list[Span]:
    """The span of each cell's source, found in order: each cell's lines after the previous cell's.

    A code line that cannot be found is an error (the cell would not be the code in the file); prose
    lines that jupytext rewrote (reStructuredText, HTML comments) are skipped.
    """
    script = name not in ("markdown", "myst")
    stripped = [line.rstrip() for line in lines]
    cursor = 0
    spans: list[Span] = []
    for number, (kind, source, _) in enumerate(cells, start=1):
        first = last = None
        for text in source.splitlines():
            text = text.rstrip()
            if not text.strip():
                continue
            found = _find(stripped, cursor, _candidates(text, kind, script))
            if found is None and kind == "code" and script:
                found = _find(stripped, cursor, ("# " + text, "#" + text))  # a magic only jupytext knows
            if found is None:
                if kind == "code" and (name, source) not in _ADDED:
                    raise SnippetError(f"{where}:{cursor + 1}: cannot find the line {text!r} of the "
                                       f"notebook's cell {number} in the file after line {cursor}")
                continue
            first = found if first is None else first
            last = cursor = found
            cursor += 1
        spans.append(None if first is None else (first + 1, last + 1))  # type: ignore[operator]
    return spans


def _find(lines: list[str], start: int, wanted: tuple[str, ...]) -> int | None:
    for i in range(start, len(lines)):
        if lines[i] in wanted:
            return i
    return None


def _starts(spans: list[Span], cells: Cells, lines: list[str]
            ) -> list[tuple[int, int]]:
    """Each cell's (line, body): it starts at the first line after the previous cell that is neither blank
    nor an empty comment (the end of commented prose)."""
    placed = []
    end = 0
    for span in spans:
        start = end + 1
        while start <= len(lines) and lines[start - 1].strip() in ("", "#"):
            start += 1
        if span is None:
            placed.append((min(start, max(len(lines), 1)), min(start, max(len(lines), 1))))
            continue
        first, last = span
        placed.append((min(start, first), first))
        end = last
    return placed


def _json_lines(cells: Cells, text: str) -> list[tuple[int, int]]:
    """Lines of an .ipynb where each cell's source starts (nbformat writes one source line per line)."""
    lines = text.splitlines()
    cursor = 0
    placed = []
    for _, source, _ in cells:
        first = source.splitlines(keepends=True)[:1]
        found = None
        if first:
            needle = json.dumps(first[0], ensure_ascii=False)
            found = next((i for i in range(cursor, len(lines)) if needle in lines[i]), None)
            if found is None:  # written with ASCII escapes
                needle = json.dumps(first[0])
                found = next((i for i in range(cursor, len(lines)) if needle in lines[i]), None)
        line = (found if found is not None else cursor) + 1
        cursor = max(cursor, line - 1)
        placed.append((line, line))
    return placed


# --- every code line in a code cell -----------------------------------------------------------------------


def _code_lines(text: str, name: str) -> set[int]:
    """The lines the file holds as code, by the file's own rules, independently of jupytext's reading."""
    reader = _CODE_LINES.get(name, _python_code_lines)
    return reader(text, name)


def _python_code_lines(text: str, name: str) -> set[int]:
    """Lines with a Python token other than comments; a statement that is only a string is prose (a
    docstring, or a Markdown cell written between triple quotes)."""
    code: set[int] = set()
    statement: list[tokenize.TokenInfo] = []
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
            tokenize.ENDMARKER}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NEWLINE:
                if any(t.type != tokenize.STRING for t in statement):
                    for t in statement:
                        code.update(range(t.start[0], t.end[0] + 1))
                statement = []
            elif token.type not in skip:
                statement.append(token)
    except (tokenize.TokenError, SyntaxError):
        # Not tokenizable as a whole (a cell's own syntax error is reported by its cell): every
        # uncommented line counts as code.
        return {i for i, line in enumerate(text.splitlines(), 1)
                if line.strip() and not line.lstrip().startswith("#")}
    if any(t.type != tokenize.STRING for t in statement):
        for t in statement:
            code.update(range(t.start[0], t.end[0] + 1))
    return code


def _fenced_code_lines(text: str, name: str) -> set[int]:
    """Non-blank lines inside the fences that open code cells (```` ```python ````, ```` ```{code-cell} ````),
    each closed by the next fence of the same character at least as long."""
    opener = _CODE_FENCE[name]
    code: set[int] = set()
    closing: str | None = None
    for i, line in enumerate(text.splitlines(), 1):
        if closing is not None:
            if line.strip().startswith(closing) and not line.strip().strip(closing[0]):
                closing = None
            elif line.strip():
                code.add(i)
        elif m := opener.match(line):
            closing = m.group(1)
    return code


_CODE_LINES: dict[str, Callable[[str, str], set[int]]] = {
    "markdown": _fenced_code_lines, "myst": _fenced_code_lines}


def _check_coverage(cells: Cells, spans: list[Span], code: set[int],
                    where: str) -> None:
    """Every code line of the file lies within a code cell; else an error naming the lines and, when it
    is a Markdown cell that swallowed them, which of its lines opened a code fence."""
    covered: set[int] = set()
    for (kind, _, _), span in zip(cells, spans, strict=True):
        if kind == "code" and span:
            covered.update(range(span[0], span[1] + 1))
    lost = sorted(code - covered)
    if not lost:
        return
    first = last = lost[0]
    for line in lost[1:]:
        if line != last + 1:
            break
        last = line
    lines = f"line {first} is" if first == last else f"lines {first}-{last} are"
    others = sum(1 for line in lost if line > last)
    more = f" (and {others} more code lines after them)" if others else ""
    holder = next(((i, s) for i, ((kind, _, _), s) in enumerate(zip(cells, spans, strict=True))
                   if kind != "code" and s and s[0] <= first <= s[1]), None)
    if holder is None:
        raise SnippetError(f"{where}:{first}: {lines} code outside every code cell{more}; jupytext does not "
                           f"run them")
    index, (start, end) = holder
    fence = next((ln.strip() for ln in cells[index][1].splitlines() if _FENCE.match(ln)), None)
    hint = (f"; its line {fence!r} opens a Markdown code block that runs on to the next such line: write "
            f"that heading another way (for example '### Heading')" if fence else "")
    raise SnippetError(f"{where}:{first}: {lines} code{more}, but jupytext reads them as part of the "
                       f"Markdown cell of lines {start}-{end}, so they would never run{hint}")
