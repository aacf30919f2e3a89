"""The snippet-side API that hands named values, tables and charts to the prose.

Like MyST-NB's ``glue``, a record is an ordinary Jupyter display output with its own MIME type,
so it travels through the kernel, the store and the cache like any other output. The runner
collects the records of each cell; posts embed them by name.

A record may exist in more than one language: ``NAME.<language>`` (``timings.en``) is the same record
worded for pages in that language, and a post's embed on such a page shows it instead of ``NAME``
(the build's embeds). ``table`` and ``chart`` record those variants from ``translations``; a value is
glued under both names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from perfblog.harness.verdict import Judgement, Verdict

MIME = "application/vnd.blog.record+json"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
#: A language's primary subtag (BCP 47), as record names carry it: ``en``, ``zh``.
_LANGUAGE = re.compile(r"^[a-z]{2,3}$")

#: Per language, the recorded text (a caption, a header, a cell, a label) -> the text in that language.
Translations = Mapping[str, Mapping[str, str]]


def glue(name: str, value: Any, *, unit: str | None = None) -> None:
    """Record one named scalar (number, string or bool) for inline use in prose."""
    _emit({"kind": "value", "name": _check_name(name), "value": _scalar(value), "unit": unit})


def table(
    name: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    columns: Sequence[str] | None = None,
    caption: str | None = None,
    translations: Translations | None = None,
) -> None:
    """Record a table: a list of rows (mappings), columns in the given or first-seen order.

    ``translations`` ({"en": {"图": "graphs", caption: "..."}}) also records ``NAME.en``: the same table
    with its caption, headers and text cells replaced where the mapping has them (whole strings).
    """
    if columns is None:
        columns = list(dict.fromkeys(key for row in rows for key in row))
    data = [[_scalar(row.get(col)) for col in columns] for row in rows]
    payload = {"kind": "table", "name": _check_name(name), "columns": list(columns), "rows": data,
               "caption": caption}
    _emit(payload)
    for language, words in _languages(translations):
        say = translator(words)
        _emit(payload | {"name": f"{name}.{language}", "columns": [say(c) for c in columns],
                         "rows": [[say(v) for v in row] for row in data], "caption": say(caption)})


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
    translations: Translations | None = None,
) -> None:
    """Record data for a chart that the build renders to SVG; ``alt`` describes it for readers.

    ``translations`` records ``NAME.<language>`` variants, as ``table`` does: the x labels, the series'
    names, the alt text, the title and the axis labels replaced where the mapping has them.
    """
    if kind not in ("bar", "line"):
        raise ValueError(f"chart kind must be 'bar' or 'line', not {kind!r}")
    if not alt.strip():
        raise ValueError("a chart needs alt text")
    for label, values in series.items():
        if len(values) != len(x):
            raise ValueError(f"series {label!r} has {len(values)} values for {len(x)} x positions")
    payload = {
        "kind": "chart", "name": _check_name(name), "chart": kind, "x": [_scalar(v) for v in x],
        "series": {k: [_scalar(v) for v in vs] for k, vs in series.items()},
        "alt": alt, "title": title, "x_label": x_label, "y_label": y_label,
    }
    _emit(payload)
    for language, words in _languages(translations):
        say = translator(words)
        _emit(payload | {
            "name": f"{name}.{language}", "x": [say(v) for v in payload["x"]],
            "series": {say(k): v for k, v in payload["series"].items()},
            **{key: say(payload[key]) for key in ("alt", "title", "x_label", "y_label")},
        })


def verdict(name: str, judgement: Judgement, *, device: str, expect: str | Mapping[str, str] | None = None,
            line: int | None = None) -> None:
    """Record a verdict (``stats.Comparison.record_verdict`` calls this) for a post's ``verdict()`` embed.

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


def _languages(translations: Translations | None) -> list[tuple[str, Mapping[str, str]]]:
    """The translations' languages, checked: a record's name carries the primary subtag."""
    found = list((translations or {}).items())
    for language, _ in found:
        if not isinstance(language, str) or not _LANGUAGE.match(language):
            raise ValueError(f"translations are keyed by a language's primary subtag ('en', 'zh'), "
                             f"not {language!r}")
    return found


def translator(words: Mapping[str, str]) -> Callable[[Any], Any]:
    """Replace a whole string where ``words`` has it; anything else (other text, numbers) stays as is."""
    return lambda value: words.get(value, value) if isinstance(value, str) else value


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
