"""Option tables in docs/ generated from the plugins' config classes, so the reference cannot drift.

A page marks each table with the config class it documents::

    <!-- options: perfblog.generator.config.SnippetsConfig -->
    | option | default | accepts | what it does |
    ...
    <!-- /options -->

Each option is a ``mkdocs.config.config_options`` attribute of the class followed by its docstring;
an option without one is an error, so a new option cannot go undocumented. The class is imported by
the name the page gives (as MkDocs' ``!!python/name:`` does), so a page may document any layer's.

    python -m perfblog.cli.docs docs/configuration.md           # rewrite the tables
    python -m perfblog.cli.docs --check docs/configuration.md   # exit 1 when a table is stale
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import itertools
import re
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from mkdocs.config import base
from mkdocs.config import config_options as c

from perfblog.core.errors import BlogError
from perfblog.core.fsio import atomic_write

_TABLE = re.compile(r"(<!-- options: (?P<name>[\w.]+) -->\n)(?P<body>.*?)(<!-- /options -->)", re.DOTALL)
_TYPE_NAMES = {str: "text", bool: "`true` \\| `false`", int: "integer", float: "number"}


def options_table(config_class: type[base.Config]) -> str:
    """The Markdown table of ``config_class``'s options: name, default, accepted values, docstring."""
    docs = _attribute_docstrings(config_class)
    rows = ["| option | default | accepts | what it does |", "|---|---|---|---|"]
    for name, option in vars(config_class).items():
        if not isinstance(option, base.BaseConfigOption):
            continue
        if name not in docs:
            raise BlogError(f"{config_class.__module__}.{config_class.__qualname__}.{name}: "
                            f"the option has no docstring to document it")
        rows.append(f"| `{name}` | {_default(option)} | {_accepts(option)} | {docs[name]} |")
    return "\n".join(rows) + "\n"


def render(page: str) -> str:
    """``page`` with every marked table regenerated from the class its marker names."""
    return _TABLE.sub(lambda m: m.group(1) + options_table(_import(m.group("name"))) + m.group(4), page)


def _import(dotted: str) -> type[base.Config]:
    module, _, name = dotted.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise BlogError(f"options table: cannot import {dotted}: {exc}") from exc
    if not (isinstance(found, type) and issubclass(found, base.Config)):
        raise BlogError(f"options table: {dotted} is not a MkDocs config class")
    return found


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """``name = option`` followed by a string literal, in the class body: the string, on one line."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            docs[node.targets[0].id] = " ".join(after.value.value.split()).replace("|", "\\|")
    return docs


def _accepts(option: base.BaseConfigOption) -> str:
    if isinstance(option, c.Optional):
        return _accepts(option.option)
    if isinstance(option, c.Choice):
        return " \\| ".join(f"`{choice}`" for choice in option.choices)
    if isinstance(option, c.Type):  # MkDocs keeps the accepted type(s) in ``_type``
        kinds = option._type if isinstance(option._type, tuple) else (option._type,)
        if float in kinds:  # (int, float): any number
            return _TYPE_NAMES[float]
        return " or ".join(_TYPE_NAMES.get(kind, kind.__name__) for kind in kinds)
    return type(option).__name__


def _default(option: base.BaseConfigOption) -> str:
    value = option.default
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`" if value != "" else '`""`'


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the tables of each page; with --check, name the stale pages and exit 1 instead."""
    parser = argparse.ArgumentParser(prog="python -m perfblog.cli.docs", description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="+", type=Path, metavar="PAGE")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a table is stale")
    args = parser.parse_args(argv)
    stale = []
    for page in args.pages:
        try:
            text = page.read_text(encoding="utf-8")
            if not _TABLE.search(text):
                raise BlogError("no <!-- options: ... --> table")
            current = render(text)
        except (OSError, BlogError) as exc:
            print(f"{page}: {exc}", file=sys.stderr)
            return 2
        if current != text:
            stale.append(page)
            if not args.check:
                atomic_write(page, current.encode("utf-8"))
    for page in stale:
        print(f"{page}: stale; run python -m perfblog.cli.docs {page}" if args.check else f"{page}: updated")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
