"""What embeds say in words, per page language: verdict clauses, labels, the page's version note.

A verdict's wording is chosen by the verdict itself, so a sentence built from it cannot contradict its
numbers. A language is one ``Words`` in ``LANGUAGES``, keyed by the primary subtag (``zh``, ``en``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from perfblog.generator.store.content import VerdictRecord
from perfblog.harness.verdict import Verdict
from perfblog.harness.words import readable as number


def _spaced(*parts: str) -> str:
    """Join Chinese and Latin pieces with a space where a Han character meets a letter or digit."""
    out = ""
    for part in parts:
        if out and part and ((_han(out[-1]) and _latin(part[0])) or (_latin(out[-1]) and _han(part[0]))):
            out += " "
        out += part
    return out


def _latin(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char in "`")


def _han(char: str) -> bool:
    return "\u4e00" <= char <= "\u9fff"


def _interval(low: float, high: float, delta: float, inverted: bool = False) -> str:
    """An interval as a clause shows it, each end on the side of 1 and of 1±δ it lies on (``inverted``: the
    ends of a time ratio, whose bounds are those of the speed ratio inverted)."""
    bounds = tuple(1 / b if inverted else b for b in (1 - delta, 1.0, 1 + delta))
    return f"{_apart(low, bounds)}–{_apart(high, bounds)}"


def _apart(value: float, bounds: tuple[float, ...]) -> str:
    """``value`` in three significant digits, or more where three would put it on a bound it is not on
    (1.004 shows as 1.004, not 1.00), so that the numbers shown read as the rule read them."""
    text, digits = number(value), 4
    while digits < 10 and any((float(text) > b, float(text) < b) != (value > b, value < b) for b in bounds):
        text, digits = f"{value:.{digits}g}", digits + 1
    return text


@dataclass(frozen=True)
class Words:
    """One language's phrases."""

    #: verdict -> (record, subject, baseline) -> the clause.
    clauses: Mapping[Verdict, Callable[[VerdictRecord, str, str], str]]
    #: no difference by the rule, but 1 lies outside the interval: a difference smaller than the band.
    within: Callable[[VerdictRecord, str, str], str]
    noisy: Callable[[VerdictRecord, str, str], str]
    rule_text: Callable[[VerdictRecord], str]
    version_title: Callable[[str], str]  # the label's tooltip, given the post's torch
    versions_note: Callable[[Mapping[str, list[str]]], str]  # version -> snippets

    def verdict(self, record: VerdictRecord, subject: str, baseline: str) -> str:
        """The clause for ``record``, its wording chosen by the verdict and, inside the band, by 1."""
        if record.verdict is Verdict.INCONCLUSIVE and record.noise:
            return self.noisy(_named(record, subject, baseline), subject, baseline)
        if record.verdict is Verdict.SAME and not _contains_one(record):
            return self.within(record, subject, baseline)
        return self.clauses[record.verdict](record, subject, baseline)

    def rule(self, record: VerdictRecord) -> str:
        return self.rule_text(record)


def _named(record: VerdictRecord, subject: str, baseline: str) -> VerdictRecord:
    """The record with its noise reasons naming the two sides as the sentence does ("编译 · where: had
    the CPU 67 % …" -> "the compiled version: …"), so a reason never names a candidate in another language."""
    names = {f"{record.candidate}: ": f"{subject}: ", f"{record.baseline}: ": f"{baseline}: "}
    noise = tuple(next((reason.replace(old, new, 1) for old, new in names.items() if reason.startswith(old)),
                       reason) for reason in record.noise)
    return dataclasses.replace(record, noise=noise)


def _contains_one(record: VerdictRecord) -> bool:
    """Whether the interval holds 1: only then is there no measurable difference. An interval inside the
    equivalence band that excludes 1 is a measured difference, one smaller than the band."""
    return record.low <= 1 <= record.high


def _pct(value: float) -> str:
    return f"{value * 100:g} %"


