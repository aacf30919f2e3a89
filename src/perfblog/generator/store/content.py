"""What a run produced, as stored: each cell's outputs (streams, displays, errors) and the records a
snippet hands to the prose (values, tables, charts, verdicts). Each class is its JSON format (``codec``):
a field here is a field on disk, and a check its type cannot say is declared on the field."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from perfblog.generator.store import codec
from perfblog.generator.store.codec import Invalid, Scalar
from perfblog.generator.store.mime import MIMES
from perfblog.harness.verdict import Verdict

# --- outputs: what a cell printed or displayed, or the error it raised ------------------------------------


def truncate(text: str, keep: int) -> str:
    """The first ``keep`` characters of ``text`` and a note saying how much was cut (when anything was)."""
    if len(text) <= keep:
        return text
    return f"{text[:keep]}\n… [output truncated: {len(text) - keep:,} more characters not kept]\n"


@dataclass(frozen=True)
class StreamOutput(codec.Json):
    """Text a cell wrote to stdout or stderr (consecutive writes to one stream joined)."""

    TYPE: ClassVar[str] = "stream"
    name: str  # "stdout" or "stderr"
    text: str


#: Image outputs are stored as files beside the result, by MIME type, named by a hash of their bytes.
IMAGES = {m.name: m.ext for m in MIMES if m.ext}
#: The only names an image file may have (a result file cannot point a page at another path).
IMAGE_NAME = re.compile(rf"[0-9a-f]{{16}}\.(?:{'|'.join(IMAGES.values())})")
#: What the kernel may say about how a display shows: an image's intended size in CSS pixels.
IMAGE_METADATA = ("width", "height")


def image_name(blob: bytes, ext: str) -> str:
    """The name an image file gets: the first 64 bits of its SHA-256, so its name is its content."""
    return f"{hashlib.sha256(blob).hexdigest()[:16]}.{ext}"


def image_matches(name: str, blob: bytes) -> bool:
    """Whether ``blob`` is the image a result names ``name`` (a swapped file is not)."""
    ext = name.rpartition(".")[2]
    return bool(IMAGE_NAME.fullmatch(name)) and image_name(blob, ext) == name


def _image_names(data: Mapping[str, str], _: object) -> None:
    """An image's data is the name of its file beside the result, nothing else."""
    for mime, ext in IMAGES.items():
        if mime in data and not (IMAGE_NAME.fullmatch(data[mime]) and data[mime].endswith(f".{ext}")):
            raise Invalid(f"expected an image file name like 0123456789abcdef.{ext}", f".{mime}")


def _image_sizes(metadata: Mapping[str, Mapping[str, int]], _: object) -> None:
    for mime, sizes in metadata.items():
        for key, value in sizes.items():
            if key not in IMAGE_METADATA:
                raise Invalid(f"unknown field (known: {', '.join(IMAGE_METADATA)})", f".{mime}.{key}")
            if value <= 0:
                raise Invalid(f"expected a positive integer, got {value}", f".{mime}.{key}")


@dataclass(frozen=True)
class DisplayOutput(codec.Json):
    """A rich display: MIME type -> text, or for an image the name of its file beside the result; the
    kernel's metadata per MIME type that changes how it shows (an image's ``width`` and ``height``)."""

    TYPE: ClassVar[str] = "display"
    data: Mapping[str, str] = field(metadata=codec.check(_image_names))
    metadata: Mapping[str, Mapping[str, int]] = field(default_factory=dict,
                                                      metadata=codec.check(_image_sizes))


@dataclass(frozen=True)
class ErrorOutput(codec.Json):
    """The exception a cell raised (kept only for a ``raises=true`` cell); traceback without colours."""

    TYPE: ClassVar[str] = "error"
    ename: str
    evalue: str
    traceback: str


Output = StreamOutput | DisplayOutput | ErrorOutput
#: Output kinds by their ``type`` on disk; a new kind is one class here.
OUTPUTS = codec.tagged("type", {c.TYPE: c for c in (StreamOutput, DisplayOutput, ErrorOutput)})


# --- records: the values, tables and charts a snippet hands to the prose (see record.py) ------------------


@dataclass(frozen=True)
class ValueRecord(codec.Json):
    """A named scalar from ``glue``, shown inline in prose."""

    KIND: ClassVar[str] = "value"
    name: str
    value: Scalar
    unit: str | None = None
    cell: str = ""  # the cell that recorded it


def _rows_fit(rows: tuple[tuple[Scalar, ...], ...], fields: Mapping[str, Any]) -> None:
    for i, row in enumerate(rows):
        if len(row) != len(fields["columns"]):
            raise Invalid(f"has {len(row)} cells for {len(fields['columns'])} columns", f"[{i}]")


@dataclass(frozen=True)
class TableRecord(codec.Json):
    """A table from ``table``: column names and rows of scalars."""

    KIND: ClassVar[str] = "table"
    name: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Scalar, ...], ...] = field(metadata=codec.check(_rows_fit))
    caption: str | None = None
    cell: str = ""


def _series_fit(series: Mapping[str, tuple[int | float, ...]], fields: Mapping[str, Any]) -> None:
    for label, values in series.items():
        if len(values) != len(fields["x"]):
            raise Invalid(f"has {len(values)} values for {len(fields['x'])} x positions", f".{label}")


@dataclass(frozen=True)
class ChartRecord(codec.Json):
    """Data for an SVG chart from ``chart``: x positions, one series of numbers per label, alt text."""

    KIND: ClassVar[str] = "chart"
    name: str
    chart: Literal["bar", "line"]
    x: tuple[Scalar, ...]
    series: Mapping[str, tuple[int | float, ...]] = field(metadata=codec.check(_series_fit))
    alt: str
    title: str = ""
    x_label: str = ""
    y_label: str = ""
    cell: str = ""


def _within_interval(ratio: float, fields: Mapping[str, Any]) -> None:
    if not fields["low"] <= ratio <= fields["high"]:
        raise Invalid("the ratio lies outside its interval")


@dataclass(frozen=True)
class VerdictRecord(codec.Json):
    """A comparison's verdict from the harness: the speed ratio, its interval and what the rule says.

    ``ratio`` is the baseline's median time over the candidate's; ``expected`` is the verdict the snippet
    declared for this device (None: none declared); ``noise`` says why the measurement supports no
    verdict (then ``verdict`` is "inconclusive"); ``line`` is where in its cell it was recorded.
    """

    KIND: ClassVar[str] = "verdict"
    name: str
    candidate: str
    baseline: str
    ratio: float = field(metadata=codec.check(_within_interval))
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


Record = ValueRecord | TableRecord | ChartRecord | VerdictRecord
#: Record kinds by their ``kind``; each has its own section of a result (``values``, ``tables``, ...).
RECORDS = codec.tagged("kind", {c.KIND: c for c in (ValueRecord, TableRecord, ChartRecord, VerdictRecord)})
SECTIONS = {"value": "values", "table": "tables", "chart": "charts", "verdict": "verdicts"}


def record_from_json(data: object, where: str = "record") -> Record:
    """A record as ``record.py`` emits it (with the runner's ``cell``)."""
    return codec.decode(Record, data, where)


def filed_by_name(records: Mapping[str, Record], _: object) -> None:
    """A section files each record under its own name (``values.n`` holds the value ``n``)."""
    for name, record in records.items():
        if record.name != name:
            raise Invalid(f"holds the {record.KIND} {record.name!r}, not the {record.KIND} {name!r}",
                          f".{name}")
