"""The one atomic writer (results, reports, state files and keys are never seen half written), and paths
as messages show them."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: The mode an ordinary `open(path, "w")` would give: 0666 less the process's umask.
_PUBLIC = 0o666 & ~_umask()


def atomic_write(path: Path, data: bytes | Iterable[bytes], *, durable: bool = True) -> None:
    """Write through a temporary file and a rename: readers see the old file or the new, never half.

    ``data``: the bytes, or pieces of them written as they come (a large file is never whole in memory).
    ``durable``: on disk before the rename (fsync); a file rewritten on every rebuild of `serve` need
    not be, and an fsync a file costs it tens of milliseconds on a busy disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, _PUBLIC)  # mkstemp makes 0600; a built site's files must stay readable when deployed
        with os.fdopen(fd, "wb") as handle:
            for piece in (data,) if isinstance(data, bytes | bytearray | memoryview) else data:
                handle.write(piece)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def display_path(path: Path) -> str:
    """A path as messages show it: relative to the working directory when it is below it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
