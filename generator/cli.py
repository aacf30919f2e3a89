"""The `blog` command: one parser, whose subcommands each package registers for itself."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from generator.errors import GeneratorError


def build_parser() -> argparse.ArgumentParser:
    """Assemble `blog` from the registrars of each layer (snippets, scaffold, seo)."""
    from generator import commands, scaffold
    from seo import cli as seo_cli

    parser = argparse.ArgumentParser(
        prog="blog", description="Executable snippets, posts and SEO for the blog."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in (commands.register, scaffold.register, seo_cli.register):
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `blog`; exit 0 on success, 1 when the work failed, 2 on bad input or usage."""
    from seo.errors import SeoError

    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except (GeneratorError, SeoError) as exc:
        print(f"blog: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
