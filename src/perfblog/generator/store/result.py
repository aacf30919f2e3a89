"""The result of a snippet as the runner produces it, the store keeps it and the embeds show it.

Frozen dataclasses that are their own JSON format (``codec``): on disk a result is one JSON object of
their fields (ARCHITECTURE.md lists them) with a ``schema`` version, a ``digest`` and ``status``.
Reading validates every field and raises ``ResultFormatError`` naming the first bad one
(``cells[2].outputs[0].text``), so a malformed or hostile result file never surfaces as a KeyError deep
in a build.

What a cell produced and what a snippet recorded are in ``content``; the format's version, its digest
and migrations in ``schema``; reading and writing in ``codec``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from perfblog.generator.errors import ResultFormatError
from perfblog.generator.source.snippet import Hashes
from perfblog.generator.store import codec
from perfblog.generator.store.codec import Scalar
from perfblog.generator.store.content import (
    IMAGES,
    ChartRecord,
    DisplayOutput,
    Output,
    Record,
    TableRecord,
    ValueRecord,
    VerdictRecord,
    filed_by_name,
)
from perfblog.generator.store.schema import SCHEMA, digest, intact, migrate

#: Characters of text one cell's outputs keep by default (``exec_max_output``); the rest is cut, visibly.
MAX_OUTPUT = 300_000


# --- the result ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CellResult(codec.Json):
    """One executed code cell: its source then, where it was, what it output and how long it took."""

    name: str  # the cell's name, or "#N" for the N-th unnamed code cell
    source: str
    line: int  # the line where the cell starts in the snippet (its ``# %%`` marker, fence or first line)
    outputs: tuple[Output, ...]
    wall_s: float
    raises: bool = False
    hide: bool = False
    tags: tuple[str, ...] = ()  # its display tags (``celltags``), which change how embeds show it


@dataclass(frozen=True)
class GpuInfo(codec.Json):
    """The accelerator the kernel measured on, as its probe saw it (see ``probe.py``)."""

    name: str
    driver: str | None = None
    cuda: str | None = None  # the CUDA version torch was built with
    capability: str | None = None  # "9.0"


@dataclass(frozen=True)
class Provenance(codec.Json):
    """Where and when a result was measured: what the kernel saw, the repository's state, the run's time.

    ``requested`` is the device kind the run was asked for ("cuda" on a GPU machine); ``accelerator_used``
    whether the snippet's torch really initialised that accelerator. A result is filed by what was used:
    a snippet whose tensors never touched the GPU is a CPU result of that machine, and ``gpu`` is null.
    """

    device: str  # the GPU's name, else the CPU's
    cpu: str | None
    cores: int | None
    gpu: GpuInfo | None
    python: str | None
    torch: str | None
    triton: str | None
    git_commit: str | None
    git_dirty: bool | None
    ran_at: str  # UTC, ISO 8601, "2026-12-01T08:00:00Z"
    duration_s: float
    requested: str | None = None  # a kind's name in ``device.KINDS``; null in results migrated from 1
    accelerator_used: bool | None = None
    node: str | None = None  # the cluster node that ran it ("host (ray node …)"); null: `blog run` here


@dataclass(frozen=True)
class Rekey(codec.Json):
    """A re-keying by `blog migrate --rekey`: the result was kept fresh across a change of the named
    harness modules (or the key scheme) that left the snippet's measured code as it was."""

    at: str  # UTC, ISO 8601
    from_key: str
    modules: tuple[str, ...]


class Outcome(StrEnum):
    """How one code cell of a run ended. Only a run that goes on past a failing cell (a torch version
    run, ``RunOptions.keep_going``) records cells that did not end ``ok``."""

    OK = "ok"  # it ran as declared: no raise, or the raise its ``raises=true`` declares
    RAISED = "raised"  # it raised although not declared to (an assertion of a claim that does not hold)
    NOT_RAISED = "not-raised"  # declared ``raises=true``, it raised nothing
    TIMED_OUT = "timed-out"
    NOT_RUN = "not-run"  # the kernel died or timed out before it


@dataclass(frozen=True)
class CellOutcome(codec.Json):
    """One code cell's outcome in a run that records them: its name, line, and the error's first line."""

    name: str
    line: int
    outcome: Outcome
    error: str | None = None  # "AssertionError: ..." for a cell that raised; null when it ran as declared


