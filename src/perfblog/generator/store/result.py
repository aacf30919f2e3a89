"""The result of a snippet as the runner produces it, the store keeps it and the embeds show it.

Frozen dataclasses with ``from_json``/``to_json``. On disk a result is one JSON object (see
``Result.to_json``; ARCHITECTURE.md lists every field) with a ``schema`` version. Reading validates
every field and raises ``ResultFormatError`` naming the first bad one (``cells[2].outputs[0].text``),
so a malformed or hostile result file never surfaces as a KeyError deep in a build.

What a cell produced and what a snippet recorded are in ``content``; the format's version, its digest
and migrations in ``schema``; the field-by-field reader in ``reader``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from perfblog.generator.errors import ResultFormatError
from perfblog.generator.store.content import (
    IMAGES,
    ChartRecord,
    DisplayOutput,
    Output,
    Record,
    TableRecord,
    ValueRecord,
    VerdictRecord,
    output_from,
    section,
)
from perfblog.generator.store.reader import Reader, Scalar, kind, scalar
from perfblog.generator.store.schema import SCHEMA, digest, intact, migrate

#: Characters of text one cell's outputs keep by default (``exec_max_output``); the rest is cut, visibly.
MAX_OUTPUT = 300_000


# --- the result ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CellResult:
    """One executed code cell: its source then, where it was, what it output and how long it took."""

    name: str  # the cell's name, or "#N" for the N-th unnamed code cell
    source: str
    line: int  # the line where the cell starts in the snippet (its ``# %%`` marker, fence or first line)
    outputs: tuple[Output, ...]
    wall_s: float
    raises: bool = False
    hide: bool = False
    tags: tuple[str, ...] = ()  # its display tags (``celltags``), which change how embeds show it

    @classmethod
    def from_json(cls, data: object, where: str = "cell") -> CellResult:
        r = Reader(data, where)
        tags = r.scalars("tags")
        for i, tag in enumerate(tags):
            if not isinstance(tag, str):
                raise ResultFormatError(f"{r.path('tags')}[{i}]", f"expected a string, got {kind(tag)}")
        cell = cls(name=r.text("name"), source=r.text("source"), line=r.get("line", int),
                   outputs=tuple(output_from(o) for o in r.items("outputs")), wall_s=r.number("wall_s"),
                   raises=r.get("raises", bool), hide=r.get("hide", bool), tags=tags)  # type: ignore[arg-type]
        r.done()
        return cell

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "line": self.line,
                "outputs": [o.to_json() for o in self.outputs], "wall_s": self.wall_s, "raises": self.raises,
                "hide": self.hide, "tags": list(self.tags)}


@dataclass(frozen=True)
class Hashes:
    """What the key was made of, so staleness can say which part changed (see ``snippet.Snippet``)."""

    code: str  # all code cells
    cells: Mapping[str, str]  # cell name -> hash
    modules: Mapping[str, str]  # local module path (relative to the snippets dir) -> hash
    file: str  # the snippet file's bytes
    scheme: int  # which modules the key covers (``snippet.KEY_SCHEME``)

    @classmethod
    def from_json(cls, data: object, where: str = "hashes") -> Hashes:
        r = Reader(data, where)
        hashes = cls(code=r.text("code"), cells=r.mapping("cells", str), modules=r.mapping("modules", str),
                     file=r.text("file"), scheme=r.get("scheme", int))
        r.done()
        return hashes

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "cells": dict(self.cells), "modules": dict(self.modules),
                "file": self.file, "scheme": self.scheme}


@dataclass(frozen=True)
class GpuInfo:
    """The accelerator the kernel measured on, as its probe saw it (see ``probe.py``)."""

    name: str
    driver: str | None = None
    cuda: str | None = None  # the CUDA version torch was built with
    capability: str | None = None  # "9.0"

    @classmethod
    def from_json(cls, data: object, where: str = "gpu") -> GpuInfo:
        r = Reader(data, where)
        gpu = cls(name=r.text("name"), driver=r.text("driver", True), cuda=r.text("cuda", True),
                  capability=r.text("capability", True))
        r.done()
        return gpu

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "driver": self.driver, "cuda": self.cuda, "capability": self.capability}


@dataclass(frozen=True)
class Provenance:
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

    @classmethod
    def from_json(cls, data: object, where: str = "provenance") -> Provenance:
        r = Reader(data, where)
        gpu = r.get("gpu", dict, nullable=True)
        prov = cls(device=r.text("device"), cpu=r.text("cpu", True), cores=r.get("cores", int, nullable=True),
                   gpu=None if gpu is None else GpuInfo.from_json(gpu, r.path("gpu")),
                   python=r.text("python", True), torch=r.text("torch", True), triton=r.text("triton", True),
                   git_commit=r.text("git_commit", True), git_dirty=r.get("git_dirty", bool, nullable=True),
                   ran_at=r.text("ran_at"), duration_s=r.number("duration_s"),
                   requested=r.text("requested", True),
                   accelerator_used=r.get("accelerator_used", bool, nullable=True), node=r.text("node", True))
        r.done()
        return prov

    def to_json(self) -> dict[str, Any]:
        return {"device": self.device, "cpu": self.cpu, "cores": self.cores,
                "gpu": None if self.gpu is None else self.gpu.to_json(), "python": self.python,
                "torch": self.torch, "triton": self.triton, "git_commit": self.git_commit,
                "git_dirty": self.git_dirty, "ran_at": self.ran_at, "duration_s": self.duration_s,
                "requested": self.requested, "accelerator_used": self.accelerator_used, "node": self.node}


@dataclass(frozen=True)
class Rekey:
    """A re-keying by `blog migrate --rekey`: the result was kept fresh across a change of the named
    harness modules (or the key scheme) that left the snippet's measured code as it was."""

    at: str  # UTC, ISO 8601
    from_key: str
    modules: tuple[str, ...]

    @classmethod
    def from_json(cls, data: object, where: str = "rekeyed") -> Rekey:
        r = Reader(data, where)
        modules = r.scalars("modules")
        if not all(isinstance(m, str) for m in modules):
            raise ResultFormatError(r.path("modules"), "expected a list of strings")
        rekey = cls(at=r.text("at"), from_key=r.text("from_key"), modules=modules)  # type: ignore[arg-type]
        r.done()
        return rekey

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "from_key": self.from_key, "modules": list(self.modules)}


