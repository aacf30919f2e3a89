"""A claim's history across torch versions: the ``history`` and ``history_chart`` embeds.

A post lists claims, each a snippet and one of the claims its version records hold (``cell:NAME``:
the cell's assertions held; ``verdict:NAME``: a recorded verdict; ``value:NAME``: a glued value), with
the words its row shows::

    <%= history([["host_syncs", "value:graph_partition", "graph_partition 默认开启"],
                 ["fullgraph_errors", "cell:data_dependent_if", "按张量的值写 if 会报错"]]) %>

The table has one column per torch version that any listed snippet was run under (`blog run --torch`,
``store.versions``) on one device class; each cell says what that version's record says, with the
record's provenance as its tooltip. Below it, the changes between neighbouring versions are written out
from the same records, so the text that says which version changed what is never typed. A snippet that
failed on a version shows "fails on this version" with its error, never a blank.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from perfblog.generator.device import kind as device_kind
from perfblog.generator.errors import EmbedError
from perfblog.generator.render import charts, sanitize
from perfblog.generator.store.content import ChartRecord
from perfblog.generator.store.result import Outcome
from perfblog.generator.store.versions import VersionOutcome, version_order
from perfblog.harness.verdict import Verdict
from perfblog.harness.words import readable

inert = sanitize.text
#: A cell's error line that says an assertion failed ("snippets/x.py:9: cell 'c' raised AssertionError: …").
_ASSERTION = re.compile(r"(?:^|raised )AssertionError\b")


@dataclass(frozen=True)
class Words:
    """One language's words for a history."""

    claim: str  # the first column's heading
    holds: str
    fails: str  # the cell ran and its assertion did not hold
    broken: str  # the run failed before the cell (an import error, a dead kernel)
    absent: str  # the version's record does not have this claim
    true: str
    false: str
    verdicts: Mapping[str, str]
    within: Callable[[str], str]  # no difference, though the interval excludes 1: inside ±band ("5 %")
    change: Callable[[str, str, str, str, str], str]  # (before torch, after torch, label, before, after)
    steady: Callable[[str, str, int], str]  # (first torch, last torch, how many): nothing changed
    none: str  # no version record at all
    stale: str  # a record of another version of the snippet's code
    series: tuple[str, str, str]  # a ratio chart's lines: the ratio, its interval's low and high ends


ZH = Words(
    claim="结论", holds="成立", fails="不成立", broken="在此版本上失败", absent="未记录", true="是",
    false="否",
    verdicts={"faster": "更快", "slower": "更慢", "no-difference": "没有可测的差别",
              "inconclusive": "无定论"},
    within=lambda band: f"差别在 ±{band} 以内",
    change=lambda a, b, label, old, new: f"torch {a} → {b}：「{label}」由“{old}”变为“{new}”。",
    steady=lambda a, b, n: f"从 torch {a} 到 {b}（{n} 个版本），表中每条结论都没有变化。",
    none="还没有任何版本的记录（用 blog run --torch 运行）。",
    stale="这条记录来自片段的旧代码，需重新运行",
    series=("速度比", "区间下端", "区间上端"),
)
EN = Words(
    claim="Claim", holds="holds", fails="does not hold", broken="fails on this version",
    absent="not recorded", true="yes", false="no",
    verdicts={"faster": "faster", "slower": "slower", "no-difference": "no measurable difference",
              "inconclusive": "inconclusive"},
    within=lambda band: f"within ±{band}",
    change=lambda a, b, label, old, new: f"torch {a} → {b}: “{label}” went from “{old}” to “{new}”.",
    steady=lambda a, b, n: f"From torch {a} to {b} ({n} versions), no claim in the table changed.",
    none="No version has been recorded yet (run blog run --torch).",
    stale="recorded from an earlier version of the snippet's code: run it again",
    series=("ratio", "interval low", "interval high"),
)
LANGUAGES: Mapping[str, Words] = {"zh": ZH, "en": EN}


@dataclass(frozen=True)
class Row:
    """One claim of a history: which snippet, which of its claims, and the words the row shows."""

    snippet: str
    claim: str  # "cell:NAME", "verdict:NAME" or "value:NAME"
    label: str


@dataclass(frozen=True)
class Cell:
    """What one version's record says of one claim: the words shown, a state to compare, the tooltip."""

    torch: str
    state: str  # compared between versions: "holds", "fails", "broken", "absent", a verdict, a value
    text: str
    title: str
    stale: bool = False  # the record was made from another version of the snippet's code