@dataclass(frozen=True)
class Failure(codec.Json):
    """Why a stored run failed (only torch version runs store failed runs): the one line naming file and
    line, the cell it failed at (null: before any cell ran, a kernel that never started) and its traceback."""

    message: str
    cell: str | None
    traceback: str | None = None


#: The result's fields on disk that are the document's, not the result's: its format and state.
ENVELOPE = ("schema", "digest", "status")


def _section() -> Any:
    """A section of records by name (``values``, ``tables``, ...)."""
    return field(default_factory=dict, metadata=codec.check(filed_by_name))


@dataclass(frozen=True)
class Result:
    """A run of one snippet on one device class: a successful one (what posts show), or, stored only as a
    torch version's record (``store.versions``), a failed one with its ``failure`` and each cell's
    ``outcomes``."""

    snippet: str  # the snippet's stem
    key: str  # the hash of its code cells and local modules when it ran
    hashes: Hashes
    device_class: str  # "cpu-x86_64", "cuda-nvidia-h200"
    provenance: Provenance
    cells: tuple[CellResult, ...]
    values: Mapping[str, ValueRecord] = _section()
    tables: Mapping[str, TableRecord] = _section()
    charts: Mapping[str, ChartRecord] = _section()
    verdicts: Mapping[str, VerdictRecord] = _section()
    rekeyed: tuple[Rekey, ...] = ()
    #: The snippet header's ``blog:`` options when it ran (the same file bytes have the same options):
    #: scalars, or lists of strings (``writes``).
    options: Mapping[str, Scalar | list[str]] = field(default_factory=dict)
    #: Each code cell's outcome, recorded by a run that goes on past a failing cell (a torch version
    #: run); empty for a run that stops at the first (`blog run`: its stored results all ran ``ok``).
    outcomes: tuple[CellOutcome, ...] = ()
    #: Why the run failed; null for a successful one (the document's ``status`` says which).
    failure: Failure | None = None
    #: False when the file's content no longer matches the digest `blog run` recorded in it: something
    #: else edited it. An accident check (anyone can recompute a digest), not authentication.
    intact: bool = field(default=True, compare=False, metadata=codec.NOT_STORED)
    #: The image files it names that are missing beside it, or whose bytes no longer hash to their name
    #: (set by the store when it reads the result; such a result is stale and those files unpublished).
    damaged: tuple[str, ...] = field(default=(), compare=False, metadata=codec.NOT_STORED)

    def cell(self, name: str) -> CellResult | None:
        """The stored cell called ``name`` (a name or ``#N``), if it ran."""
        return next((c for c in self.cells if c.name == name), None)

    @property
    def images(self) -> frozenset[str]:
        """The names of the image files its outputs show: the only files beside it that are published."""
        return frozenset(out.data[mime] for cell in self.cells for out in cell.outputs
                         if isinstance(out, DisplayOutput) for mime in IMAGES if mime in out.data)

    def records(self, kind: str) -> Mapping[str, Record]:
        """The records of one kind ("value", "table", "chart", "verdict") by name."""
        return {"value": self.values, "table": self.tables, "chart": self.charts,
                "verdict": self.verdicts}[kind]

    @classmethod
    def from_json(cls, data: object) -> Result:
        """Validate and read a result document of this or an older schema (migrated on the way in); a
        document whose digest does not match its content reads as not ``intact``."""
        unedited = intact(data)
        document = migrate(data)
        for key, hint in zip(ENVELOPE, (int, str, str), strict=True):
            if key not in document:
                raise ResultFormatError(key, "missing")
            codec.decode(hint, document[key], key)
        fields = {key: value for key, value in document.items() if key not in ENVELOPE}
        result = codec.read(cls, fields, "", intact=unedited)
        if document["status"] != result.status:
            raise ResultFormatError("status", f"expected {result.status!r}: the run "
                                              f"{'failed' if result.failure else 'records no failure'}")
        return result

    @property
    def status(self) -> str:
        """"ok", or "failed" for a run stored with its ``failure``."""
        return "failed" if self.failure is not None else "ok"

    def to_json(self) -> dict[str, Any]:
        """The document the store writes (with sorted keys, so diffs of committed results stay small)."""
        document = {"schema": SCHEMA, "status": self.status, **codec.write(self)}
        return {**document, "digest": digest(document)}
