"""Local state files of `blog` commands (what was submitted, what was exported): one JSON object each.

A state file is versioned, rewritten whole and atomically (``fsio.atomic_write``), and only after the
work it records is done, so a crash leaves the old state or the new, never a torn one. A missing file
is an empty state; a damaged one is an error naming the file (and line), and is never overwritten.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perfblog.core.errors import BlogError
from perfblog.core.fsio import atomic_write


def load(path: Path, version: int, what: str, error: type[BlogError] = BlogError) -> dict[str, Any]:
    """The state in ``path`` (``{}`` when there is none yet); ``what`` names it in messages."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read the {what}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise error(f"{path}:{exc.lineno}: the {what} is not valid JSON ({exc.msg}); "
                    f"fix or delete it") from exc
    if not isinstance(data, dict) or data.get("version") != version:
        raise error(f"{path}: not a version-{version} {what} file")
    return data


def save(path: Path, data: dict[str, Any], version: int, what: str,
         error: type[BlogError] = BlogError) -> None:
    """Replace ``path`` atomically with ``data`` (``version`` added first)."""
    text = json.dumps({"version": version, **data}, ensure_ascii=False, indent=1)
    try:
        atomic_write(path, f"{text}\n".encode())
    except OSError as exc:
        raise error(f"{path}: cannot write the {what}: {exc}") from exc
