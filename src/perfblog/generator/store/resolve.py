"""Modes, freshness, and which stored result a post shows.

A result is fresh when its key equals the snippet's current key. When it is not, the stored component
hashes say why: which cell's code changed, which local module changed, which appeared or went away.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from perfblog.generator import device
from perfblog.generator.errors import GeneratorError
from perfblog.generator.source.celltags import display_tags
from perfblog.generator.source.snippet import KEY_SCHEME, Cell, Snippet, sha256
from perfblog.generator.store.result import Result

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


#: Why a result whose digest does not match its content is never fresh.
EDITED = "its result file was edited after `blog run` wrote it (the digest does not match)"
#: Why a result whose image files are missing, or are not the images it names, is never fresh.
DAMAGED = ("its image files {names} were changed or removed after `blog run` wrote them (missing, or their "
           "bytes do not match the hash in their name)")


def stale_reasons(snippet: Snippet, result: Result) -> list[str]:
    """Why ``result`` no longer matches the snippet's code (or was edited since); empty when it is fresh."""
    if not result.intact:
        return [EDITED]
    if result.damaged:
        return [DAMAGED.format(names=", ".join(result.damaged))]
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


#: The snippet header option by which an author accepts showing a stale GPU result until a GPU re-run.
ACCEPT_STALE_GPU = "accept_stale_gpu_until_rerun"


@dataclass(frozen=True)
class Status:
    """A snippet's result on one device class: fresh, stale (with reasons) or missing.

    ``accepted``: a stale accelerator result the snippet's author accepts showing until a GPU re-run
    (header ``accept_stale_gpu_until_rerun: true``): still marked stale, but not a build error.
    """

    device_class: str
    state: str  # "fresh", "stale" or "missing"
    result: Result | None = None
    reasons: list[str] = field(default_factory=list)
    accepted: bool = False

    @property
    def why(self) -> str:
        return "; ".join(self.reasons)

    @property
    def accelerated(self) -> bool:
        """Whether this is a result of an accelerator (a GPU result)."""
        found = device.kind(self.device_class)
        return found is not None and found.accelerator

    @property
    def ran_at(self) -> str:
        return self.result.provenance.ran_at if self.result else ""


def status_of(snippet: Snippet, device_class: str, result: Result | None) -> Status:
    """The state of one device class's result for the snippet's current code."""
    if result is None:
        return Status(device_class, "missing", None, ["no result on this device"])
    reasons = stale_reasons(snippet, result)
    status = Status(device_class, "stale" if reasons else "fresh", result, reasons)
    if reasons and status.accelerated and snippet.options.get(ACCEPT_STALE_GPU) is True:
        return Status(device_class, "stale", result, reasons, accepted=True)
    return status


def statuses(snippet: Snippet, results: Mapping[str, Result], current: str) -> list[Status]:
    """One status per stored device class, plus the current class when it has none; preferred first."""
    classes = device.preferred_order(set(results) | {current}, current)
    return [status_of(snippet, c, results.get(c)) for c in classes]


def shown(snippet: Snippet, results: Mapping[str, Result], current: str) -> Status:
    """What a post shows: a GPU result whenever one exists (fresh first, else the newest stale one, with
    its reason: a CPU run never demotes a page from GPU numbers), else a fresh CPU result, else the
    newest stale result, else missing."""
    found = [status_of(snippet, c, results[c]) for c in device.preferred_order(results, current)]
    for group in ([s for s in found if s.accelerated], found):
        fresh = [s for s in group if s.state == "fresh"]
        if fresh:
            return fresh[0]
        if group:
            return max(group, key=lambda s: s.ran_at)
    return Status(current, "missing", None, ["no result on any device"])


def needs_run(snippet: Snippet, results: Mapping[str, Result], current: str, run_mode: Mode) -> bool:
    """Whether ``run_mode`` executes the snippet on the ``current`` device class now."""
    if not run_mode.executes:
        return False
    if run_mode is Mode.FORCE:
        return True
    kind = device.kind(current)
    for cls, result in results.items():
        # A fresh result from this device or a preferred one, or one a run on this kind filed as a CPU
        # result because the snippet never used the accelerator: running again would measure the same.
        good = (cls == current or device.rank(cls) < device.rank(current)
                or (kind is not None and result.provenance.requested == kind.name))
        if good and not stale_reasons(snippet, result):
            return False
    return True


def recorded(path: Path, root: Path, result: Result) -> Snippet | None:
    """The snippet's code cells as a stored result recorded them, if neither the file nor its local
    modules changed since (same bytes, same hashes): a build with fresh results never parses a snippet.
    The cells carry no prose, so only reading uses this, never a run; the header's options are the
    ones the result was made with (same bytes, same header).
    """
    hashes = result.hashes
    if hashes.scheme != KEY_SCHEME or not result.intact:
        return None  # keyed by an older rule, or edited by hand: parse the file and compare afresh
    try:
        if not hashes.file or hashes.file != sha256(Path(path).read_bytes()):
            return None
        for rel, digest in hashes.modules.items():
            module = Path(root) / rel
            if not module.is_file() or sha256(module.read_bytes()) != digest:
                return None
    except OSError:
        return None
    cells = tuple(
        Cell(index=i, kind="code", source=c.source, line=c.line,
             name=None if c.name.startswith("#") else c.name, raises=c.raises, hide=c.hide, number=i + 1,
             tags=display_tags(c.tags))
        for i, c in enumerate(result.cells))
    found = Snippet(path=Path(path).resolve(), root=Path(root).resolve(), cells=cells,
                    options=dict(result.options), modules=dict(hashes.modules), file_hash=hashes.file)
    return found if found.key == result.key else None
