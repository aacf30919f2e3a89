"""`blog init DIR`: a new, empty blog that builds with `mkdocs build --strict` once its draft is filled in.

The core writes what any site needs (mkdocs.yml with both plugins, the home page, .gitignore, a
Makefile, requirements.txt and the GitHub Pages workflow); each layer adds its own part through the
entry-point group ``perfblog.init`` (the generator: the first draft post and its snippet; seo: a fresh
IndexNow key), so the core still imports neither. A folder that holds anything is refused, naming what
is there: nothing is ever overwritten.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution, entry_points
from pathlib import Path
from urllib.parse import urlsplit

from perfblog.core import conventions, project
from perfblog.core.errors import BlogError
from perfblog.core.fsio import atomic_write, display_path

INIT_GROUP = "perfblog.init"
DEFAULT_URL = "https://blog.example.com/"
WORKFLOW = ".github/workflows/deploy.yml"


class InitError(BlogError):
    """`blog init` would overwrite something (the message names what is there), or got a bad URL or name.

    Declared here, not in ``core.errors``: snippets import that module through the harness, so a change
    to it makes every stored result stale."""


@dataclass(frozen=True)
class NewSite:
    """What the author chose for the new blog; ``language`` is Material's (`zh`, `en`)."""

    name: str
    url: str
    language: str

    @property
    def words(self) -> str:
        return conventions.wording(self.language)


#: A layer's part of a new blog: (the blog's layout, the choices) -> the files it wrote.
Contribution = Callable[[project.Layout, NewSite], list[Path]]


def create(folder: Path, site: NewSite) -> list[Path]:
    """Write a new blog into ``folder`` (made if missing, refused unless empty); the files written."""
    if folder.exists() and not folder.is_dir():
        raise InitError(f"{folder} is a file, not a folder")
    present = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    if present:
        shown = ", ".join(present[:8]) + (f" and {len(present) - 8} more" if len(present) > 8 else "")
        raise InitError(f"{folder} is not empty (it holds {shown}); `blog init` starts a blog in an empty "
                        f"or new folder and never overwrites anything")
    if urlsplit(site.url).scheme not in ("http", "https") or not urlsplit(site.url).hostname:
        raise InitError(f"--url {site.url!r}: give the site's full address, e.g. https://blog.example.com/")
    texts = {
        "mkdocs.yml": _MKDOCS.format(name=json.dumps(site.name, ensure_ascii=False),
                                     url=project.normalise_url(site.url), language=site.language),
        "posts/index.md": _HOME[site.words].format(name=site.name),
        ".gitignore": _GITIGNORE,
        "Makefile": _MAKEFILE,
        "requirements.txt": _requirements(),
        WORKFLOW: _WORKFLOW,
    }
    written = []
    for name, text in texts.items():
        atomic_write(folder / name, text.encode("utf-8"))
        written.append(folder / name)
    layout = project.load(folder / "mkdocs.yml").layout  # as every command and plugin will see it
    for contribute in contributions():
        written += contribute(layout, site)
    return written


def contributions() -> list[Contribution]:
    """Each layer's part of a new blog, in the order of their entry-point names."""
    return [ep.load() for ep in sorted(entry_points(group=INIT_GROUP), key=lambda ep: ep.name)]


def _requirements() -> str:
    """What CI installs: this perfblog as it was installed (a git or archive URL), else its version."""
    try:
        dist = distribution("perfblog")
    except PackageNotFoundError:
        return "perfblog\n"
    found = json.loads(dist.read_text("direct_url.json") or "{}")
    url, vcs = found.get("url", ""), found.get("vcs_info")
    if vcs and url:
        return f"perfblog @ {vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}\n"
    if url and not url.startswith("file:"):
        return f"perfblog @ {url}\n"
    return (f"# perfblog {dist.version} was installed from a local folder: name where CI installs it from,\n"
            f"# e.g. perfblog @ git+https://github.com/OWNER/REPO@TAG\nperfblog=={dist.version}\n")