def rows(spec: object) -> tuple[Row, ...]:
    """The rows a post asked for: a list of [snippet, claim, label]; EmbedError saying what is wrong."""
    if not isinstance(spec, Sequence) or isinstance(spec, str) or not spec:
        raise EmbedError('history() takes a list of [snippet, "cell:NAME" | "verdict:NAME" | "value:NAME", '
                         "label]")
    found = []
    for item in spec:
        if (not isinstance(item, Sequence) or isinstance(item, str) or len(item) != 3
                or not all(isinstance(part, str) and part for part in item)):
            raise EmbedError(f"history(): {item!r} is not [snippet, claim, label] (three strings)")
        snippet, claim, label = item
        kind, _, name = claim.partition(":")
        if kind not in KINDS or not name:
            raise EmbedError(f"history(): claim {claim!r} of {snippet} must be one of "
                             f"{', '.join(k + ':NAME' for k in KINDS)}")
        found.append(Row(snippet, claim, label))
    return tuple(found)


def cell(outcome: VersionOutcome | None, row: Row, words: Words, torch: str) -> Cell:
    """What ``outcome`` (one version's record of the row's snippet; None: not run there) says of the row."""
    if outcome is None:
        return Cell(torch, "absent", words.absent, "")
    kind, _, name = row.claim.partition(":")
    found = READERS[kind](outcome, name, words, torch)
    if found is not None:
        return found
    if not outcome.ok:  # the run failed before it got there
        return Cell(torch, "broken", words.broken, f"{outcome.error or ''} · {tooltip(outcome)}")
    return Cell(torch, "absent", words.absent, tooltip(outcome))


def _cell_claim(outcome: VersionOutcome, name: str, words: Words, torch: str) -> Cell | None:
    """A cell's claim: it holds when the cell ran as declared."""
    ran = outcome.cell(name)
    if ran is None:
        return None
    title = tooltip(outcome)
    if ran.outcome is Outcome.OK:
        return Cell(torch, "holds", words.holds, title)
    if _refuted(ran.outcome, ran.error):
        return Cell(torch, "fails", words.fails, f"{ran.error or ran.outcome.value} · {title}")
    # it could not run as written there: an API missing, a dead kernel
    return Cell(torch, "broken", words.broken, f"{ran.error or ran.outcome.value} · {title}")


def _verdict_claim(outcome: VersionOutcome, name: str, words: Words, torch: str) -> Cell | None:
    """A verdict: its word, worded by its interval as verdict sentences are, and its ratio."""
    record = outcome.verdicts.get(name)
    if record is None:
        return None
    said = words.verdicts.get(record.verdict.value, record.verdict.value)
    if record.verdict is Verdict.SAME and not record.low <= 1 <= record.high:
        said = words.within(f"{record.delta * 100:g} %")  # measurable, but inside the band
    return Cell(torch, record.verdict.value, f"{said} {readable(record.ratio)}×",
                f"{readable(record.low)}–{readable(record.high)}× · {tooltip(outcome)}")


def _value_claim(outcome: VersionOutcome, name: str, words: Words, torch: str) -> Cell | None:
    """A glued value: yes or no for a bool (compared), else as recorded (shown)."""
    if name not in outcome.values:
        return None
    value = outcome.values[name]
    text = (words.true if value else words.false) if isinstance(value, bool) else str(value)
    return Cell(torch, outcome.claims.get(f"value:{name}") or text, text, tooltip(outcome))


#: How a row's kind of claim is read from a version record (``VersionOutcome.claims`` names the same).
READERS: Mapping[str, Callable[[VersionOutcome, str, Words, str], Cell | None]] = {
    "cell": _cell_claim, "verdict": _verdict_claim, "value": _value_claim}
#: The kinds of claim a row may name.
KINDS = tuple(READERS)


def _refuted(outcome: Outcome, error: str | None) -> bool:
    """Whether a cell's outcome says its claim does not hold (an assertion failed, or a declared raise did
    not happen), rather than that the cell could not run on that version (any other error)."""
    return outcome is Outcome.NOT_RAISED or (
        outcome is Outcome.RAISED and _ASSERTION.search(error or "") is not None)


