"""`blog init DIR`: the core's new blog (``core.init``) with every layer's part of it (``PARTS``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from perfblog.core import conventions, init, project
from perfblog.core.fsio import display_path
from perfblog.generator import scaffold, torches
from perfblog.seo import indexnow_key

#: What each layer adds to a new blog, in this order: a fresh IndexNow key, the first draft post and its
#: snippet.
PARTS: tuple[init.Contribution, ...] = (indexnow_key.init_site, scaffold.init_site)


def register(sub: argparse._SubParsersAction) -> None:
    """Add `blog init` to `blog`."""
    parser = sub.add_parser("init", help="start a new blog in an empty folder",
                            description="Write a new blog into DIR: mkdocs.yml with both plugins, a first "
                                        "draft post and snippet, an IndexNow key, .gitignore, a Makefile and "
                                        "a GitHub Pages workflow.")
    parser.add_argument("folder", type=Path, metavar="DIR", help="an empty or new folder")
    parser.add_argument("--name", required=True, help="the site's name (site_name)")
    parser.add_argument("--url", default=init.DEFAULT_URL,
                        help=f"the site's address (site_url; default {init.DEFAULT_URL}: set yours)")
    parser.add_argument("--language", choices=sorted(conventions.PLACEHOLDERS), default="zh",
                        help="the site's language (theme.language; default zh)")
    parser.add_argument("--recheck-torch", action="store_true",
                        help="also a weekly GitHub workflow that re-runs the claim snippets on the newest "
                             "torch and fails naming each claim that flipped (docs/versions.md)")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    site = init.NewSite(name=" ".join(args.name.split()), url=args.url, language=args.language)
    written = init.create(args.folder, site, (*PARTS, *((torches.init_site,) if args.recheck_torch else ())))
    for path in written:
        print(f"created {display_path(path)}")
    print(f"next: cd {args.folder}; `mkdocs serve` to preview the draft; fill in its placeholders "
          f"({conventions.PLACEHOLDERS[site.words]}) and remove `draft: true`; `make site` builds it")
    if project.is_example_url(site.url):
        print(f"site_url is {site.url}: set your own domain in mkdocs.yml before you deploy")
    return 0
