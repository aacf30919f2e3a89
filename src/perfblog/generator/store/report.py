"""The per-build execution report: what each snippet showed, where it came from, and why it is not fresh.

Printed as a short summary in the build log and written as JSON for status pages and CI.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from perfblog.core.fsio import atomic_write
from perfblog.generator.store.resolve import Mode


@dataclass
class Entry:
    """One snippet in one build."""

    snippet: str
    state: str  # "fresh", "stale", "missing", "off"
    source: str  # "store", "executed" or "none"
    device_class: str | None = None
    ran_at: str | None = None
    runtime_s: float | None = None  # how long the shown result took to run
    executed_s: float | None = None  # time spent executing it during this build
    reasons: list[str] = field(default_factory=list)
    error: str | None = None  # a run during this build that failed
    posts: list[str] = field(default_factory=list)


class BuildReport:
    """Collects entries during a build; ``summary`` and ``write`` at the end."""

    def __init__(self, mode: Mode, device_class: str) -> None:
        self.mode = mode
        self.device_class = device_class
        self.entries: dict[str, Entry] = {}
        #: Every page built: its source (relative to mkdocs.yml) -> {"url", "sha256" of the source}.
        self.pages: dict[str, dict[str, str | None]] = {}
        #: Every page and media file: its path in docs_dir -> its URL in the site (relative links).
        self.files: dict[str, str] = {}
        #: The site the report describes, when it is kept outside it (a build that embedded nothing).
        self.site_dir: str | None = None

    def add(self, entry: Entry) -> None:
        self.entries[entry.snippet] = entry

    def used_by(self, snippet: str, post: str) -> None:
        entry = self.entries.get(snippet)
        if entry is not None and post not in entry.posts:
            entry.posts.append(post)

    def counts(self) -> dict[str, int]:
        """Snippets per state, plus how many were executed and how many failed in this build."""
        counts: dict[str, int] = {}
        for e in self.entries.values():
            counts[e.state] = counts.get(e.state, 0) + 1
        counts["executed"] = sum(e.source == "executed" for e in self.entries.values())
        counts["failed"] = sum(e.error is not None for e in self.entries.values())
        return counts

    def summary(self) -> str:
        """One line for the build log."""
        c = self.counts()
        spent = sum(e.executed_s or 0 for e in self.entries.values())
        parts = [f"{len(self.entries)} snippet(s) embedded", f"mode {self.mode}",
                 f"device {self.device_class}",
                 f"{c.get('fresh', 0)} fresh", f"{c.get('stale', 0)} stale", f"{c.get('missing', 0)} missing",
                 f"{c['executed']} executed ({spent:.1f} s)", f"{c['failed']} failed"]
        if c.get("off"):
            parts.append(f"{c['off']} with outputs off")
        return "snippets: " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "device_class": self.device_class, "counts": self.counts(),
                "snippets": [asdict(e) for e in sorted(self.entries.values(), key=lambda e: e.snippet)],
                "pages": self.pages, "files": self.files,
                **({"site_dir": self.site_dir} if self.site_dir else {})}

    def write(self, path: Path) -> None:
        """Write the JSON report atomically."""
        text = json.dumps(self.to_json(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        atomic_write(path, text.encode("utf-8"))
