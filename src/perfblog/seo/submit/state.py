"""What each engine has already accepted (URL and the lastmod it was accepted with), kept on disk.

The file is rewritten whole, atomically (temporary file in the same folder, fsync, os.replace), and only
after an engine has answered, so a crash at any moment leaves either the old or the new state, never a
torn one, and never records a URL that was not accepted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from perfblog.core import state
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
        data = state.load(path, VERSION, "submission state", SubmitStateError)
        engines = data.get("engines", {}) if data else {}
        if not isinstance(engines, dict):
            raise SubmitStateError(f"{path}: not a version-{VERSION} submission state file")
        for engine, urls in engines.items():
            if not isinstance(urls, dict) or not all(isinstance(r, dict) for r in urls.values()):
                raise SubmitStateError(f"{path}: engines.{engine}: expected an object of URL -> "
                                       f"{{\"lastmod\", \"at\"}}; fix or delete the file")
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
        state.save(self.path, {"engines": self._engines}, VERSION, "submission state", SubmitStateError)
