"""What a run produced, as stored: each cell's outputs (streams, displays, errors) and the records a
snippet hands to the prose (values, tables, charts, verdicts), each read and written as JSON."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from perfblog.generator.errors import ResultFormatError
from perfblog.generator.store.mime import MIMES
from perfblog.generator.store.reader import Reader, Scalar, is_a, kind, scalar
from perfblog.harness.verdict import Verdict

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
    def read(cls, r: Reader) -> StreamOutput:
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
    def read(cls, r: Reader) -> DisplayOutput:
        data = r.mapping("data", str)
        for mime, ext in IMAGES.items():
            if mime in data and not (IMAGE_NAME.fullmatch(data[mime]) and data[mime].endswith(f".{ext}")):
                raise ResultFormatError(f"{r.path('data')}.{mime}",
                                        f"expected an image file name like 0123456789abcdef.{ext}")
        metadata = {}
        for mime, value in r.get("metadata", dict).items():
            where = f"{r.path('metadata')}.{mime}"
            sizes = Reader(value, where)
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
    def read(cls, r: Reader) -> ErrorOutput:
        return cls(ename=r.text("ename"), evalue=r.text("evalue"), traceback=r.text("traceback"))

    def to_json(self) -> dict[str, Any]:
        return {"type": self.TYPE, "ename": self.ename, "evalue": self.evalue, "traceback": self.traceback}


Output = StreamOutput | DisplayOutput | ErrorOutput
#: Output kinds by their ``type`` on disk; a new kind is one class here.
OUTPUTS: dict[str, type[StreamOutput] | type[DisplayOutput] | type[ErrorOutput]] = {
    c.TYPE: c for c in (StreamOutput, DisplayOutput, ErrorOutput)}


def _variant(r: Reader, tag: str, classes: Mapping[str, Any], what: str) -> Any:
    """One member of a tagged union (outputs by ``type``, records by ``kind``), read by its class."""
    name = r.text(tag)
    if name not in classes:
        raise ResultFormatError(r.path(tag), f"unknown {what} {name!r} (known: {', '.join(classes)})")
    found = classes[name].read(r)
    r.done()
    return found


def output_from(r: Reader) -> Output:
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
    def read(cls, r: Reader) -> ValueRecord:
        return cls(name=r.text("name"), value=scalar(r.raw("value"), r.path("value")),
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
    def read(cls, r: Reader) -> TableRecord:
        columns = r.scalars("columns")
        for i, column in enumerate(columns):
            if not isinstance(column, str):
                raise ResultFormatError(f"{r.path('columns')}[{i}]",
                                        f"expected a string, got {kind(column)}")
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
    def read(cls, r: Reader) -> ChartRecord:
        chart = r.text("chart")
        if chart not in cls.CHARTS:
            raise ResultFormatError(r.path("chart"), f"expected 'bar' or 'line', got {chart!r}")
        x = r.scalars("x")
        series: dict[str, tuple[int | float, ...]] = {}
        for label, values in r.get("series", dict).items():
            where = f"{r.path('series')}.{label}"
            if not isinstance(values, list) or not all(is_a(v, (int, float)) for v in values):
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
    def read(cls, r: Reader) -> VerdictRecord:
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


def _verdict(r: Reader, key: str, nullable: bool = False) -> Any:
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
    return _variant(Reader(data, where), "kind", RECORDS, "record kind")


def section(r: Reader, kind: str) -> dict[str, Any]:
    section = SECTIONS[kind]
    found = {}
    for name, data in r.get(section, dict).items():
        record = record_from_json(data, f"{r.path(section)}.{name}")
        if kind != record.KIND or record.name != name:
            raise ResultFormatError(f"{r.path(section)}.{name}",
                                    f"holds the {record.KIND} {record.name!r}, not the {kind} {name!r}")
        found[name] = record
    return found
