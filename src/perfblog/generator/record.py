"""The snippet-side API that hands named values, tables and charts to the prose.

Like MyST-NB's ``glue``, a record is an ordinary Jupyter display output with its own MIME type,
so it travels through the kernel, the store and the cache like any other output. The runner
collects the records of each cell; posts embed them by name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from perfblog.generator.verdict import Verdict

if TYPE_CHECKING:
    from perfblog.generator.bench import Judgement

MIME = "application/vnd.blog.record+json"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def glue(name: str, value: Any, *, unit: str | None = None) -> None:
    """Record one named scalar (number, string or bool) for inline use in prose."""
    _emit({"kind": "value", "name": _check_name(name), "value": _scalar(value), "unit": unit})


def table(
    name: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    columns: Sequence[str] | None = None,
    caption: str | None = None,
) -> None:
    """Record a table: a list of rows (mappings), columns in the given or first-seen order."""
    if columns is None:
        columns = list(dict.fromkeys(key for row in rows for key in row))
    data = [[_scalar(row.get(col)) for col in columns] for row in rows]
    _emit({"kind": "table", "name": _check_name(name), "columns": list(columns), "rows": data,
           "caption": caption})


def chart(
    name: str,
    *,
    x: Sequence[Any],
    series: Mapping[str, Sequence[float]],
    alt: str,
    kind: str = "bar",
    title: str = "",
    x_label: str = "",
    y_label: str = "",
) -> None:
    """Record data for a chart that the build renders to SVG; ``alt`` describes it for readers."""
    if kind not in ("bar", "line"):
        raise ValueError(f"chart kind must be 'bar' or 'line', not {kind!r}")
    if not alt.strip():
        raise ValueError("a chart needs alt text")
    for label, values in series.items():
        if len(values) != len(x):
            raise ValueError(f"series {label!r} has {len(values)} values for {len(x)} x positions")
    _emit({
        "kind": "chart", "name": _check_name(name), "chart": kind, "x": [_scalar(v) for v in x],
        "series": {k: [_scalar(v) for v in vs] for k, vs in series.items()},
        "alt": alt, "title": title, "x_label": x_label, "y_label": y_label,
    })


def verdict(name: str, judgement: Judgement, *, device: str, expect: str | Mapping[str, str] | None = None,
            line: int | None = None) -> None:
    """Record a verdict (``bench.Comparison.record_verdict`` calls this) for a post's ``verdict()`` embed.

    ``expect`` is checked here, so a misspelt verdict fails the cell that declares it.
    """
    interval = judgement.interval
    _emit({
        "kind": "verdict", "name": _check_name(name), "candidate": judgement.candidate,
        "baseline": judgement.baseline, "ratio": interval.ratio, "low": interval.low, "high": interval.high,
        "confidence": interval.confidence, "delta": judgement.delta, "blocks": interval.blocks,
        "verdict": judgement.verdict.value, "expected": _expected(expect, device),
        "noise": list(judgement.noise), "device": device, "line": line,
    })


def _expected(expect: str | Mapping[str, str] | None, device: str) -> str | None:
    """The verdict expected on ``device``: one for every device, or one per device kind."""
    if expect is None:
        return None
    if isinstance(expect, Mapping):
        for kind, wanted in expect.items():
            Verdict.parse(wanted, f"expected verdict on {kind!r}:")
        wanted = expect.get(device)
        return None if wanted is None else Verdict.parse(wanted).value
    return Verdict.parse(expect, "expected verdict").value


def _check_name(name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"record name {name!r} must match {_NAME.pattern}")
    return name


def _scalar(value: Any) -> Any:
    """Make numpy and torch scalars JSON-friendly; refuse what JSON cannot hold."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if hasattr(value, "item"):  # numpy / torch scalar
        value = value.item()
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot record a non-finite number: {value}")
        return value
    if isinstance(value, (bool, int, str)):
        return value
    raise TypeError(f"cannot record a value of type {type(value).__name__}")


def _emit(payload: dict[str, Any]) -> None:
    from IPython.display import display

    display({MIME: payload}, raw=True)
