"""`blog mv OLD NEW`: rename a snippet, its stored results and every embed that names it.

A snippet's name is its file's stem, and every embed spells it (``code("OLD", "main")``), so renaming
the file alone breaks each post that shows it and orphans its results. The rename moves the file (and
a jupytext pair: ``OLD.py`` with ``OLD.ipynb``), the results folder, the name recorded in each result
file (its key and hashes stay: the code did not change, so the results stay fresh), and rewrites the
embed calls whose snippet argument is the literal name. Everything is planned and checked before the
first change; each file is replaced atomically.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from perfblog.core.conventions import SNIPPET_SUFFIXES
from perfblog.core.fsio import atomic_write
from perfblog.core.project import Layout
from perfblog.generator.errors import SnippetError
from perfblog.generator.render import sandbox
from perfblog.generator.source.snippet import STEM, display_path
from perfblog.generator.store import versions
from perfblog.generator.store.store import Store, document

_TAG = re.compile(r"<%.*?%>", re.S)


@dataclass(frozen=True)
class Renamed:
    """What `blog mv` changed: files moved (old -> new path) and posts rewritten (path -> embeds)."""

    moved: tuple[tuple[Path, Path], ...]
    results: tuple[Path, ...]  # result files now filed under the new name
    posts: tuple[tuple[Path, int], ...]
    unresolved: tuple[str, ...]  # "post:line" where a tag names OLD in a way this cannot rewrite


def rename(layout: Layout, store: Store, old: str, new: str) -> Renamed:
    """Rename snippet ``old`` to ``new`` in the site of ``layout``; SnippetError before any change when
    ``old`` is no snippet, ``new`` is no valid name or is taken."""
    if not STEM.fullmatch(new):
        raise SnippetError(f"{new!r} is not a snippet name (letters, digits, '_' and '-', starting with a "
                           f"letter or digit)")
    files = _files(layout.snippets_dir, old) if STEM.fullmatch(old) else []
    if not files:
        raise SnippetError(f"no snippet {old!r} in {display_path(layout.snippets_dir)}")
    taken = _files(layout.snippets_dir, new)
    if taken or (store.root / new).exists():
        what = display_path(taken[0]) if taken else display_path(store.root / new)
        raise SnippetError(f"{what} already exists; choose another name")
    old_paths = {_posix(p, layout.root) for p in files}
    posts: dict[Path, tuple[str, int]] = {}
    unresolved: list[str] = []
    for post in sorted(layout.docs_dir.rglob("*.md")):
        text = post.read_text(encoding="utf-8")
        changed, count, left = rewrite_embeds(text, old, new, old_paths)
        if count:
            posts[post] = (changed, count)
        unresolved += [f"{display_path(post)}:{line}" for line in left]
    with store.lock():
        results = _move_results(store, old, new)
        moved = []
        for path in files:
            target = path.with_name(new + path.suffix)
            os.rename(path, target)
            moved.append((path, target))
        for post, (changed, _) in posts.items():
            atomic_write(post, changed.encode("utf-8"))
    return Renamed(tuple(moved), tuple(results), tuple((p, n) for p, (_, n) in posts.items()),
                   tuple(unresolved))


def rewrite_embeds(text: str, old: str, new: str, old_paths: set[str]) -> tuple[str, int, list[int]]:
    """``text`` with each embed call whose snippet is the literal ``old`` naming ``new`` instead (and a
    comment's mention of the old file, as `blog new` writes one); how many calls; the lines of tags that
    still name ``old`` otherwise (a variable, a concatenation), for the author to check."""
    call = re.compile(rf"(\b(?:{'|'.join(sandbox.EMBEDS)})\s*\(\s*)(['\"]){re.escape(old)}\2")
    mention = re.compile(rf"(['\"]){re.escape(old)}\1")
    count = 0
    left: list[int] = []

    def tag(m: re.Match[str]) -> str:
        nonlocal count
        body, n = call.subn(lambda c: f"{c.group(1)}{c.group(2)}{new}{c.group(2)}", m.group(0))
        count += n
        for path in old_paths:
            body = body.replace(path, path[: -len(Path(path).name)] + new + Path(path).suffix)
        if mention.search(body):
            left.append(text.count("\n", 0, m.start()) + 1)
        return body

    return _TAG.sub(tag, text), count, left


def _move_results(store: Store, old: str, new: str) -> list[Path]:
    """Move the results folder and file each result under the new name (key and hashes unchanged)."""
    folder = store.root / old
    if not folder.is_dir():
        return []
    current = store.results(old)  # read and validated before anything moves
    os.rename(folder, store.root / new)
    written = []
    for device_class, result in current.items():
        path = store.path(new, device_class)
        atomic_write(path, document(replace(result, snippet=new)))
        written.append(path)
    return written + versions.refile(store.root, old, new)  # the torch versions' records too


def _files(folder: Path, stem: str) -> list[Path]:
    """The files of snippet ``stem``: its file and a jupytext pair (``stem`` matches ``STEM``)."""
    return sorted(p for p in folder.glob(f"{stem}.*") if p.stem == stem and p.suffix in SNIPPET_SUFFIXES)


def _posix(path: Path, root: Path) -> str:
    return Path(os.path.relpath(path, root)).as_posix()
