"""The result of a snippet as the runner produces it, the store keeps it and the embeds show it.

Frozen dataclasses with ``from_json``/``to_json``. On disk a result is one JSON object (see
``Result.to_json``; ARCHITECTURE.md lists every field) with a ``schema`` version. Reading validates
every field and raises ``ResultFormatError`` naming the first bad one (``cells[2].outputs[0].text``),
so a malformed or hostile result file never surfaces as a KeyError deep in a build.

Changing the format: add the field to its class (``from_json`` reads it, ``to_json`` writes it), bump
``SCHEMA``, and register in ``MIGRATIONS`` the step that turns a document of the previous version into
the new one (filling the field for old files). Older files then still load, and ``blog migrate``
rewrites the stored ones once, so committed results stay in one format.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from perfblog.generator.errors import ResultFormatError
from perfblog.generator.mime import MIMES
from perfblog.generator.verdict import Verdict

#: The result format this code writes.
SCHEMA = 5
#: The first format whose files carry a ``digest`` of their own content.
DIGESTED = 4

#: Characters of text one cell's outputs keep by default (``exec_max_output``); the rest is cut, visibly.
MAX_OUTPUT = 300_000

#: A recorded scalar: what ``record.glue`` and table cells hold.
Scalar = None | bool | int | float | str


class _Reader:
    """One JSON object being read, with its place in the document for messages."""

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, dict):
            raise ResultFormatError(where or "result", f"expected an object, got {_kind(data)}")
        self.data = data
        self.where = where
        self._read: set[str] = set()

    def path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, *types: type, nullable: bool = False) -> Any:
        """The value of ``key``, which must be present and of one of ``types`` (or null if ``nullable``)."""
        value = self.raw(key)
        if value is None and nullable:
            return None
        if not _is(value, types):
            expected = " or ".join(_NAMES.get(t, t.__name__) for t in types)
            raise ResultFormatError(self.path(key), f"expected {expected}, got {_kind(value)}")
        return value

    def raw(self, key: str) -> object:
        """The value of ``key``, which must be present, whatever its type (the caller checks it)."""
        self._read.add(key)
        if key not in self.data:
            raise ResultFormatError(self.path(key), "missing")
        return self.data[key]

    def text(self, key: str, nullable: bool = False) -> Any:
        return self.get(key, str, nullable=nullable)

    def number(self, key: str, nullable: bool = False) -> Any:
        return self.get(key, int, float, nullable=nullable)

    def obj(self, key: str, nullable: bool = False) -> _Reader | None:
        value = self.get(key, dict, nullable=nullable)
        return None if value is None else _Reader(value, self.path(key))

    def mapping(self, key: str, value_type: type) -> dict[str, Any]:
        """An object whose values all have ``value_type`` (hashes, MIME data)."""
        found = self.get(key, dict)
        for name, value in found.items():
            if not _is(value, (value_type,)):
                raise ResultFormatError(f"{self.path(key)}.{name}",
                                        f"expected {_NAMES.get(value_type, value_type.__name__)}, "
                                        f"got {_kind(value)}")
        return dict(found)

    def items(self, key: str) -> list[_Reader]:
        """A list of objects."""
        found = self.get(key, list)
        return [_Reader(item, f"{self.path(key)}[{i}]") for i, item in enumerate(found)]

    def scalars(self, key: str, value: object | None = None, where: str | None = None) -> tuple[Scalar, ...]:
        found = self.get(key, list) if value is None else value
        where = where or self.path(key)
        if not isinstance(found, list):
            raise ResultFormatError(where, f"expected a list, got {_kind(found)}")
        for i, item in enumerate(found):
            _scalar(item, f"{where}[{i}]")
        return tuple(found)

    def done(self) -> None:
        """Refuse fields this schema does not have: they would be lost when the result is written back."""
        unknown = sorted(set(self.data) - self._read)
        if unknown:
            raise ResultFormatError(self.path(unknown[0]), "unknown field")


_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "an object",
          list: "a list"}


def _is(value: object, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in types  # JSON true is not a number here
    return isinstance(value, types)


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true or false", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _scalar(value: object, where: str) -> Scalar:
    if value is not None and not isinstance(value, (bool, int, float, str)):
        raise ResultFormatError(where, f"expected a number, string, true/false or null, got {_kind(value)}")
    return value  # type: ignore[return-value]


# --- outputs: what a cell printed or displayed, or the error it raised ------------------------------------


def truncate(text: str, keep: int) -> str:
    """The first ``keep`` characters of ``text`` and a note saying how much was cut (when anything was)."""
    if len(text) <= keep:
        return text
    return f"{text[:keep]}\n… [output truncated: {len(text) - keep:,} more characters not kept]\n"


@dataclass(frozen=True)
class StreamOutput:
    """Text a cell wrote to stdout or stderr (consecutive writes to one stream joined)."""

    TYPE: ClassVar[str] = "stream"
    name: str  # "stdout" or "stderr"
    text: str

    @classmethod
    def read(cls, r: _Reader) -> StreamOutput:
        return cls(name=r.text("name"), text=r.text("text"))

    def to_json(self) -> dict[str, Any]:
        return {"type": self.TYPE, "name": self.name, "text": self.text}


#: Image outputs are stored as files beside the result, by MIME type, named by a hash of their bytes.
IMAGES = {m.name: m.ext for m in MIMES if m.ext}
#: The only names an image file may have (a result file cannot point a page at another path).
IMAGE_NAME = re.compile(rf"[0-9a-f]{{16}}\.(?:{'|'.join(IMAGES.values())})")


def image_name(blob: bytes, ext: str) -> str:
    """The name an image file gets: the first 64 bits of its SHA-256, so its name is its content."""
    return f"{hashlib.sha256(blob).hexdigest()[:16]}.{ext}"


def image_matches(name: str, blob: bytes) -> bool:
    """Whether ``blob`` is the image a result names ``name`` (a swapped file is not)."""
    ext = name.rpartition(".")[2]
    return bool(IMAGE_NAME.fullmatch(name)) and image_name(blob, ext) == name


@dataclass(frozen=True)
class DisplayOutput:
    """A rich display: MIME type -> text, or for an image the name of its file beside the result; the
    kernel's metadata per MIME type that changes how it shows (an image's ``width`` and ``height``)."""

    TYPE: ClassVar[str] = "display"
    data: Mapping[str, str]
    metadata: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    @classmethod
    def read(cls, r: _Reader) -> DisplayOutput:
        data = r.mapping("data", str)
        for mime, ext in IMAGES.items():
            if mime in data and not (IMAGE_NAME.fullmatch(data[mime]) and data[mime].endswith(f".{ext}")):
                raise ResultFormatError(f"{r.path('data')}.{mime}",
                                        f"expected an image file name like 0123456789abcdef.{ext}")
        metadata = {}
        for mime, value in r.get("metadata", dict).items():
            where = f"{r.path('metadata')}.{mime}"
            sizes = _Reader(value, where)
            for key in sizes.data:
                if key not in IMAGE_METADATA:
                    raise ResultFormatError(f"{where}.{key}",
                                            f"unknown field (known: {', '.join(IMAGE_METADATA)})")
                value = sizes.get(key, int)
                if value <= 0:
                    raise ResultFormatError(f"{where}.{key}", f"expected a positive integer, got {value}")
            metadata[mime] = dict(sizes.data)
        return cls(data=data, metadata=metadata)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.TYPE, "data": dict(self.data),
                "metadata": {mime: dict(sizes) for mime, sizes in self.metadata.items()}}


#: What the kernel may say about how a display shows: an image's intended size in CSS pixels.
IMAGE_METADATA = ("width", "height")


@dataclass(frozen=True)
class ErrorOutput:
    """The exception a cell raised (kept only for a ``raises=true`` cell); traceback without colours."""

    TYPE: ClassVar[str] = "error"
    ename: str
    evalue: str
    traceback: str

    @classmethod
    def read(cls, r: _Reader) -> ErrorOutput:
        return cls(ename=r.text("ename"), evalue=r.text("evalue"), traceback=r.text("traceback"))

    def to_json(self) -> dict[str, Any]:
        return {"type": self.TYPE, "ename": self.ename, "evalue": self.evalue, "traceback": self.traceback}


Output = StreamOutput | DisplayOutput | ErrorOutput
#: Output kinds by their ``type`` on disk; a new kind is one class here.
OUTPUTS: dict[str, type[StreamOutput] | type[DisplayOutput] | type[ErrorOutput]] = {
    c.TYPE: c for c in (StreamOutput, DisplayOutput, ErrorOutput)}


def _variant(r: _Reader, tag: str, classes: Mapping[str, Any], what: str) -> Any:
    """One member of a tagged union (outputs by ``type``, records by ``kind``), read by its class."""
    name = r.text(tag)
    if name not in classes:
        raise ResultFormatError(r.path(tag), f"unknown {what} {name!r} (known: {', '.join(classes)})")
    found = classes[name].read(r)
    r.done()
    return found


def _output(r: _Reader) -> Output:
    return _variant(r, "type", OUTPUTS, "output type")


# --- records: the values, tables and charts a snippet hands to the prose (see record.py) ------------------


@dataclass(frozen=True)
class ValueRecord:
    """A named scalar from ``glue``, shown inline in prose."""

    KIND: ClassVar[str] = "value"
    name: str
    value: Scalar
    unit: str | None = None
    cell: str = ""  # the cell that recorded it

    @classmethod
    def read(cls, r: _Reader) -> ValueRecord:
        return cls(name=r.text("name"), value=_scalar(r.raw("value"), r.path("value")),
                   unit=r.text("unit", nullable=True), cell=r.text("cell"))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.KIND, "name": self.name, "value": self.value, "unit": self.unit,
                "cell": self.cell}


@dataclass(frozen=True)
class TableRecord:
    """A table from ``table``: column names and rows of scalars."""

    KIND: ClassVar[str] = "table"
    name: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Scalar, ...], ...]
    caption: str | None = None
    cell: str = ""

    @classmethod
    def read(cls, r: _Reader) -> TableRecord:
        columns = r.scalars("columns")
        for i, column in enumerate(columns):
            if not isinstance(column, str):
                raise ResultFormatError(f"{r.path('columns')}[{i}]",
                                        f"expected a string, got {_kind(column)}")
        rows = []
        for i, row in enumerate(r.get("rows", list)):
            where = f"{r.path('rows')}[{i}]"
            values = r.scalars("rows", row, where)
            if len(values) != len(columns):
                raise ResultFormatError(where, f"has {len(values)} cells for {len(columns)} columns")
            rows.append(values)
        return cls(name=r.text("name"), columns=columns, rows=tuple(rows),  # type: ignore[arg-type]
                   caption=r.text("caption", nullable=True), cell=r.text("cell"))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.KIND, "name": self.name, "columns": list(self.columns),
                "rows": [list(row) for row in self.rows], "caption": self.caption, "cell": self.cell}


@dataclass(frozen=True)
class ChartRecord:
    """Data for an SVG chart from ``chart``: x positions, one series of numbers per label, alt text."""

    KIND: ClassVar[str] = "chart"
    CHARTS: ClassVar[tuple[str, ...]] = ("bar", "line")
    name: str
    chart: str  # "bar" or "line"
    x: tuple[Scalar, ...]
    series: Mapping[str, tuple[int | float, ...]]
    alt: str
    title: str = ""
    x_label: str = ""
    y_label: str = ""
    cell: str = ""

    @classmethod
    def read(cls, r: _Reader) -> ChartRecord:
        chart = r.text("chart")
        if chart not in cls.CHARTS:
            raise ResultFormatError(r.path("chart"), f"expected 'bar' or 'line', got {chart!r}")
        x = r.scalars("x")
        series: dict[str, tuple[int | float, ...]] = {}
        for label, values in r.get("series", dict).items():
            where = f"{r.path('series')}.{label}"
            if not isinstance(values, list) or not all(_is(v, (int, float)) for v in values):
                raise ResultFormatError(where, "expected a list of numbers")
            if len(values) != len(x):
                raise ResultFormatError(where, f"has {len(values)} values for {len(x)} x positions")
            series[label] = tuple(values)
        return cls(name=r.text("name"), chart=chart, x=x, series=series, alt=r.text("alt"),
                   title=r.text("title"), x_label=r.text("x_label"), y_label=r.text("y_label"),
                   cell=r.text("cell"))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.KIND, "name": self.name, "chart": self.chart, "x": list(self.x),
                "series": {label: list(values) for label, values in self.series.items()}, "alt": self.alt,
                "title": self.title, "x_label": self.x_label, "y_label": self.y_label, "cell": self.cell}


@dataclass(frozen=True)
class VerdictRecord:
    """A comparison's verdict from the harness: the speed ratio, its interval and what the rule says.

    ``ratio`` is the baseline's median time over the candidate's; ``expected`` is the verdict the snippet
    declared for this device (None: none declared); ``noise`` says why the measurement supports no
    verdict (then ``verdict`` is "inconclusive"); ``line`` is where in its cell it was recorded.
    """

    KIND: ClassVar[str] = "verdict"
    name: str
    candidate: str
    baseline: str
    ratio: float
    low: float
    high: float
    confidence: float
    delta: float
    blocks: int
    verdict: Verdict
    expected: Verdict | None = None
    noise: tuple[str, ...] = ()
    device: str = "cpu"
    line: int | None = None
    cell: str = ""

    @property
    def holds(self) -> bool:
        """Whether the verdict is the one the snippet expects (or none was expected)."""
        return self.expected is None or self.expected is self.verdict

    @classmethod
    def read(cls, r: _Reader) -> VerdictRecord:
        numbers = {key: float(r.number(key)) for key in ("ratio", "low", "high", "confidence", "delta")}
        if not numbers["low"] <= numbers["ratio"] <= numbers["high"]:
            raise ResultFormatError(r.path("ratio"), "the ratio lies outside its interval")
        noise = r.scalars("noise")
        if not all(isinstance(n, str) for n in noise):
            raise ResultFormatError(r.path("noise"), "expected a list of strings")
        return cls(name=r.text("name"), candidate=r.text("candidate"), baseline=r.text("baseline"),
                   **numbers, blocks=r.get("blocks", int), verdict=_verdict(r, "verdict"),
                   expected=_verdict(r, "expected", nullable=True), noise=noise,  # type: ignore[arg-type]
                   device=r.text("device"), line=r.get("line", int, nullable=True), cell=r.text("cell"))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.KIND, "name": self.name, "candidate": self.candidate, "baseline": self.baseline,
                "ratio": self.ratio, "low": self.low, "high": self.high, "confidence": self.confidence,
                "delta": self.delta, "blocks": self.blocks, "verdict": self.verdict.value,
                "expected": None if self.expected is None else self.expected.value, "noise": list(self.noise),
                "device": self.device, "line": self.line, "cell": self.cell}


def _verdict(r: _Reader, key: str, nullable: bool = False) -> Any:
    text = r.text(key, nullable=nullable)
    if text is None:
        return None
    try:
        return Verdict.parse(text)
    except ValueError as exc:
        raise ResultFormatError(r.path(key), str(exc)) from None


Record = ValueRecord | TableRecord | ChartRecord | VerdictRecord
#: Record kinds by their ``kind``; each has its own section of a result (``values``, ``tables``, ...).
RECORDS: dict[str, Any] = {c.KIND: c for c in (ValueRecord, TableRecord, ChartRecord, VerdictRecord)}
SECTIONS = {"value": "values", "table": "tables", "chart": "charts", "verdict": "verdicts"}


def record_from_json(data: object, where: str = "record") -> Record:
    """A record as ``record.py`` emits it (with the runner's ``cell``)."""
    return _variant(_Reader(data, where), "kind", RECORDS, "record kind")


def _section(r: _Reader, kind: str) -> dict[str, Any]:
    section = SECTIONS[kind]
    found = {}
    for name, data in r.get(section, dict).items():
        record = record_from_json(data, f"{r.path(section)}.{name}")
        if kind != record.KIND or record.name != name:
            raise ResultFormatError(f"{r.path(section)}.{name}",
                                    f"holds the {record.KIND} {record.name!r}, not the {kind} {name!r}")
        found[name] = record
    return found


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
        r = _Reader(data, where)
        tags = r.scalars("tags")
        for i, tag in enumerate(tags):
            if not isinstance(tag, str):
                raise ResultFormatError(f"{r.path('tags')}[{i}]", f"expected a string, got {_kind(tag)}")
        cell = cls(name=r.text("name"), source=r.text("source"), line=r.get("line", int),
                   outputs=tuple(_output(o) for o in r.items("outputs")), wall_s=r.number("wall_s"),
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
        r = _Reader(data, where)
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
        r = _Reader(data, where)
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
        r = _Reader(data, where)
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
        r = _Reader(data, where)
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
        intact = _intact(data)
        r = _Reader(migrate(data), "")
        r.get("schema", int)
        r.text("digest")
        if r.text("status") != "ok":
            raise ResultFormatError("status", "expected 'ok' (only successful results are stored)")
        result = cls(snippet=r.text("snippet"), key=r.text("key"),
                     hashes=Hashes.from_json(r.get("hashes", dict)), device_class=r.text("device_class"),
                     provenance=Provenance.from_json(r.get("provenance", dict)),
                     cells=tuple(CellResult.from_json(c.data, c.where) for c in r.items("cells")),
                     values=_section(r, "value"), tables=_section(r, "table"), charts=_section(r, "chart"),
                     verdicts=_section(r, "verdict"),
                     rekeyed=tuple(Rekey.from_json(k.data, k.where) for k in r.items("rekeyed")),
                     options=_options(r), intact=intact)
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


def _options(r: _Reader) -> dict[str, Scalar | list[str]]:
    """Header options are scalars, or lists of strings (``writes``)."""
    found = r.get("options", dict)
    for key, value in found.items():
        if not (isinstance(value, list) and all(isinstance(item, str) for item in value)):
            _scalar(value, f"{r.path('options')}.{key}")
    return dict(found)


# --- the digest ------------------------------------------------------------------------------------------


def digest(document: Mapping[str, Any]) -> str:
    """``sha256:`` of a result document's canonical JSON, its own ``digest`` left out."""
    content = {key: value for key, value in document.items() if key != "digest"}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _intact(data: object) -> bool:
    """Whether a stored document still has the content its digest was made of (formats before
    ``DIGESTED`` have none: `blog migrate` gives them one)."""
    if not isinstance(data, dict) or version(data) < DIGESTED:
        return True
    try:
        return data.get("digest") == digest(data)
    except ValueError:  # NaN or infinity in a hand-edited file
        return False


# --- migrations ------------------------------------------------------------------------------------------


def _from_0(data: dict[str, Any]) -> dict[str, Any]:
    """Version 0: the files written before results carried a version; otherwise the same fields."""
    return {**data, "schema": 1}


def _from_1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 recorded no cell tags and no display metadata: a cell had none. (Malformed parts are left
    as they are, for validation to name.)"""

    def output(out: object) -> object:
        return {**out, "metadata": {}} if isinstance(out, dict) and out.get("type") == "display" else out

    def cell(found: object) -> object:
        if not isinstance(found, dict):
            return found
        outputs = found.get("outputs")
        return {**found, "tags": [], **({"outputs": [output(o) for o in outputs]} if isinstance(outputs, list)
                                        else {})}

    cells = data.get("cells")
    return {**data, "schema": 2, **({"cells": [cell(c) for c in cells]} if isinstance(cells, list) else {})}


def _from_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 had no verdicts, no re-keyings, no header options, and did not say which device was
    asked for or used.

    A version-2 result was filed by the device asked for, and a CUDA run without a GPU was refused, so
    the class's kind is what was asked for, and the accelerator was used exactly when a GPU is named.
    """
    provenance = data.get("provenance")
    if isinstance(provenance, dict):
        device_class = str(data.get("device_class", ""))
        provenance = {"requested": device_class.split("-", 1)[0] or None,
                      "accelerator_used": provenance.get("gpu") is not None, **provenance}
    return {"verdicts": {}, "rekeyed": [], "options": {}, **data, "schema": 3, "provenance": provenance}


def _from_3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3: no digest yet; the file as it is now gets one."""
    document = {**data, "schema": 4}
    return {**document, "digest": digest(document)}


def _from_4(data: dict[str, Any]) -> dict[str, Any]:
    """Version 4 did not name the node that ran a result: every one was run by `blog run` on the machine
    that committed it. The digest covers the provenance, so it is computed anew."""
    provenance = data.get("provenance")
    if isinstance(provenance, dict):
        provenance = {"node": None, **provenance}
    document = {key: value for key, value in data.items() if key != "digest"}
    document = {**document, "schema": 5, "provenance": provenance}
    return {**document, "digest": digest(document)}


#: Version -> the step that turns a document of that version into the next one.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    0: _from_0, 1: _from_1, 2: _from_2, 3: _from_3, 4: _from_4}


def version(data: Mapping[str, Any]) -> int:
    """A document's schema version; 0 when it has none (written before versions existed)."""
    found = data.get("schema", 0)
    if isinstance(found, bool) or not isinstance(found, int):
        raise ResultFormatError("schema", f"expected an integer, got {_kind(found)}")
    return found


def migrate(data: object) -> dict[str, Any]:
    """The document in the current schema, each step applied in turn; newer documents are refused."""
    if not isinstance(data, dict):
        raise ResultFormatError("result", f"expected an object, got {_kind(data)}")
    found = version(data)
    if found > SCHEMA:
        raise ResultFormatError("schema", f"version {found} is newer than this perfblog reads ({SCHEMA}); "
                                          f"upgrade perfblog")
    while found < SCHEMA:
        if found not in MIGRATIONS:
            raise ResultFormatError("schema", f"no migration from version {found}")
        data = MIGRATIONS[found](data)
        found = version(data)
    return data
