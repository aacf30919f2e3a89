"""`blog init DIR`: a new, empty blog that builds with `mkdocs build --strict` once its draft is filled in.

The core writes what any site needs (mkdocs.yml with both plugins, the home page, .gitignore, a
Makefile, requirements.txt and the GitHub Pages workflow); each layer's own part (the generator: the
first draft post and its snippet; seo: a fresh IndexNow key) is a ``Contribution`` that the caller hands
to ``create`` (`blog init` in ``perfblog.cli.init`` names them), so the core still imports neither. A
folder that holds anything is refused, naming what is there: nothing is ever overwritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from perfblog.core import conventions, escape, project
from perfblog.core.errors import BlogError
from perfblog.core.fsio import atomic_write

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


def create(folder: Path, site: NewSite, parts: Sequence[Contribution] = ()) -> list[Path]:
    """Write a new blog into ``folder`` (made if missing, refused unless empty), with the layers' ``parts``
    after the core's files; the files written.

    The name and address are data: checked, quoted in mkdocs.yml (read back and compared before MkDocs
    loads it, since MkDocs' loader runs ``!!python`` tags) and escaped in Markdown. Everything is
    written into a temporary folder (beside ``folder``, or inside it when it is an empty folder already)
    and moved into place once whole, so a failure leaves nothing behind and a retry starts afresh.
    """
    if folder.exists() and not folder.is_dir():
        raise InitError(f"{folder} is a file, not a folder")
    present = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    if present:
        shown = ", ".join(present[:8]) + (f" and {len(present) - 8} more" if len(present) > 8 else "")
        raise InitError(f"{folder} is not empty (it holds {shown}); `blog init` starts a blog in an empty "
                        f"or new folder and never overwrites anything")
    site = NewSite(name=checked_name(site.name), url=checked_url(site.url), language=site.language)
    target = Path(os.path.abspath(folder))
    made_parents = [p for p in (target.parent, *target.parent.parents) if not p.exists()]  # deepest first
    staging: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = _staging_folder(target if target.is_dir() else target.parent, target.name)
        written = _write(staging, site, parts)
        _move_into_place(staging, target)
    except BaseException as exc:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        for parent in made_parents:
            with contextlib.suppress(OSError):
                parent.rmdir()
        if isinstance(exc, OSError):
            raise InitError(f"cannot write the new blog into {folder}: {exc}; nothing was written") from exc
        raise
    return [folder / path for path in written]


def checked_name(name: str) -> str:
    """The site's name, refused when empty or when it holds a character no one-line name has."""
    if not name.strip():
        raise InitError("--name is empty")
    char = escape.unprintable(name)
    if char is not None:
        raise InitError(f"--name {name!r}: a site's name is one line of text, without {char!r}")
    return name


#: Characters that no URL holds as they are (RFC 3986), besides spaces and control characters.
_NOT_IN_URLS = set('<>"`{}|\\^')


def checked_url(url: str) -> str:
    """``site_url`` with its trailing slash, refused unless it is a plain http(s) address of a host:
    no spaces or control characters, no user name or password, no ``?query`` or ``#fragment``."""
    again = "give the site's full address, e.g. https://blog.example.com/"
    bad = escape.unprintable(url) or next((c for c in url if c.isspace() or c in _NOT_IN_URLS), None)
    if bad is not None:
        raise InitError(f"--url {url!r}: an address holds no {bad!r}; {again}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError on a port that is no number
    except ValueError as exc:
        raise InitError(f"--url {url!r}: not an address ({exc}); {again}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InitError(f"--url {url!r}: {again}")
    if parts.username is not None or parts.password is not None:
        raise InitError(f"--url {url!r}: a site's address holds no user name or password; {again}")
    if "?" in url or "#" in url:
        raise InitError(f"--url {url!r}: a site's address has no ?query or #fragment; {again}")
    return project.normalise_url(url) or url


def _staging_folder(where: Path, name: str) -> Path:
    """A new, empty folder in ``where`` (the target's file system: moving it into place is a rename)."""
    for _ in range(100):
        staging = where / f".{name}.init-{secrets.token_hex(4)}"
        try:
            staging.mkdir()  # as mkdir makes any folder (the umask applies), unlike mkdtemp's 0700
            return staging
        except FileExistsError:
            continue
    raise InitError(f"cannot make a temporary folder in {where}")


def _write(root: Path, site: NewSite, parts: Sequence[Contribution]) -> list[Path]:
    """The new blog's files in ``root``, the config checked before it is loaded; paths relative to root."""
    texts = {
        "mkdocs.yml": _MKDOCS.format(name=_quoted(site.name), url=_quoted(site.url),
                                     language=_quoted(site.language)),
        "posts/index.md": _HOME[site.words].format(name=escape.markdown_text(site.name)),
        ".gitignore": _GITIGNORE,
        "Makefile": _MAKEFILE,
        "requirements.txt": _requirements(),
        WORKFLOW: _WORKFLOW,
    }
    for name, text in texts.items():
        atomic_write(root / name, text.encode("utf-8"))
    _read_back(root / "mkdocs.yml", site)
    layout = project.load(root / "mkdocs.yml").layout  # as every command and plugin will see it
    written = [Path(name) for name in texts]
    for contribute in parts:
        written += [Path(os.path.relpath(path, layout.root)) for path in contribute(layout, site)]
    return written


def _quoted(value: str) -> str:
    """A YAML scalar that reads back as ``value`` and nothing else: JSON's double-quoted string."""
    return json.dumps(value, ensure_ascii=False)


class _ReadBack(yaml.SafeLoader):
    """YAML's safe loader, taking the template's ``!!python/name:`` tags as text (nothing is imported);
    any other ``!!python`` tag is an error."""


_ReadBack.add_multi_constructor("tag:yaml.org,2002:python/name:",
                                lambda loader, suffix, node: f"!!python/name:{suffix}")


def _read_back(path: Path, site: NewSite) -> None:
    """mkdocs.yml as written must say exactly what the template says with the author's three values."""
    meant = yaml.load(_MKDOCS.format(name='""', url='""', language='""'), Loader=_ReadBack)
    meant["site_name"], meant["site_url"] = site.name, site.url
    meant["theme"]["language"] = site.language
    try:
        written = yaml.load(path.read_text(encoding="utf-8"), Loader=_ReadBack)
    except yaml.YAMLError as exc:
        detail = " ".join(str(exc).split())
        raise InitError(f"{path.name} does not read back as written ({detail}); nothing was written") \
            from None
    if written != meant:
        found = written if isinstance(written, dict) else {}
        differ = [str(k) for k in sorted(set(meant) | set(found), key=str) if meant.get(k) != found.get(k)]
        raise InitError(f"{path.name} does not read back as written (it differs in {', '.join(differ)}); "
                        f"nothing was written")


def _move_into_place(staging: Path, target: Path) -> None:
    """``staging`` becomes ``target``: one rename, or, when ``target`` is an empty folder (perhaps the
    shell's working folder) that holds ``staging``, its entries moved up one by one and taken back if
    one cannot be."""
    if not target.is_dir():
        os.rename(staging, target)  # fails if something appeared there since
        return
    moved: list[str] = []
    try:
        for entry in sorted(staging.iterdir()):
            if os.path.lexists(target / entry.name):
                raise FileExistsError(f"{target / entry.name} appeared while the blog was written")
            os.rename(entry, target / entry.name)
            moved.append(entry.name)
    except OSError:
        for name in moved:
            with contextlib.suppress(OSError):
                os.rename(target / name, staging / name)
        raise
    staging.rmdir()


def _requirements() -> str:
    """What CI installs: this perfblog as it was installed (a git or archive URL), else its version,
    with Material and the snippets plugin's packages (the `material` and `snippets` extras: a new blog's
    theme and its first snippet)."""
    try:
        dist = distribution("perfblog")
    except PackageNotFoundError:
        return "perfblog[material,snippets]\n"
    found = json.loads(dist.read_text("direct_url.json") or "{}")
    url, vcs = found.get("url", ""), found.get("vcs_info")
    if vcs and url:
        return f"perfblog[material,snippets] @ {vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}\n"
    if url and not url.startswith("file:"):
        return f"perfblog[material,snippets] @ {url}\n"
    return (f"# perfblog {dist.version} was installed from a local folder: name where CI installs it from,\n"
            f"# e.g. perfblog[material,snippets] @ git+https://github.com/OWNER/REPO@TAG\n"
            f"perfblog[material,snippets]=={dist.version}\n")


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
      readtime_prose: true
  - seo:
      # what readers see, turned on by name (perfblog's docs/existing-blog.md): Google Fonts off for
      # system CJK fonts, Lighthouse's contrast and legibility fixes, copy buttons after load, related posts
      seo_local_fonts: true
      seo_contrast: true
      seo_underline_links: true
      seo_legible_code: true
      seo_lazy_blocks: true
      seo_search_dialog_name: true
      seo_pin_list_item: true
      seo_page_language_words: true
      seo_lean_highlighting: true
      seo_copy_buttons_after_load: true
      seo_related: true
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