ZH = Words(
    clauses={
        Verdict.FASTER: lambda r, s, b: _spaced(
            s, "比", b, f"快：速度约为后者的 {number(r.ratio)} 倍"
            f"（{_pct(r.confidence)} 区间 {_interval(r.low, r.high, r.delta)} 倍）"),
        Verdict.SLOWER: lambda r, s, b: _spaced(
            s, "比", b, f"慢：耗时约为后者的 {number(1 / r.ratio)} 倍"
            f"（{_pct(r.confidence)} 区间 {_interval(1 / r.high, 1 / r.low, r.delta, inverted=True)} 倍）"),
        Verdict.SAME: lambda r, s, b: _spaced(
            s, "与", b, f"没有可测的差别（速度比 {number(r.ratio)}，{_pct(r.confidence)} 区间 "
            f"{_interval(r.low, r.high, r.delta)}，落在 ±{_pct(r.delta)} 以内）"),
        Verdict.INCONCLUSIVE: lambda r, s, b: _spaced(
            s, "与", b, f"谁更快无法判定（速度比 {number(r.ratio)}，{_pct(r.confidence)} 区间 "
            f"{_interval(r.low, r.high, r.delta)}，越过了 1±{_pct(r.delta)} 的边界）"),
    },
    within=lambda r, s, b: _spaced(
        s, "与", b, f"的差别在 ±{_pct(r.delta)} 以内（速度比 {number(r.ratio)}，{_pct(r.confidence)} 区间 "
        f"{_interval(r.low, r.high, r.delta)}，不含 1）"),
    noisy=lambda r, s, b: _spaced(s, "与", b, f"谁更快无法判定：测量受到干扰（{'；'.join(r.noise)}）"),
    rule_text=lambda r: (f"速度比 = {r.baseline} 的中位耗时 ÷ {r.candidate} 的中位耗时，{r.blocks} 轮计时的"
                         f"自助法 {_pct(r.confidence)} 区间；区间下限高于 1+δ 为更快，上限低于 1−δ 为更慢，"
                         f"整个区间在 1±δ 内时，含 1 为没有可测的差别，不含 1 为差别在 ±δ 以内，"
                         f"否则无法判定（δ = {_pct(r.delta)}）"),
    version_title=lambda torch: f"本文描述的是 torch {torch}，这个结果来自另一个版本",
    versions_note=lambda found: "本页显示的结果来自不同的 torch 版本：" + "；".join(
        f"torch {version}（{'、'.join(stems)}）" for version, stems in found.items()) + "。",
)

EN = Words(
    clauses={
        Verdict.FASTER: lambda r, s, b: (
            f"{s} is faster than {b}: about {number(r.ratio)}× its speed "
            f"({_pct(r.confidence)} interval {_interval(r.low, r.high, r.delta)}×)"),
        Verdict.SLOWER: lambda r, s, b: (
            f"{s} is slower than {b}: it takes about {number(1 / r.ratio)}× as long "
            f"({_pct(r.confidence)} interval {_interval(1 / r.high, 1 / r.low, r.delta, inverted=True)}×)"),
        Verdict.SAME: lambda r, s, b: (
            f"{s} and {b} show no measurable difference (speed ratio {number(r.ratio)}, "
            f"{_pct(r.confidence)} interval {_interval(r.low, r.high, r.delta)}, within ±{_pct(r.delta)})"),
        Verdict.INCONCLUSIVE: lambda r, s, b: (
            f"whether {s} is faster than {b} is inconclusive (speed ratio {number(r.ratio)}, "
            f"{_pct(r.confidence)} interval {_interval(r.low, r.high, r.delta)}, "
            f"across a 1±{_pct(r.delta)} bound)"),
    },
    within=lambda r, s, b: (
        f"{s} and {b} differ, but within ±{_pct(r.delta)} (speed ratio {number(r.ratio)}, "
        f"{_pct(r.confidence)} interval {_interval(r.low, r.high, r.delta)}, which excludes 1)"),
    noisy=lambda r, s, b: f"whether {s} is faster than {b} is inconclusive: the measurement was noisy "
                          f"({'; '.join(r.noise)})",
    rule_text=lambda r: (f"speed ratio = median time of {r.baseline} / median time of {r.candidate}; "
                         f"{_pct(r.confidence)} bootstrap interval over {r.blocks} rounds; "
                         f"faster when its low end is above 1+δ, slower when its high end is below 1−δ, "
                         f"within ±δ when it lies within 1±δ (no measurable difference when it also "
                         f"holds 1), else inconclusive (δ = {_pct(r.delta)})"),
    version_title=lambda torch: f"this post describes torch {torch}; this result comes from another version",
    versions_note=lambda found: "The results on this page come from different torch versions: " + "; ".join(
        f"torch {version} ({', '.join(stems)})" for version, stems in found.items()) + ".",
)

#: Languages by primary subtag; others read English.
LANGUAGES: dict[str, Words] = {"zh": ZH, "en": EN}


def of(language: str) -> Words:
    """The words of a BCP 47 language tag ("zh-CN" -> Chinese)."""
    return LANGUAGES.get(language.split("-", 1)[0].lower(), EN)