def tooltip(outcome: VersionOutcome) -> str:
    """The record's provenance, as a cell's tooltip: which torch, Python, device class, when, from what."""
    prov = outcome.provenance
    commit = f"commit {prov.git_commit[:10]}" if prov.git_commit else ""
    parts = [f"torch {outcome.torch}", f"Python {prov.python}" if prov.python else "", outcome.device_class,
             prov.device, f"ran {prov.ran_at}", commit]
    return " · ".join(part for part in parts if part)


@dataclass(frozen=True)
class History:
    """A history's table: the device class, the torch versions (columns) and one row of cells per claim."""

    device_class: str | None
    versions: tuple[str, ...]
    rows: tuple[tuple[Row, tuple[Cell, ...]], ...]

    def changes(self, words: Words) -> list[str]:
        """Each change of a claim between neighbouring versions that both recorded it, as a sentence."""
        said = []
        for row, cells in self.rows:
            known = [c for c in cells if c.state != "absent"]
            for before, after in pairwise(known):
                if before.state != after.state:
                    said.append(words.change(before.torch, after.torch, row.label, before.text, after.text))
        return said


def build(wanted: tuple[Row, ...], records: Callable[[str], tuple[VersionOutcome, ...]], kind: str,
          words: Words, current: Callable[[str], str] = lambda snippet: "") -> History:
    """The history of ``wanted`` on the device class of ``kind`` ("cpu", "cuda") that most records have;
    a cell from a record whose key is not the snippet's ``current`` one is marked stale."""
    snippets = tuple(dict.fromkeys(row.snippet for row in wanted))  # each read once, however many rows
    found = {snippet: of_kind(records(snippet), kind) for snippet in snippets}
    keys = {snippet: current(snippet) for snippet in snippets}
    classes = [o.device_class for outcomes in found.values() for o in outcomes]
    device_class = max(sorted(set(classes)), key=classes.count, default=None)
    by_version: dict[str, dict[str, VersionOutcome]] = {}
    for snippet, outcomes in found.items():
        for outcome in outcomes:
            if outcome.device_class == device_class:
                by_version.setdefault(outcome.torch, {})[snippet] = outcome
    versions = tuple(sorted(by_version, key=version_order))
    table = tuple((row, tuple(_marked(cell(by_version[v].get(row.snippet), row, words, v),
                                      by_version[v].get(row.snippet), keys[row.snippet], words)
                              for v in versions)) for row in wanted)
    return History(device_class, versions, table)


def of_kind(outcomes: tuple[VersionOutcome, ...], name: str) -> tuple[VersionOutcome, ...]:
    """The records made on a device of the kind ``name`` ("cpu", "cuda")."""
    return tuple(o for o in outcomes if (found := device_kind(o.device_class)) and found.name == name)


def _marked(found: Cell, outcome: VersionOutcome | None, key: str, words: Words) -> Cell:
    """``found``, marked stale when its record was made from code other than the snippet's current code."""
    if outcome is None or not key or outcome.key == key:
        return found
    return dataclasses.replace(found, stale=True, title=f"{words.stale} · {found.title}")


def html(history: History, words: Words) -> str:
    """The table and the sentences of its changes, every piece of text made inert."""
    if not history.versions:
        return f'<p class="snippet-history snippet-missing">{inert(words.none)}</p>'
    head = "".join(f'<th scope="col">torch {inert(v)}</th>' for v in history.versions)
    body = []
    for row, cells in history.rows:
        tds = "".join(f'<td class="snippet-history-{inert(c.state)}{" snippet-stale" if c.stale else ""}" '
                      f'title="{inert(c.title)}" '
                      f'data-torch="{inert(c.torch)}">{inert(c.text)}</td>' for c in cells)
        body.append(f'<tr data-snippet="{inert(row.snippet)}" data-claim="{inert(row.claim)}">'
                    f'<th scope="row">{inert(row.label)}</th>{tds}</tr>')
    changes = history.changes(words)
    if changes:
        said = "<ul>" + "".join(f"<li>{inert(line)}</li>" for line in changes) + "</ul>"
    else:
        first, last = history.versions[0], history.versions[-1]
        said = f"<p>{inert(words.steady(first, last, len(history.versions)))}</p>"
    return (f'\n<div class="snippet-history" data-device-class="{inert(history.device_class or "")}">'
            f'<table><thead><tr><th scope="col">{inert(words.claim)}</th>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>'
            f'<div class="snippet-history-changes">{said}</div></div>\n\n')