def register(sub: argparse._SubParsersAction) -> None:
    """Add `blog init` to `blog`."""
    parser = sub.add_parser("init", help="start a new blog in an empty folder",
                            description="Write a new blog into DIR: mkdocs.yml with both plugins, a first "
                                        "draft post and snippet, an IndexNow key, .gitignore, a Makefile and "
                                        "a GitHub Pages workflow.")
    parser.add_argument("folder", type=Path, metavar="DIR", help="an empty or new folder")
    parser.add_argument("--name", required=True, help="the site's name (site_name)")
    parser.add_argument("--url", default=DEFAULT_URL,
                        help=f"the site's address (site_url; default {DEFAULT_URL}: set yours)")
    parser.add_argument("--language", choices=sorted(conventions.PLACEHOLDERS), default="zh",
                        help="the site's language (theme.language; default zh)")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    site = NewSite(name=" ".join(args.name.split()), url=args.url, language=args.language)
    if not site.name:
        raise InitError("--name is empty")
    written = create(args.folder, site)
    for path in written:
        print(f"created {display_path(path)}")
    print(f"next: cd {args.folder}; `mkdocs serve` to preview the draft; fill in its placeholders "
          f"({conventions.PLACEHOLDERS[site.words]}) and remove `draft: true`; `make site` builds it")
    if project.is_example_url(site.url):
        print(f"site_url is {site.url}: set your own domain in mkdocs.yml before you deploy")
    return 0


_MKDOCS = """\
site_name: {name}
site_url: {url}
docs_dir: posts
site_dir: site

theme:
  name: material
  language: {language}
  font: false  # no render-blocking Google Fonts: unreachable from mainland China, and no CJK glyphs
  features:
    - navigation.indexes
    - content.code.copy

markdown_extensions:
  - admonition
  - attr_list
  - md_in_html
  - tables
  - toc:
      permalink: true
  - pymdownx.highlight
  - pymdownx.superfences
  - pymdownx.details
  - pymdownx.arithmatex:
      generic: true

plugins:
  - search
  - blog:
      blog_dir: .
      post_url_format: "{{slug}}"
      post_slugify: !!python/name:perfblog.core.slug.slugify
      draft_on_serve: true
      draft_if_future_date: false
  - snippets:
      snippets_dir: snippets
      results_dir: snippets/_results
  - seo
"""

_HOME = {
    "zh": "# {name}\n\n这里是{name}的文章。每篇文章里的数字都来自 snippets/ 中真实运行的代码，"
          "运行它的设备、版本和时间写在每个结果的下方。\n",
    "en": "# {name}\n\nThe posts of {name}. Every number in them comes from code in snippets/ that really "
          "ran; the device, versions and date it ran on are written under each result.\n",
}

_GITIGNORE = """\
/site/
/.venv/
.cache/
.blog/
__pycache__/
**/_results/.lock
"""

_MAKEFILE = """\
# `make site` builds the blog as CI does (results frozen, --strict); `make test` checks that every snippet
# has a fresh result for this machine, then builds. `make serve` previews drafts and re-runs saved snippets.
export NO_MKDOCS_2_WARNING := 1

.PHONY: site test serve

site:
\tBLOG_EXEC_MODE=frozen mkdocs build --strict

test:
\tblog status
\tBLOG_EXEC_MODE=frozen mkdocs build --strict

serve:
\tmkdocs serve
"""

_WORKFLOW = """\
# Build the blog from its committed results (frozen: no snippet runs here) and publish it on GitHub Pages.
# Settings > Pages > Source: GitHub Actions. After a deploy, `blog submit` tells the search engines.
name: deploy

on:
  push:
    branches: [main]
  workflow_dispatch:

permissions:
  contents: read
  pages: write
  id-token: write

concurrency:
  group: pages
  cancel-in-progress: false

jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
        with:
          fetch-depth: 0  # lastmod comes from the history of each post and its snippets
      - uses: actions/setup-python@v6
        with:
          python-version: "3.12"
      - uses: actions/cache@v5  # cards, slugs and the audit's memo of unchanged pages: a faster build
        with:
          key: perfblog-${{ github.sha }}
          restore-keys: perfblog-
          path: .cache
      - name: Font
        run: sudo apt-get update -qq && sudo apt-get install -y -qq fonts-noto-cjk  # for the social cards
      - name: Install
        run: pip install -r requirements.txt
      - name: Build
        env:
          BLOG_EXEC_MODE: frozen
          NO_MKDOCS_2_WARNING: "1"
        run: mkdocs build --strict
      - uses: actions/upload-pages-artifact@v4
        with:
          path: site

  deploy:
    needs: build
    runs-on: ubuntu-latest
    environment:
      name: github-pages
      url: ${{ steps.deployment.outputs.page_url }}
    steps:
      - id: deployment
        uses: actions/deploy-pages@v5
"""
