"""Modes, freshness, and which stored result a post shows.

A result is fresh when its key equals the snippet's current key. When it is not, the stored component
hashes say why: which cell's code changed, which local module changed, which appeared or went away.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from perfblog.generator import device
from perfblog.generator.errors import GeneratorError
from perfblog.generator.result import Result
from perfblog.generator.snippet import Snippet

MODE_ENV = "BLOG_EXEC_MODE"


class Mode(StrEnum):
    """When snippets execute (`exec_mode`, ``BLOG_EXEC_MODE``, `blog run --mode`)."""

    AUTO = "auto"  # run what has no fresh result on this device or a preferred one
    FROZEN = "frozen"  # never run: show the stored results
    FORCE = "force"  # run everything
    OFF = "off"  # never run, show code without outputs: a draft preview

    @property
    def executes(self) -> bool:
        """Whether this mode may run a snippet at all."""
        return self in (Mode.AUTO, Mode.FORCE)

    @property
    def shows_outputs(self) -> bool:
        return self is not Mode.OFF


def mode(configured: str = Mode.AUTO, env: Mapping[str, str] | None = None) -> Mode:
    """The effective mode: ``BLOG_EXEC_MODE`` wins over the configured one."""
    env = os.environ if env is None else env
    chosen = env.get(MODE_ENV) or configured
    try:
        return Mode(chosen)
    except ValueError:
        source = MODE_ENV if env.get(MODE_ENV) else "exec_mode"
        raise GeneratorError(f"{source}={chosen!r} is not a mode (choose from {', '.join(Mode)})") from None


def stale_reasons(snippet: Snippet, result: Result) -> list[str]:
    """Why ``result`` no longer matches the snippet's code; empty when it is fresh."""
    if result.key == snippet.key:
        return []
    hashes = result.hashes
    reasons: list[str] = []
    old_cells = hashes.cells
    new_cells = snippet.cell_hashes
    for name, digest in new_cells.items():
        if name not in old_cells:
            reasons.append(f"cell '{name}' is new")
        elif old_cells[name] != digest:
            reasons.append(f"code of cell '{name}' changed")
    reasons += [f"cell '{name}' was removed" for name in old_cells if name not in new_cells]
    old_order = [c.name for c in result.cells]
    if not reasons and old_order and old_order != list(new_cells):
        reasons.append("cells were reordered")
    if not reasons and hashes.code != snippet.code_hash:
        reasons.append("code changed")
    old_mods = hashes.modules
    for path, digest in snippet.modules.items():
        if path not in old_mods:
            reasons.append(f"now imports local module {path}")
        elif old_mods[path] != digest:
            reasons.append(f"local module {path} changed")
    reasons += [f"no longer imports local module {path}" for path in old_mods if path not in snippet.modules]
    return reasons or ["result key differs from the current code"]


@dataclass(frozen=True)
class Status:
    """A snippet's result on one device class: fresh, stale (with reasons) or missing."""

    device_class: str
    state: str  # "fresh", "stale" or "missing"
    result: Result | None = None
    reasons: list[str] = field(default_factory=list)

    @property
    def why(self) -> str:
        return "; ".join(self.reasons)

    @property
    def ran_at(self) -> str:
        return self.result.provenance.ran_at if self.result else ""


def status_of(snippet: Snippet, device_class: str, result: Result | None) -> Status:
    """The state of one device class's result for the snippet's current code."""
    if result is None:
        return Status(device_class, "missing", None, ["no result on this device"])
    reasons = stale_reasons(snippet, result)
    return Status(device_class, "stale" if reasons else "fresh", result, reasons)


def statuses(snippet: Snippet, results: Mapping[str, Result], current: str) -> list[Status]:
    """One status per stored device class, plus the current class when it has none; preferred first."""
    classes = device.preferred_order(set(results) | {current}, current)
    return [status_of(snippet, c, results.get(c)) for c in classes]


def shown(snippet: Snippet, results: Mapping[str, Result], current: str) -> Status:
    """What a post shows: fresh GPU, else fresh CPU, else the newest stale result, else missing."""
    found = [status_of(snippet, c, results[c]) for c in device.preferred_order(results, current)]
    fresh = [s for s in found if s.state == "fresh"]
    if fresh:
        return fresh[0]
    if found:
        return max(found, key=lambda s: s.ran_at)
    return Status(current, "missing", None, ["no result on any device"])


def needs_run(snippet: Snippet, results: Mapping[str, Result], current: str, run_mode: Mode) -> bool:
    """Whether ``run_mode`` executes the snippet on the ``current`` device class now."""
    if not run_mode.executes:
        return False
    if run_mode is Mode.FORCE:
        return True
    for cls, result in results.items():
        good = cls == current or device.rank(cls) < device.rank(current)
        if good and not stale_reasons(snippet, result):
            return False
    return True
