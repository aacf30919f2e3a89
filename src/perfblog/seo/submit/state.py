"""What each engine has already accepted (URL and the lastmod it was accepted with), kept on disk.

The file is rewritten whole, atomically (temporary file in the same folder, fsync, os.replace), and only
after an engine has answered, so a crash at any moment leaves either the old or the new state, never a
torn one, and never records a URL that was not accepted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from perfblog.core.fsio import atomic_write
from perfblog.seo.errors import SubmitStateError
from perfblog.seo.submit.sitemaps import SitemapEntry

VERSION = 1


class SubmitState:
    """Accepted URLs per engine: `{"version": 1, "engines": {engine: {url: {"lastmod", "at"}}}}`."""

    def __init__(self, path: Path, engines: dict[str, dict[str, dict[str, str | None]]] | None = None):
        self.path = path
        self._engines = engines or {}

    @classmethod
    def load(cls, path: Path) -> SubmitState:
        """Read the state; a missing file is an empty state, a damaged one an error (never overwritten)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise SubmitStateError(f"{path}: cannot read the submission state: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise SubmitStateError(
                f"{path}:{exc.lineno}: the submission state is not valid JSON ({exc.msg}); "
                "fix or delete it (deleting it resends every URL)"
            ) from exc
        engines = data.get("engines") if isinstance(data, dict) else None
        if not isinstance(engines, dict) or data.get("version") != VERSION:
            raise SubmitStateError(f"{path}: not a version-{VERSION} submission state file")
        return cls(path, engines)

    def accepted(self, engine: str) -> Mapping[str, str | None]:
        """URL -> the lastmod it had when `engine` accepted it."""
        return {url: record.get("lastmod") for url, record in self._engines.get(engine, {}).items()}

    def record(self, engine: str, entries: Iterable[SitemapEntry], at: datetime | None = None) -> None:
        """Note that `engine` accepted `entries` (in memory; `save` writes it)."""
        stamp = (at or datetime.now(UTC)).isoformat(timespec="seconds")
        urls = self._engines.setdefault(engine, {})
        for entry in entries:
            urls[entry.loc] = {"lastmod": entry.lastmod, "at": stamp}

    def save(self) -> None:
        """Replace the file atomically with the current state."""
        text = json.dumps({"version": VERSION, "engines": self._engines}, ensure_ascii=False, indent=1)
        try:
            atomic_write(self.path, f"{text}\n".encode())
        except OSError as exc:
            raise SubmitStateError(f"{self.path}: cannot write the submission state: {exc}") from exc
