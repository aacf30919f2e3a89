"""The tables of docs/notebooks.md, generated from the registries they describe so they cannot drift:
snippet formats (``notebook.FORMATS``), cell tags (``celltags.TAGS``), header options
(``snippet.HEADER_OPTIONS``) and the MIME priority (``mime.MIMES``).

A page marks each table: ``<!-- generated: tags -->`` … ``<!-- /generated -->``.

    python -m perfblog.generator.reference docs/notebooks.md           # rewrite the tables
    python -m perfblog.generator.reference --check docs/notebooks.md   # exit 1 when a table is stale
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from perfblog.core.fsio import atomic_write
from perfblog.generator.source import celltags, notebook, snippet
from perfblog.generator.store import mime

_TABLE = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.DOTALL)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def formats() -> str:
    rows = ["| format | what it is |", "|---|---|"]
    rows += [f"| `{name}` | {_cell(what)} |" for name, what in notebook.FORMATS.items()]
    return "\n".join(rows) + "\n"


def tags() -> str:
    rows = ["| tag | what it does | the engine's own option |", "|---|---|---|"]
    rows += [f"| `{info.tag.value}` | {_cell(info.effect)} | {f'`{info.same_as}`' if info.same_as else ''} |"
             for info in celltags.TAGS.values()]
    return "\n".join(rows) + "\n"


def header_options() -> str:
    rows = ["| option | accepts | part of the result's key |", "|---|---|---|"]
    rows += [f"| `{name}` | {_cell(option.accepts)} | {'yes' if option.in_key else 'no'} |"
             for name, option in snippet.HEADER_OPTIONS.items()]
    return "\n".join(rows) + "\n"


def mime_priority() -> str:
    rows = ["| priority | MIME type | how a post shows it |", "|---|---|---|"]
    rows += [f"| {i} | `{m.name}` | {_cell(m.shows)} |" for i, m in enumerate(mime.MIMES, start=1)]
    return "\n".join(rows) + "\n"


TABLES: dict[str, Callable[[], str]] = {"formats": formats, "tags": tags, "header-options": header_options,
                                        "mime-priority": mime_priority}


def render(page: str) -> str:
    """``page`` with every marked table regenerated; an unknown table name is a ValueError."""
    def table(found: re.Match[str]) -> str:
        name = found.group("name")
        if name not in TABLES:
            raise ValueError(f"no generated table {name!r} (known: {', '.join(TABLES)})")
        return found.group(1) + TABLES[name]() + found.group(4)

    return _TABLE.sub(table, page)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perfblog.generator.reference")
    parser.add_argument("pages", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true", help="exit 1 when a page's tables are stale")
    args = parser.parse_args(argv)
    stale = 0
    for path in args.pages:
        page = path.read_text(encoding="utf-8")
        fresh = render(page)
        if fresh != page:
            stale += 1
            if args.check:
                print(f"{path}: stale tables (run python -m perfblog.generator.reference {path})")
            else:
                atomic_write(path, fresh.encode("utf-8"))
                print(f"{path}: updated")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
