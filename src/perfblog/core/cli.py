"""The `blog` command: one parser, whose subcommands each layer registers through an entry point.

Registrars are found in the entry-point group ``perfblog.commands`` (see pyproject.toml), so this core
imports no layer above it; a new command family is one entry there.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path

from perfblog.core import project
from perfblog.core.errors import BlogError

COMMANDS_GROUP = "perfblog.commands"

Registrar = Callable[[argparse._SubParsersAction], None]


def registrars() -> list[Registrar]:
    """The registered command families, in the order of their entry-point names."""
    found = sorted(entry_points(group=COMMANDS_GROUP), key=lambda ep: ep.name)
    if not found:
        raise BlogError(f"no `blog` commands are registered (entry-point group {COMMANDS_GROUP}); "
                        f"install perfblog with pip")
    return [ep.load() for ep in found]


def build_parser() -> argparse.ArgumentParser:
    """Assemble `blog` from the registrars of each layer."""
    parser = argparse.ArgumentParser(prog="blog",
                                     description="Executable snippets, posts and SEO for the blog.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in registrars():
        register(sub)
    return parser


def add_project_option(parser: argparse.ArgumentParser) -> None:
    """``-f PATH``: the site's mkdocs.yml; by default found in the current folder or a parent."""
    parser.add_argument("-f", "--config-file", type=Path, default=None, metavar="MKDOCS_YML",
                        help="the site's mkdocs.yml (default: found in this folder or a parent)")


def load_project(args: argparse.Namespace) -> project.Project:
    """The site a command works on, loaded once through the project loader."""
    return project.load(getattr(args, "config_file", None))


def main(argv: Sequence[str] | None = None) -> int:
    """Run `blog`; exit 0 on success, 1 when the work failed, 2 on bad input or usage."""
    try:
        parser = build_parser()
    except BlogError as exc:
        print(f"blog: error: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except BlogError as exc:
        print(f"blog: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
