"""The one atomic writer (results, reports, state files and keys are never seen half written), and paths
as messages show them."""

from __future__ import annotations

import contextlib
import json
import os
import stat
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


class UnreadableJSON(ValueError):
    """A JSON file that is too large, too deeply nested, not UTF-8 or not JSON; the message says which."""


def load_json(data: bytes | str) -> object:
    """Parse JSON that came from outside (results, caches, state files): a nesting too deep for the
    parser is an ``UnreadableJSON`` like any other malformed text, not a RecursionError."""
    try:
        return json.loads(data)
    except RecursionError:
        raise UnreadableJSON("nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise UnreadableJSON(f"not UTF-8 ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise UnreadableJSON(f"not JSON: {exc.msg} (line {exc.lineno})") from None


def read_json(path: Path, *, limit: int) -> object:
    """The JSON value in `path`, read only when it is a regular file of at most `limit` bytes (a
    symbolic link is not followed). OSError when it cannot be opened; ``UnreadableJSON`` else."""
    return load_json(read_regular(path, limit=limit))


def read_regular(path: Path, *, limit: int) -> bytes:
    """The bytes of `path` when it is a regular file (never through a symbolic link as its last part)
    of at most `limit` bytes. OSError when it cannot be opened; ``UnreadableJSON``'s parent ValueError
    when it is not a regular file or is larger."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_size > limit:
            raise ValueError(f"{info.st_size} bytes, more than the {limit} read")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"more than the {limit} bytes read")
    return data
