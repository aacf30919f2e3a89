"""The project's cache folder (`.cache/perfblog` beside mkdocs.yml): what a build derives and keeps for
the next one (the audit's memo, the pinyin of titles, social cards, chart images).

A cache is derived data that is never committed, so nothing in it is trusted further than a file the
build itself wrote: a file git tracks is ignored with a warning (a committed cache file is the one way
a pull request could plant one on every CI runner); nothing is read or published through a symbolic
link or from anything but a regular file; nothing is written through a linked folder; every read is
bounded in size. What is ignored is made again. See docs/security.md ("Caches").
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import stat
import subprocess
from collections.abc import Iterable
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path

from perfblog.core.errors import BlogError
from perfblog.core.fsio import atomic_write, read_regular

log = logging.getLogger("mkdocs.plugins.perfblog.cache")

#: The cache folder, relative to the folder of mkdocs.yml (git-ignored by `blog init`'s .gitignore).
CACHE_DIR = ".cache/perfblog"

_GIT_TIMEOUT = 30  # seconds for `git ls-files`: a cache check must never hang a build


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of this package's files, code and data: what a cached entry derived by this code (an
    audited page, a snippet's download) depends on besides its own input."""
    digest = hashlib.blake2b(digest_size=16)
    stack = [resources.files("perfblog")]
    while stack:
        folder = stack.pop()
        for item in sorted(folder.iterdir(), key=lambda i: i.name):
            if item.is_dir():
                if item.name != "__pycache__":
                    stack.append(item)
            elif not item.name.endswith(".pyc"):
                digest.update(item.name.encode() + b"\0" + item.read_bytes())
    return digest.hexdigest()


class UnsafePath(BlogError):
    """A file would be written through a symbolic link (a linked folder inside the site or the cache)."""


def folder_option(value: str) -> str:
    """A `cache_dir` as mkdocs.yml gives it, checked: relative, and inside the project folder."""
    parts = Path(value).parts
    if not value.strip() or Path(value).is_absolute() or ".." in parts:
        raise ValueError(f"cache_dir must be a folder inside the project, relative to mkdocs.yml, "
                         f"not {value!r}")
    return Path(value).as_posix()


def _shown(path: Path, base: Path) -> str:
    """A path below `base` as a message shows it (from `base`'s folder), never resolved: a link's own
    name, not where it points."""
    return path.relative_to(base.parent).as_posix()


def linked_part(base: Path, path: Path) -> Path | None:
    """The first part of `path` below `base` that is a symbolic link (the last part included), or None.

    `base` itself is the caller's to trust (the folder of mkdocs.yml, `site_dir`); parts that do not
    exist yet are no links."""
    current = base
    for part in path.relative_to(base).parts:
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return current
        except FileNotFoundError:
            return None
    return None


def site_target(site_dir: Path, relative: str) -> Path:
    """The path of `relative` in the built site, its folders made; UnsafePath when a folder on the way
    is a symbolic link (a write would land wherever it points). A file already there is replaced."""
    target = site_dir / relative
    found = linked_part(site_dir, target.parent)
    if found is not None:
        raise UnsafePath(f"{_shown(found, site_dir)} is a symbolic link; nothing is written through it")
    target.parent.mkdir(parents=True, exist_ok=True)
    found = linked_part(site_dir, target.parent)  # made just now: a race with another process's link
    if found is not None:
        raise UnsafePath(f"{_shown(found, site_dir)} is a symbolic link; nothing is written through it")
    return target


class Cache:
    """One project's cache folder; files are named relative to it (`cards/<hash>.png`). ``folder`` is
    relative to the project folder (the snippets plugin's `cache_dir`); None turns the cache off
    (`cache: false`): nothing is read or written, every build makes what it needs again."""

    def __init__(self, project_dir: Path, folder: str | None = CACHE_DIR) -> None:
        self.project_dir = project_dir
        self.enabled = folder is not None
        self.root = project_dir / (folder or CACHE_DIR)
        self._warned: set[str] = set()

    def path(self, name: str) -> Path:
        return self.root / name

    def read(self, name: str, *, limit: int) -> bytes | None:
        """The bytes cached under `name`, or None: absent, or not to be trusted (said in a warning)."""
        path = self.path(name)
        if not self.enabled or not self._trusted(path):
            return None
        try:
            return read_regular(path, limit=limit)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self._warn(path, f"{exc}; it is ignored and made again")
            return None

    def holds(self, name: str) -> bool:
        """Whether `name` is a cached regular file the build may use (see `read` for what is not)."""
        path = self.path(name)
        if not self.enabled or not self._trusted(path):
            return False
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(info.st_mode):
            self._warn(path, "is not a regular file; it is ignored")
            return False
        return True

    def write(self, name: str, data: bytes | Iterable[bytes], *, durable: bool = True) -> bool:
        """Cache `data` under `name`; False when the cache is off, or (with a warning) when a folder on
        the way is a symbolic link, so the file would land outside the cache."""
        if not self.enabled:
            return False
        path = self.path(name)
        found = linked_part(self.project_dir, path.parent)
        if found is not None:
            self._warn(found, "is a symbolic link; nothing is cached through it")
            return False
        atomic_write(path, data, durable=durable)
        return True

    def keep(self, name: str, data: bytes, site_dir: Path, relatives: Iterable[str]) -> None:
        """Cache freshly made ``data`` under ``name`` and write it into the site at each of ``relatives``
        (a cache that is off or refuses leaves the site whole all the same)."""
        self.write(name, data, durable=False)  # derived: made again if lost
        for relative in sorted(relatives):
            atomic_write(site_target(site_dir, relative), data, durable=False)

    def publish(self, name: str, site_dir: Path, relative: str) -> None:
        """Put the cached file `name` (checked with `holds`) into the site as `relative`: a hard link
        where the file system allows one (a cached file never changes: its name is its content's hash),
        else a copy read without following links."""
        source = self.path(name)
        target = site_target(site_dir, relative)
        target.unlink(missing_ok=True)
        try:  # a link is a tenth of a copy's cost, which for every card was 4 % of a build
            os.link(source, target, follow_symlinks=False)
        except OSError:  # another file system, or one without links
            fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)

    def _trusted(self, path: Path) -> bool:
        found = linked_part(self.project_dir, path)
        if found is not None:
            self._warn(found, "is a symbolic link; the cache never follows one, so it is ignored")
            return False
        if path.relative_to(self.project_dir).as_posix() in self._tracked:
            self._warn(path, "is tracked by git, but a cache is never committed: it is ignored "
                             f"(git rm --cached {path.relative_to(self.project_dir).as_posix()})")
            return False
        return True

    @cached_property
    def _tracked(self) -> frozenset[str]:
        """The cache's files that git tracks, relative to the project folder (none outside a repository)."""
        if not self.root.exists():
            return frozenset()
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            listed = subprocess.run(
                ["git", "ls-files", "-z", "--", self.root.relative_to(self.project_dir).as_posix()],
                cwd=self.project_dir, capture_output=True, timeout=_GIT_TIMEOUT, check=True,
            )  # fmt: skip
            return frozenset(name for name in listed.stdout.decode("utf-8", "surrogateescape").split("\0")
                             if name)  # fmt: skip
        return frozenset()

    def _warn(self, path: Path, what: str) -> None:
        said = f"{path.relative_to(self.project_dir).as_posix()} {what}"
        if said not in self._warned:
            self._warned.add(said)
            log.warning("cache: %s", said)
