"""Build checks on a post's typed prose: sentences whose truth the results decide must come from them.

Two checks, each a build warning naming the post and line (so ``--strict`` fails):

- **Bare ratios** (``bare_ratios``): a sentence that says 快, 慢, 倍, faster or slower next to ``value()``
  of a ratio states a comparison that nothing checked: a ratio of two medians says nothing about noise
  (a 1.04× ratio can be a coin toss). Such sentences must embed ``verdict()``, whose wording follows the
  measured verdict. A value is a ratio when it is a float recorded without a unit (or with the unit ×).
- **Typed results** (``typed_results``): a typed sentence that speaks of a device's results or of which
  results exist ("本文还没有 GPU 结果", "on a CPU, eager dispatches <value> operators") goes false the
  day other results arrive, and nothing would tell. The kinds are ``KINDS``, a registry; a sentence
  inside ``<% if %>`` driven by the results (``has_result``, ``verdict_of``) is not typed, it is chosen.

Example blocks inside ``<% raw %>`` are not prose and are skipped, and so is code.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from perfblog.generator.render import scan
from perfblog.generator.render.sandbox import PREDICATES
from perfblog.generator.store.content import ValueRecord

#: Words that make a sentence a speed comparison.
COMPARING = re.compile(r"快|慢|倍|\bfaster\b|\bslower\b", re.IGNORECASE)
_VALUE = re.compile(r"""^<%=\s*value\(\s*(["'])([^"']+)\1\s*,\s*(["'])([^"']+)\3""")
#: Where a sentence ends: Chinese full stops, Latin ones before a space, blank lines, list items.
_END = re.compile(r"[。！？；]|[.!?;](?=\s)|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")
RATIO_UNITS = (None, "", "×", "x")


@dataclass(frozen=True)
class Finding:
    """A sentence that compares with a bare ratio: where, and which value."""

    line: int
    word: str
    snippet: str
    name: str

    def message(self) -> str:
        return (f"a sentence says '{self.word}' next to the bare ratio "
                f"value(\"{self.snippet}\", \"{self.name}\"); embed verdict(\"{self.snippet}\", ...) "
                f"instead, so its wording follows the measured verdict")


def is_ratio(record: ValueRecord) -> bool:
    return isinstance(record.value, float) and record.unit in RATIO_UNITS


def bare_ratios(markdown: str | Prose, value_of: Callable[[str, str], ValueRecord | None],
                line_offset: int = 0) -> list[Finding]:
    """Each value() of a ratio in a sentence that also says 快/慢/倍/faster/slower.

    ``value_of(snippet, name)`` is the shown record of a value, None when there is none (not a ratio).
    A page's ``Prose`` may be given, read once for both checks.
    """
    prose = markdown if isinstance(markdown, Prose) else Prose(markdown)
    markdown = prose.markdown
    findings = []
    for start, end in prose.sentences:
        word = COMPARING.search(prose.masked, start, end)
        if word:
            for a, b in prose.tags_in(start, end):
                found = _VALUE.match(markdown[a:b])
                if found is None:
                    continue
                snippet, name = found.group(2), found.group(4)
                record = value_of(snippet, name)
                if record is not None and is_ratio(record):
                    findings.append(Finding(prose.line(a) + line_offset, word.group(0), snippet, name))
    return findings


class Prose:
    """A post's Markdown as these checks read it: its tags outside code (a raw region is one) and the text
    with them, code and HTML comments blanked (newlines kept, so positions and lines stay true, and the
    dots inside tags, "torch.dot" or ".2f", end no sentence), cut into sentences. Post Markdown is
    untrusted, so every step is linear in its length (the scans of ``scan``, no lazy ``.*?``)."""

    def __init__(self, markdown: str) -> None:
        self.markdown = markdown
        self.tags = scan.template_source(markdown).tags
        self.starts = [a for a, _ in self.tags]
        out, pos = [], 0
        for a, b in sorted([*self.tags, *scan.code_regions(markdown), *_comments(markdown)]):
            if b > pos:
                out += [markdown[pos:max(a, pos)], _blank(markdown[max(a, pos):b])]
                pos = b
        self.masked = "".join([*out, markdown[pos:]])
        ends = [m.end() for m in _END.finditer(self.masked)] + [len(self.masked)]
        self.sentences = list(zip([0, *ends[:-1]], ends, strict=True))

    def tags_in(self, start: int, end: int) -> list[tuple[int, int]]:
        """The tags that start between ``start`` and ``end``."""
        return self.tags[bisect.bisect_left(self.starts, start):bisect.bisect_left(self.starts, end)]

    def line(self, pos: int) -> int:
        return self.markdown.count("\n", 0, pos) + 1

    def shown(self, start: int, end: int, limit: int = 90) -> str:
        """The sentence for a message: its tags as …, on one line, at most ``limit`` characters."""
        out, pos = [], start
        for a, b in self.tags_in(start, end):
            out += [self.markdown[pos:a], "…"]
            pos = max(pos, b)
        flat = " ".join("".join([*out, self.markdown[pos:end]]).split())
        return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _comments(markdown: str) -> list[tuple[int, int]]:
    """The spans of HTML comments (an unclosed one runs to the end), found with one forward pass."""
    spans, pos = [], 0
    while (start := markdown.find("<!--", pos)) >= 0:
        end = markdown.find("-->", start + 4)
        pos = len(markdown) if end < 0 else end + 3
        spans.append((start, pos))
    return spans


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


# --- Typed sentences about results --------------------------------------------------------------------

#: A device as prose names it (CUDA Graphs is a feature, not a device).
_DEVICE = r"(?<![A-Za-z])(?:GPU|CPU|CUDA(?!\s*Graph)|显卡|加速器|accelerators?)(?![A-Za-z])"
_DEVICES = re.compile(_DEVICE, re.I)
#: A tag that shows a value or a verdict of a snippet: (function, snippet, name) in groups 1, 3 and 5.
_RESULT = re.compile(r"""<%=\s*(value|verdict)\(\s*(["'])([^"']+)\2\s*,\s*(["'])([^"']+)\4""")
#: ``<% if %>``-block statements and ``set`` (matched on one tag), for the spans the results choose.
_STATEMENT = re.compile(r"<%[-+]?\s*(if|elif|else|endif|set)\b(.*)", re.S)


@dataclass(frozen=True)
class Kind:
    """One kind of typed sentence whose truth the results decide: what it says, what else it must hold
    to count, why it goes false, and what to write instead."""

    name: str
    says: re.Pattern[str]  # matched on the typed text of a sentence (tags, code and raw blanked)
    device: bool  # the sentence must also name a device
    result: bool  # the sentence must also carry a result: value() or verdict(), or 快/慢/倍/faster/slower
    why: str
    instead: str


def _any(*alternatives: str) -> re.Pattern[str]:
    """One case-insensitive pattern matching any of ``alternatives``; ``{D}`` in one is a device."""
    return re.compile("|".join(f"(?:{a.replace('{D}', _DEVICE)})" for a in alternatives), re.I)


#: The kinds, checked in this order; a sentence is reported once, for the first kind it is.
KINDS: tuple[Kind, ...] = (
    Kind("pending", _any(
        r"还没有?", "尚未", "尚无", "暂缺", "暂无", "目前没有", "未检验", r"才(?:会)?有(?:结果|数|耗时|数据)",
        "(?:自动|会)替换", "一旦(?:完成|运行|跑完|有了)",
        r"没有\s*{D}\s*(?:上的)?\s*(?:结果|耗时|数据|数字|运行)",
        r"\bnot yet\b", r"\byet\b", r"\bawait(?:s|ing|ed)?\b", r"\bpending\b", r"\buntested\b",
        r"\bwill (?:automatically )?replace\b", r"\b(?:has|have) (?:not|never) (?:yet )?(?:been )?run\b",
        r"\bno {D} (?:results?|times?|timings?|numbers?|runs?)\b",
        r"(?:本文|本页|这里|上面)所示的?[^，。；,;]{0,6}?{D}", r"\b{D} runs? shown\b",
        r"\bshown (?:here )?(?:is|are|comes?) from (?:a |the )?{D}",
        r"\bonce (?:a |the )?{D} (?:run|results?)\b"),
        device=True, result=False,
        why="says which results exist for a device, which changes when a run adds some",
        instead='<% if has_result("SNIPPET", device="cuda") %>…<% else %>…<% endif %>'),
    Kind("measured-on", _any(
        r"在[^，。；,;]{0,8}?{D}[^，。；,;]{0,4}?(?:上|里|中)", r"\bon (?:a |the |this |our )?{D}\b",
        r"\bin the {D} run\b"),
        device=False, result=True,
        why="names the device of a result it shows, another device once that device's results exist",
        instead='name the device with an embed (value("SNIPPET", "device")), or choose the sentence with '
                '<% if has_result("SNIPPET", device="cpu") %>'),
    Kind("hedge", _any(
        "可能落在(?:不同的|另)?一边", "不同的运行可能",
        r"\b(?:different|other) runs (?:may|might|could) (?:land|fall) on "
        r"(?:different|either|the other) sides?\b"),
        device=False, result=False,
        why="hedges a verdict, true only while the verdict's interval crosses the band's edge",
        instead='<% if verdict_of("SNIPPET", "NAME") == "inconclusive" %>…<% endif %>'),
)
#: What any kind says: a sentence that matches none is no kind's.
_SAYS = re.compile("|".join(f"(?:{kind.says.pattern})" for kind in KINDS), re.I)


@dataclass(frozen=True)
class Typed:
    """A typed sentence the results decide: where, of which kind, and the sentence."""

    line: int
    kind: Kind
    sentence: str

    def message(self) -> str:
        return (f"a typed sentence {self.kind.why} ({self.kind.name}): \"{self.sentence}\"; let the results "
                f"say it: {self.kind.instead} (docs/authoring.md)")


def typed_results(markdown: str | Prose, value_of: Callable[[str, str], ValueRecord | None],
                  line_offset: int = 0) -> list[Typed]:
    """Each typed sentence of a ``KINDS`` kind: what makes it one (what it says, its device, its result)
    outside the blocks the results choose, ``<% if %>`` blocks whose test calls one of ``PREDICATES`` (the
    template functions that read results) or a name set from one.

    ``value_of(snippet, name)`` is the shown record of a value: a ``value()`` is a result when it shows a
    number (or nothing yet); a text the snippet recorded is its own words, not a measurement.
    """
    prose = markdown if isinstance(markdown, Prose) else Prose(markdown)
    markdown = prose.markdown
    chosen = _chosen(prose, set(PREDICATES))
    starts = [a for a, _ in chosen]

    def typed(pattern: re.Pattern[str], start: int, end: int) -> re.Match[str] | None:
        return next((m for m in pattern.finditer(prose.masked, start, end)
                     if not _inside(chosen, starts, m.start())), None)

    findings = []
    for start, end in prose.sentences:
        if not _SAYS.search(prose.masked, start, end):  # most sentences say nothing of any kind
            continue
        for kind in KINDS:
            said = typed(kind.says, start, end)
            if said is None or (kind.device and typed(_DEVICES, start, end) is None):
                continue
            if kind.result and not (typed(COMPARING, start, end) or any(
                    _shows_result(markdown[a:b], value_of)
                    for a, b in prose.tags_in(start, end) if not _inside(chosen, starts, a))):
                continue
            findings.append(Typed(prose.line(said.start()) + line_offset, kind, prose.shown(start, end)))
            break
    return findings


def _shows_result(tag: str, value_of: Callable[[str, str], ValueRecord | None]) -> bool:
    """Whether a tag shows a measurement: a verdict, or a value that is a number (or not shown yet)."""
    found = _RESULT.match(tag)
    if found is None:
        return False
    if found.group(1) == "verdict":
        return True
    record = value_of(found.group(3), found.group(5))
    return record is None or (isinstance(record.value, (int, float)) and not isinstance(record.value, bool))


def _chosen(prose: Prose, predicates: set[str]) -> list[tuple[int, int]]:
    """The spans of ``<% if %>`` blocks whose tests (the ``if``'s or an ``elif``'s) call a predicate or
    name a variable set from one: what is inside is shown or not by the results. In order, not nested
    (an inner block inside a chosen one is chosen with it)."""
    names = set(predicates)
    spans: list[tuple[int, int]] = []
    opened: list[tuple[int, bool]] = []
    for a, b in prose.tags:
        statement = _STATEMENT.match(prose.markdown[a:b])
        if statement is None:
            continue
        word, body = statement.group(1), statement.group(2)
        reads = any(re.search(rf"(?<![\w.]){re.escape(name)}\b", body) for name in names)
        if word == "set":
            target = re.match(r"\s*(\w+)\s*=", body)
            if target and reads:
                names.add(target.group(1))
        elif word == "if":
            opened.append((a, reads))
        elif word == "elif" and opened:
            opened[-1] = (opened[-1][0], opened[-1][1] or reads)
        elif word == "endif" and opened:
            start, driven = opened.pop()
            if driven:
                while spans and spans[-1][0] >= start:  # chosen blocks inside this one
                    spans.pop()
                spans.append((start, b))
    return spans


def _inside(spans: list[tuple[int, int]], starts: list[int], pos: int) -> bool:
    i = bisect.bisect_right(starts, pos) - 1
    return i >= 0 and pos < spans[i][1]
