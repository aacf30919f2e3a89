"""The `blog` command: the composition root, above every layer.

Each layer registers its own subcommands (a ``register(sub)`` of its own); this package names them, in
one list, and builds the one parser from them, so `blog` needs no installed metadata and no layer needs
another. A handler returns the exit status; a ``BlogError`` becomes one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from perfblog.cli import init
from perfblog.core.cli import Registrar
from perfblog.core.errors import BlogError
from perfblog.generator import commands, export, scaffold, torches
from perfblog.seo import cli as seo

#: Every command family of `blog`, in the order `blog --help` lists them: `blog export`, `blog init`,
#: `blog new`, `blog run` and its kin (status, show, mv, migrate, resources), `blog envs`, `blog seo` and
#: `blog submit`.
REGISTRARS: tuple[Registrar, ...] = (export.register, init.register, scaffold.register, commands.register,
                                     torches.register, seo.register)


def build_parser() -> argparse.ArgumentParser:
    """Assemble `blog` from the registrars of each layer."""
    parser = argparse.ArgumentParser(prog="blog",
                                     description="Executable snippets, posts and SEO for the blog.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in REGISTRARS:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `blog`; exit 0 on success, 1 when the work failed, 2 on bad input or usage."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except BlogError as exc:
        print(f"blog: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
