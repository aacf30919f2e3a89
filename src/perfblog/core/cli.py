"""What every layer's `blog` subcommands share: ``-f`` and the project it loads. The parser itself is
built above the layers, by ``perfblog.cli``, from each layer's registrar."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from perfblog.core import project

#: A layer's command family: adds its subcommands to `blog`'s subparsers.
Registrar = Callable[[argparse._SubParsersAction], None]


def add_project_option(parser: argparse.ArgumentParser) -> None:
    """``-f PATH``: the site's mkdocs.yml; by default found in the current folder or a parent."""
    parser.add_argument("-f", "--config-file", type=Path, default=None, metavar="MKDOCS_YML",
                        help="the site's mkdocs.yml (default: found in this folder or a parent)")


def load_project(args: argparse.Namespace) -> project.Project:
    """The site a command works on, loaded once through the project loader."""
    return project.load(getattr(args, "config_file", None))
