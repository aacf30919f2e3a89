"""The frozen results: one JSON file per snippet per device class, written atomically, behind a lock.

Layout::

    <results_dir>/<snippet stem>/<device class>.json
    <results_dir>/<snippet stem>/<device class>-files/<sha256 prefix>.<ext>   (images)
    <results_dir>/.lock
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from perfblog.core.fsio import atomic_write, display_path, read_json
from perfblog.generator.errors import LockError, ResultFormatError, StoreError
from perfblog.generator.store.content import image_matches
from perfblog.generator.store.result import Result

LOCK_NAME = ".lock"
#: The largest result file read (a regular file, never through a link). The committed ones are under
#: 100 KB; a cell's text keeps at most `exec_max_output` characters (300,000 by default, up to 1.8 MB
#: as JSON at worst, every one escaped), so 64 MiB holds dozens of such cells, and a file made to
#: exhaust the build's memory is one line instead.
MAX_RESULT_BYTES = 64 * 2**20


class Store:
    """Reads and writes result files under ``root``; reads are validated and cached by file mtime."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._cache: dict[Path, tuple[int, Result]] = {}
        self._holder: int | None = None  # the thread holding the lock through this store

    def path(self, stem: str, device_class: str) -> Path:
        return self._inside(self.root / stem / f"{device_class}.json")

    def files_dir(self, stem: str, device_class: str) -> Path:
        return self._inside(self.root / stem / f"{device_class}-files")

    def _inside(self, path: Path) -> Path:
        """``path``, which must stay in the store once links are followed (a result is never read from or
        written to anywhere else)."""
        if not path.resolve().is_relative_to(self.root.resolve()):
            raise StoreError(f"{display_path(path)}: leads outside the results dir {display_path(self.root)}")
        return path

    def results(self, stem: str) -> dict[str, Result]:
        """Every stored result of a snippet, by device class."""
        folder = self.root / stem
        if not folder.is_dir():
            return {}
        found = {}
        for path in sorted(folder.glob("*.json")):
            result = self._read(self._inside(path))
            if result is not None:
                found[path.stem] = result
        return found

    def _read(self, path: Path) -> Result | None:
        """The result in ``path``, None when there is none; StoreError naming the file and the bad field."""
        try:
            mtime = path.stat().st_mtime_ns
        except FileNotFoundError:
            return None
        files = self.files_dir(path.parent.name, path.stem)
        stamp = (mtime, _listing(files))
        cached = self._cache.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        try:
            data = read_json(path, limit=MAX_RESULT_BYTES)
        except (OSError, ValueError) as exc:  # UnreadableJSON too: not JSON, nested too deeply, too large
            raise StoreError(f"{display_path(path)}: unreadable result file: {exc}") from exc
        try:
            result = Result.from_json(data)
        except ResultFormatError as exc:
            raise StoreError(f"{display_path(path)}: not a valid result file: {exc}") from exc
        if result.failure is not None:
            raise StoreError(f"{display_path(path)}: holds a failed run; only a torch version's record "
                             f"(versions/) keeps one")
        if (result.snippet, result.device_class) != (path.parent.name, path.stem):
            raise StoreError(f"{display_path(path)}: holds the result of {result.snippet} on "
                             f"{result.device_class}, not of {path.parent.name} on {path.stem}")
        damaged = tuple(sorted(name for name in result.images if not _image_ok(files / name, name)))
        if damaged:
            result = dataclasses.replace(result, damaged=damaged)
        self._cache[path] = (stamp, result)
        return result

    def save(self, result: Result, images: dict[str, bytes]) -> Path:
        """Write a successful result and its images; the old result stays intact until the last rename."""
        try:
            return self._save(result, images)
        except OSError as exc:
            raise StoreError(f"{self.root}: cannot write the result of {result.snippet}: {exc}") from exc

    def _save(self, result: Result, images: dict[str, bytes]) -> Path:
        stem, device_class = result.snippet, result.device_class
        files = self.files_dir(stem, device_class)
        if images:
            files.mkdir(parents=True, exist_ok=True)
            for name, data in images.items():
                atomic_write(files / name, data)
        target = self.path(stem, device_class)
        atomic_write(target, document(result))
        # Images are content-addressed, so removing the ones the new result no longer uses is safe.
        if files.is_dir():
            for old in files.iterdir():
                if old.name not in images:
                    old.unlink()
            if not any(files.iterdir()):
                files.rmdir()
        return target

    def rewrite(self, result: Result) -> Path:
        """Write a stored result's document again (its images stay as they are)."""
        target = self.path(result.snippet, result.device_class)
        try:
            atomic_write(target, document(result))
        except OSError as exc:
            raise StoreError(f"{display_path(target)}: cannot rewrite the result: {exc}") from exc
        return target

    def migrate(self) -> list[Path]:
        """Rewrite each stored result that is not in the current format (``result.SCHEMA``); those files.

        Reading already migrates in memory; this makes the files themselves current, once, so that the
        committed results have one format and the next real run's diff shows only what it measured.
        Every file is read (and validated) before any is written: a malformed one changes nothing.
        """
        rewrites = {}
        for path in sorted(self.root.glob("*/*.json")):
            result = self._read(self._inside(path))
            if result is not None and path.read_bytes() != document(result):
                rewrites[path] = document(result)
        for path, text in rewrites.items():
            try:
                atomic_write(path, text)
            except OSError as exc:
                raise StoreError(f"{display_path(path)}: cannot rewrite the result: {exc}") from exc
        return list(rewrites)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store exclusively; a second holder fails at once instead of waiting.

        Re-entrant for the thread that holds it, so `blog run` can hold the lock for the whole run while
        each snippet's run takes it again; any other thread or process gets ``LockError``.
        """
        if self._holder == threading.get_ident():
            yield
            return
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / LOCK_NAME
        try:
            handle = open(path, "a+")  # noqa: SIM115 - held for the duration of the context
        except OSError as exc:
            raise StoreError(f"{path}: cannot open the store's lock file: {exc}") from exc
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise LockError(f"the results store {self.root} is locked by {holder} "
                                f"(another `blog run` or build is executing snippets); try again when it ends"
                                ) from exc
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
            self._holder = threading.get_ident()
            try:
                yield
            finally:
                self._holder = None
        finally:
            handle.close()


def _listing(files: Path) -> tuple[tuple[str, int, int, int], ...]:
    """What the files beside a result are now (name, inode, size, mtime), so a swapped image is seen."""
    try:
        entries = sorted(os.scandir(files), key=lambda entry: entry.name)
    except OSError:
        return ()
    found = []
    for entry in entries:
        try:
            stat = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        found.append((entry.name, stat.st_ino, stat.st_size, stat.st_mtime_ns))
    return tuple(found)


def _image_ok(path: Path, name: str) -> bool:
    """Whether the image file a result names is there, a regular file (never a link), with the bytes its
    name is the hash of."""
    try:
        if path.is_symlink() or not path.is_file():
            return False
        return image_matches(name, path.read_bytes())
    except OSError:
        return False


def document(result: Result) -> bytes:
    """A result file's bytes: sorted keys, one space of indent, UTF-8 as is, so diffs stay small."""
    text = json.dumps(result.to_json(), sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    return text.encode("utf-8")
