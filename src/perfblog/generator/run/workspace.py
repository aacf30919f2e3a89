"""What a snippet run changed in the repository around it, so an undeclared write fails the run.

Snippet authors are trusted to run code, but a snippet that plants a post, edits mkdocs.yml or rewrites
another snippet's result by accident (or a careless copy-paste) should not slip into a commit. Before
and after each run the engine takes a snapshot of the repository's files: in a git repository the
tracked files and the untracked ones git does not ignore (so ``__pycache__`` and other ignored paths
never count), elsewhere every file under the project folder outside hidden folders. A file whose size
or modification time changed, that appeared or that went away is a change; the results store is left
out (``blog run`` writes it) and so are the paths the snippet declares in its header
(``blog: {writes: [bench/out.csv, "data/*.json"]}``).
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

#: path relative to the repository -> (size, modification time in ns)
Snapshot = dict[str, tuple[int, int]]


def root_of(folder: Path) -> Path:
    """The git repository around ``folder``, else its parent (the project folder of a snippets dir)."""
    found = _git(folder, "rev-parse", "--show-toplevel")
    return Path(found.strip()) if found else folder.resolve().parent


def snapshot(root: Path) -> Snapshot:
    """Size and modification time of every file that counts under ``root``."""
    listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed is not None:
        names: Iterable[str] = (n for n in listed.split("\0") if n)
    else:
        names = _walk(root)
    found: Snapshot = {}
    for name in names:
        try:
            stat = os.lstat(root / name)
        except OSError:
            continue  # listed by the index but gone: absent
        found[name] = (stat.st_size, stat.st_mtime_ns)
    return found


def undeclared(before: Snapshot, after: Snapshot, root: Path, declared: Iterable[str],
               exclude: Iterable[Path]) -> list[str]:
    """The changed paths that are neither in an ``exclude``d folder nor matched by a ``declared`` pattern."""
    skipped = [_relative(p, root) for p in exclude]
    patterns = list(declared)
    changed = sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))
    def excused(name: str) -> bool:
        inside = any(s is not None and (name == s or name.startswith(f"{s}/")) for s in skipped)
        return inside or any(fnmatch.fnmatchcase(name, p) or name.startswith(p.rstrip("/") + "/")
                             for p in patterns)

    return [name for name in changed if not excused(name)]


def refusal(where: str, changed: Iterable[str], beside: Iterable[str] = ()) -> str:
    """Why a run's result is not stored: the undeclared paths it changed (and the runs that were going on
    beside it, any of which may have changed them)."""
    others = sorted(beside)
    also = f"; {', '.join(others)} ran beside it, so one of them may have" if others else ""
    return (f"{where}: the run changed files of the repository that the snippet does not declare: "
            f"{', '.join(changed)}{also} (check them; declare intended ones in its header, "
            f"blog: {{writes: [PATH, ...]}})")


@dataclass
class _Window:
    where: str
    declared: tuple[str, ...]
    before: Snapshot
    beside: set[int] = field(default_factory=set)


class Overlapping:
    """The check for runs that may overlap (`blog run -j N`): a snapshot when each starts and one when it
    ends. A change seen while several ran cannot be told apart, so it is charged to each of them unless
    one of them declares it; a run alone is checked exactly as one run."""

    def __init__(self, root: Path, exclude: Iterable[Path]) -> None:
        self.root = root
        self.exclude = list(exclude)
        self.windows: dict[int, _Window] = {}
        self.ended: dict[int, _Window] = {}

    def started(self, key: int, where: str, declared: Iterable[str]) -> None:
        for window in self.windows.values():
            window.beside.add(key)
        self.windows[key] = _Window(where, tuple(declared), snapshot(self.root), set(self.windows))

    def finished(self, key: int) -> str | None:
        """The refusal of the run ``key``, None when it changed nothing undeclared."""
        window = self.windows.pop(key)
        self.ended[key] = window
        beside = [self.windows.get(k) or self.ended[k] for k in window.beside]
        declared = [*window.declared, *(p for w in beside for p in w.declared)]
        changed = undeclared(window.before, snapshot(self.root), self.root, declared, self.exclude)
        return refusal(window.where, changed, (w.where for w in beside)) if changed else None


def _relative(path: Path, root: Path) -> str | None:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def _walk(root: Path) -> Iterable[str]:
    """Without git there is no ignore list: skip hidden folders, caches and the conventional build folder."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "site")]
        for name in files:
            yield Path(folder, name).relative_to(root).as_posix()


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None