@dataclass(frozen=True)
class Result:
    """A successful run of one snippet on one device class (failed runs are never stored)."""

    snippet: str  # the snippet's stem
    key: str  # the hash of its code cells and local modules when it ran
    hashes: Hashes
    device_class: str  # "cpu-x86_64", "cuda-nvidia-h200"
    provenance: Provenance
    cells: tuple[CellResult, ...]
    values: Mapping[str, ValueRecord] = field(default_factory=dict)
    tables: Mapping[str, TableRecord] = field(default_factory=dict)
    charts: Mapping[str, ChartRecord] = field(default_factory=dict)
    verdicts: Mapping[str, VerdictRecord] = field(default_factory=dict)
    rekeyed: tuple[Rekey, ...] = ()
    #: The snippet header's ``blog:`` options when it ran (the same file bytes have the same options).
    options: Mapping[str, Scalar | list[str]] = field(default_factory=dict)
    #: False when the file's content no longer matches the digest `blog run` recorded in it: something
    #: else edited it. An accident check (anyone can recompute a digest), not authentication.
    intact: bool = field(default=True, compare=False)
    #: The image files it names that are missing beside it, or whose bytes no longer hash to their name
    #: (set by the store when it reads the result; such a result is stale and those files unpublished).
    damaged: tuple[str, ...] = field(default=(), compare=False)

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
        r = Reader(migrate(data), "")
        r.get("schema", int)
        r.text("digest")
        if r.text("status") != "ok":
            raise ResultFormatError("status", "expected 'ok' (only successful results are stored)")
        result = cls(snippet=r.text("snippet"), key=r.text("key"),
                     hashes=Hashes.from_json(r.get("hashes", dict)), device_class=r.text("device_class"),
                     provenance=Provenance.from_json(r.get("provenance", dict)),
                     cells=tuple(CellResult.from_json(c.data, c.where) for c in r.items("cells")),
                     values=section(r, "value"), tables=section(r, "table"), charts=section(r, "chart"),
                     verdicts=section(r, "verdict"),
                     rekeyed=tuple(Rekey.from_json(k.data, k.where) for k in r.items("rekeyed")),
                     options=_options(r), intact=unedited)
        r.done()
        return result

    def to_json(self) -> dict[str, Any]:
        """The document the store writes (with sorted keys, so diffs of committed results stay small)."""
        document = self._content()
        return {**document, "digest": digest(document)}

    def _content(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "snippet": self.snippet,
            "key": self.key,
            "hashes": self.hashes.to_json(),
            "status": "ok",
            "device_class": self.device_class,
            "provenance": self.provenance.to_json(),
            "cells": [c.to_json() for c in self.cells],
            "values": {name: rec.to_json() for name, rec in self.values.items()},
            "tables": {name: rec.to_json() for name, rec in self.tables.items()},
            "charts": {name: rec.to_json() for name, rec in self.charts.items()},
            "verdicts": {name: rec.to_json() for name, rec in self.verdicts.items()},
            "rekeyed": [k.to_json() for k in self.rekeyed],
            "options": dict(self.options),
        }


def _options(r: Reader) -> dict[str, Scalar | list[str]]:
    """Header options are scalars, or lists of strings (``writes``)."""
    found = r.get("options", dict)
    for key, value in found.items():
        if not (isinstance(value, list) and all(isinstance(item, str) for item in value)):
            scalar(value, f"{r.path('options')}.{key}")
    return dict(found)