def ratio_chart(snippet: str, verdict: str, outcomes: tuple[VersionOutcome, ...], title: str,
                names: tuple[str, str, str] = EN.series) -> ChartRecord:
    """A line of ``verdict``'s ratio (with its interval's ends, each named by ``names``) across the versions
    that recorded it."""
    kept = [(o.torch, o.verdicts[verdict]) for o in outcomes if verdict in o.verdicts]
    if not kept:
        raise EmbedError(f"history_chart(): no version record of {snippet} has the verdict {verdict!r}")
    ratio, low, high = names
    series = {ratio: tuple(r.ratio for _, r in kept), low: tuple(r.low for _, r in kept),
              high: tuple(r.high for _, r in kept)}
    points = ", ".join(f"torch {v}: {readable(r.ratio)}×" for v, r in kept)
    return ChartRecord(name=f"history-{verdict}", chart="line", x=tuple(v for v, _ in kept), series=series,
                       alt=f"{title}: {points}", title=title, x_label="torch", y_label="×")


def markdown(history: History, words: Words) -> str:
    """The table as a Markdown pipe table and its changes as a list, for places that take no HTML
    (`blog export`): every piece of text inert, a stale cell marked in words."""
    if not history.versions:
        return f"\n{inert(words.none)}\n"
    head = f"| {inert(words.claim)} | " + " | ".join(f"torch {inert(v)}" for v in history.versions) + " |"
    rule = "| " + " | ".join("---" for _ in range(len(history.versions) + 1)) + " |"
    rows = [f"| {inert(row.label)} | " + " | ".join(inert(c.text) + (" (stale)" if c.stale else "")
                                                  for c in cells) + " |" for row, cells in history.rows]
    changes = history.changes(words) or [words.steady(history.versions[0], history.versions[-1],
                                                      len(history.versions))]
    said = "\n".join(f"- {inert(line)}" for line in changes)
    return "\n" + "\n".join([head, rule, *rows]) + f"\n\n{said}\n"


class Histories:
    """The history embeds of one page: ``key`` gives a snippet's current key (an EmbedError naming an
    unknown snippet, before any path is made from its name), ``records`` its torch version records."""

    def __init__(self, language: str, key: Callable[[str], str],
                 records: Callable[[str], tuple[VersionOutcome, ...]]) -> None:
        self.words = LANGUAGES.get(language, EN)
        self.key = key
        self.records = records

    def functions(self) -> dict[str, Callable[..., str]]:
        return {"history": self.history, "history_chart": self.history_chart}

    def _records(self, snippet: str) -> tuple[VersionOutcome, ...]:
        self.key(snippet)
        return self.records(snippet)

    def table(self, spec: Any, device: str) -> History:
        """The listed claims across every recorded torch version on ``device``."""
        return build(rows(spec), self._records, device, self.words, self.key)

    def chart(self, snippet: str, verdict: str, title: str, device: str) -> ChartRecord:
        """One recorded verdict's ratio across the recorded torch versions on ``device``."""
        return ratio_chart(snippet, verdict, of_kind(self._records(snippet), device),
                           title or f"{snippet} · {verdict}", self.words.series)

    def history(self, spec: Any, device: str = "cpu") -> str:
        """The table of the listed claims across every recorded torch version on ``device``."""
        return html(self.table(spec, device), self.words)

    def history_chart(self, snippet: str, verdict: str, title: str = "", device: str = "cpu") -> str:
        """A chart of one recorded verdict's ratio across the recorded torch versions on ``device``."""
        record = self.chart(snippet, verdict, title, device)
        return f'\n<figure class="snippet-chart snippet-history-chart">{charts.svg(record)}' \
               f"<figcaption>{inert(record.title)}</figcaption></figure>\n\n"


class MarkdownHistories(Histories):
    """The history embeds as plain Markdown (`blog export`): the table as a pipe table, the chart's ratios
    as one (an SVG is not what a platform takes)."""

    def history(self, spec: Any, device: str = "cpu") -> str:
        return markdown(self.table(spec, device), self.words)

    def history_chart(self, snippet: str, verdict: str, title: str = "", device: str = "cpu") -> str:
        record = self.chart(snippet, verdict, title, device)
        ratios = zip(record.x, *(record.series[k] for k in self.words.series), strict=True)
        lines = [f"| torch {inert(v)} | {readable(r)}× ({readable(lo)}–{readable(hi)}) |"
                 for v, r, lo, hi in ratios]
        return f"\n{inert(record.title)}\n\n| torch | × |\n| --- | --- |\n" + "\n".join(lines) + "\n"
