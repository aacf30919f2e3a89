"""A comparison's numbers and what they support: per-call statistics over timing blocks, each candidate's
measurement, noise limits, speed-ups with their intervals, verdicts, and the tables a post shows (each
language the harness words, see ``words``) and records.
"""

from __future__ import annotations

import inspect
import math
import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perfblog.harness.compilation import CompileStats, FirstCall, FirstCalls
from perfblog.harness.record import table, translator, verdict
from perfblog.harness.verdict import DELTA, Interval, Judgement, ratio_interval
from perfblog.harness.words import TABLE_WORDS, readable, time_unit


@dataclass(frozen=True)
class NoiseLimits:
    """When a measurement is too noisy to base a verdict on."""

    #: A candidate's blocks: interquartile range over median (a robust coefficient of variation).
    spread: float = 0.25
    #: A comparison's interval: its width over the ratio.
    width: float = 0.25
    #: CPU only: the process's CPU time over wall time per thread during the blocks (median).
    cpu_share: float = 0.90
    #: The machine's 1-minute load average per CPU, at the start or the end of the timing.
    load_per_cpu: float = 1.0


@dataclass(frozen=True)
class Stats:
    """Summary of per-call times (seconds), one sample per timed block; the samples are kept."""

    median_s: float
    q1_s: float
    q3_s: float
    repeats: int
    number_per_repeat: int
    samples: tuple[float, ...] = ()

    @property
    def iqr_s(self) -> float:
        return self.q3_s - self.q1_s

    @property
    def spread(self) -> float:
        """IQR over median: how widely the blocks scatter, relative to the time itself."""
        return self.iqr_s / self.median_s if self.median_s else math.inf

    @classmethod
    def from_samples(cls, samples: Sequence[float], number_per_repeat: int = 1) -> Stats:
        """Median and quartiles (the 'inclusive' method, as numpy's default linear quantiles)."""
        if not samples:
            raise ValueError("no timing samples")
        if len(samples) == 1:
            q1 = median = q3 = samples[0]
        else:
            q1, median, q3 = statistics.quantiles(samples, n=4, method="inclusive")
        return cls(median, q1, q3, len(samples), number_per_repeat, tuple(samples))


@dataclass(frozen=True)
class Measurement:
    """One candidate's numbers."""

    name: str
    device: str
    first: FirstCalls
    timing: Stats
    peak_memory_bytes: int | None
    compile: CompileStats
    cpu_share: float | None = None  # CPU: median over blocks of process CPU time / (wall x threads)

    @property
    def first_call_s(self) -> float:
        """The cold first call (compilation included, from an empty cache)."""
        return self.first.cold.wall_s


@dataclass(frozen=True)
class Comparison:
    """All candidates measured on the same inputs; the first (or named) one is the baseline."""

    device: str
    baseline: str
    measurements: tuple[Measurement, ...]
    threads: int
    input_sets: int
    notes: tuple[str, ...] = field(default=())
    #: The 1-minute load average when timing began and when it ended: other work skews CPU numbers.
    load_average: float | None = None
    load_average_end: float | None = None
    cpus: int = field(default_factory=lambda: os.cpu_count() or 1)
    limits: NoiseLimits = field(default_factory=NoiseLimits)
    #: Blocks of different candidates with the same index were timed in the same round.
    paired: bool = True

    @classmethod
    def of_samples(cls, device: str, samples: Mapping[str, Sequence[float]], *, baseline: str | None = None,
                   threads: int = 1, cpu_shares: Mapping[str, float | None] | None = None,
                   loads: tuple[float | None, float | None] = (None, None),
                   limits: NoiseLimits | None = None) -> Comparison:
        """A comparison of timings taken in interleaved rounds elsewhere (seconds, one per round)."""
        shares = cpu_shares or {}
        measurements = tuple(
            Measurement(name, device, FirstCalls(FirstCall(0.0)), Stats.from_samples(list(times)), None,
                        CompileStats(0, 0, (), 0, ()), shares.get(name))
            for name, times in samples.items())
        return cls(device, baseline or next(iter(samples)), measurements, threads, 1, (), loads[0], loads[1],
                   limits=limits or NoiseLimits())

    def __getitem__(self, name: str) -> Measurement:
        for measurement in self.measurements:
            if measurement.name == name:
                return measurement
        raise KeyError(f"no candidate named {name!r}; have {[m.name for m in self.measurements]}")

    def speedup(self, name: str, over: str | None = None) -> float:
        """How many times faster `name` is than `over` (default: the baseline), from medians."""
        reference = self[over or self.baseline].timing.median_s
        return reference / self[name].timing.median_s

    def interval(self, name: str, over: str | None = None) -> Interval:
        """The speed-up of `name` over `over` with its 95 % bootstrap interval (ValueError with fewer
        than ``verdict.MIN_BLOCKS`` timing blocks on a side)."""
        base, cand = self[over or self.baseline].timing, self[name].timing
        return ratio_interval(base.samples, cand.samples, paired=self.paired)

    def _interval_or_none(self, name: str) -> Interval | None:
        """For tables: the interval against the baseline, None for the baseline or too few blocks."""
        if name == self.baseline:
            return None
        try:
            return self.interval(name)
        except ValueError:
            return None

    def noise(self, *names: str, label: Callable[[str], str] = str) -> tuple[str, ...]:
        """Why the measurements of ``names`` (default: all) are too noisy for a verdict; empty if not.
        ``label`` names the candidates (a table in another language)."""
        reasons = []
        chosen = [self[n] for n in names] if names else list(self.measurements)
        for m in chosen:
            if m.timing.spread > self.limits.spread:
                reasons.append(f"{label(m.name)}: blocks spread {m.timing.spread:.0%} of the median "
                               f"(limit {self.limits.spread:.0%})")
            if m.cpu_share is not None and m.cpu_share < self.limits.cpu_share:
                reasons.append(f"{label(m.name)}: had the CPU {m.cpu_share:.0%} of the time "
                               f"(limit {self.limits.cpu_share:.0%})")
        loads = [x for x in (self.load_average, self.load_average_end) if x is not None]
        if loads and max(loads) > self.limits.load_per_cpu * self.cpus:
            reasons.append(f"machine busy: load average {max(loads):.2f} on {self.cpus} CPUs")
        return tuple(reasons)

    def judge(self, name: str, over: str | None = None, delta: float = DELTA) -> Judgement:
        """The verdict on `name` against `over` (default: the baseline), by the rule in ``verdict``."""
        baseline = over or self.baseline
        interval = self.interval(name, baseline)
        noise = self.noise(name, baseline)
        width = (interval.high - interval.low) / interval.ratio
        if width > self.limits.width:
            noise += (f"the interval is {width:.0%} of the ratio wide (limit {self.limits.width:.0%})",)
        return Judgement(name, baseline, interval, delta, noise)

    def rows(self) -> list[dict[str, Any]]:
        """One row per candidate, every number in seconds or bytes, for the raw table."""
        rows = []
        for m in self.measurements:
            interval = self._interval_or_none(m.name)
            cold, warm = m.first.cold, m.first.warm
            rows.append({
                "candidate": m.name,
                "device": m.device,
                "cold_first_call_s": _round(cold.wall_s),
                "cold_dynamo_s": _round(cold.dynamo_s),
                "cold_inductor_s": _round(cold.inductor_s),
                "warm_first_call_s": _round(warm.wall_s if warm else None),
                "warm_dynamo_s": _round(warm.dynamo_s if warm else None),
                "warm_inductor_s": _round(warm.inductor_s if warm else None),
                "median_us": round(m.timing.median_s * 1e6, 3),
                "iqr_us": round(m.timing.iqr_s * 1e6, 3),
                "blocks": m.timing.repeats,
                "calls_per_block": m.timing.number_per_repeat,
                "speedup": round(self.speedup(m.name), 4),
                "speedup_low": None if interval is None else round(interval.low, 4),
                "speedup_high": None if interval is None else round(interval.high, 4),
                "cpu_share": None if m.cpu_share is None else round(m.cpu_share, 3),
                "peak_mem_bytes": m.peak_memory_bytes,
                "graphs": m.compile.graphs,
                "graph_breaks": m.compile.graph_breaks,
                "recompiles": m.compile.recompiles,
                "break_reasons": m.compile.break_summary,
            })
        return rows

    def caption(self) -> str:
        parts = [
            f"device {self.device}, {self.threads} thread{'s' * (self.threads != 1)} "
            "(pinned by the harness), "
            f"{self.input_sets} rotating input set(s);",
            f"median and IQR per call over {self.measurements[0].timing.repeats} interleaved rounds; "
            f"speed-up = median of {self.baseline} / median, 95 % bootstrap interval over the rounds;",
            "cold first call: fresh empty Inductor cache and Dynamo reset; warm: the same cache filled; "
            "split into Dynamo tracing and backend (AOTAutograd + Inductor) from torch's compile metrics; "
            "single samples",
        ]
        if self.load_average is not None:
            parts.append(f"(1-min load average {self.load_average:.2f} to {self.load_average_end or 0:.2f} "
                         f"on {self.cpus} CPUs)")
        noise = self.noise()
        if noise:
            parts.append("NOISY: " + "; ".join(noise))
        return "; ".join([" ".join(parts), *self.notes])

    def display_rows(self, language: str = "zh", label: Callable[[str], str] = str) -> list[dict[str, Any]]:
        """One row per candidate for a post: headers with units in ``language`` (a key of
        ``TABLE_WORDS``), candidates named by ``label``, numbers at a readable precision.

        Times are in one unit per column (the largest that keeps every value under 1000); compile
        columns appear when a candidate compiled, the peak memory column where it was measured.
        """
        words = TABLE_WORDS[language]
        unit, scale = time_unit([m.timing.median_s for m in self.measurements])
        compiled = any(m.first.warm is not None for m in self.measurements)
        with_memory = any(m.peak_memory_bytes is not None for m in self.measurements)
        rows = []
        for m in self.measurements:
            row: dict[str, Any] = {words.candidate: label(m.name)}
            if compiled:
                warm = m.first.warm
                row[words.cold] = m.first.cold.summary(language) if warm else "—"
                row[words.warm] = warm.summary(language) if warm else "—"
            row[words.median.format(unit=unit)] = readable(m.timing.median_s * scale)
            row[words.iqr.format(unit=unit)] = readable(m.timing.iqr_s * scale)
            row[words.rounds] = m.timing.repeats
            row[words.speedup] = self.speedup_text(m.name, language=language)
            if with_memory:
                peak = m.peak_memory_bytes
                row[words.peak] = None if peak is None else readable(peak / 2**20)
            rows.append(row)
        return rows

    def speedup_text(self, name: str, over: str | None = None, language: str = "zh") -> str:
        """"2.31×（2.20–2.45）": the speed-up over ``over`` (default: the baseline) with its interval."""
        words = TABLE_WORDS[language]
        if name == (over or self.baseline):
            return words.baseline
        try:
            interval = self.interval(name, over)
        except ValueError:  # too few blocks for an interval
            return f"{readable(self.speedup(name, over))}×"
        return f"{readable(interval.ratio)}×" + words.bracket(
            f"{readable(interval.low)}–{readable(interval.high)}")

    def display_caption(self, caption: str | None = None, language: str = "zh",
                        label: Callable[[str], str] = str) -> str:
        """A short caption in ``language``: what was compared, the device, the thread count and the method."""
        words = TABLE_WORDS[language]
        parts = [
            words.setup(self.device, self.threads, self.input_sets),
            words.timing(self.measurements[0].timing.repeats),
            words.ratio(label(self.baseline)),
        ]
        if any(m.first.warm is not None for m in self.measurements):
            parts.append(words.compile_note)
        if self.device != "cuda":
            parts.append(words.cpu_memory)
        if self.noise():
            parts.append(words.noisy(words.sentence.join(self.noise(label=label))))
        return words.sentence.join([caption, *parts] if caption else parts) + words.stop

    def record(self, name: str, caption: str | None = None, *,
               translations: Mapping[str, Mapping[str, str]] | None = None) -> None:
        """Record the comparison: `name` for the post in Chinese, `name.en` in English (the page's
        language picks one), and `name.raw`, every number.

        ``translations`` maps a language to the snippet's own words in it: the candidates' names and the
        caption (``{"en": {"编译": "compiled", caption: "..."}}``); the harness words the rest. The raw
        table keeps seconds, calls per block, the interval, CPU share, compile splits, graphs, breaks
        and their reasons, recompiles, and the full method in its caption (load average and noise
        included), so nothing measured is lost.
        """
        unknown = set(translations or ()) - set(TABLE_WORDS)
        if unknown:
            raise ValueError(f"the harness has no words in {sorted(unknown)} (it has {sorted(TABLE_WORDS)})")
        for index, language in enumerate(TABLE_WORDS):
            label = translator((translations or {}).get(language, {}))
            shown = None if caption is None else label(caption)
            table(name if index == 0 else f"{name}.{language}", self.display_rows(language, label),
                  caption=self.display_caption(shown, language, label))
        full = self.caption() if caption is None else f"{caption} ({self.caption()})"
        table(f"{name}.raw", self.rows(), caption=full)

    def record_verdict(self, name: str, candidate: str, over: str | None = None, *, delta: float = DELTA,
                       expect: str | Mapping[str, str] | None = None) -> Judgement:
        """Record the verdict on `candidate` against `over` (default: the baseline) as `name`.

        ``expect``: the verdict the post relies on ("faster", "slower", "no-difference",
        "inconclusive"), or one per device kind ({"cpu": "faster", "cuda": "faster"}). A run whose
        verdict differs fails `blog run`, which keeps the previous result.
        """
        judgement = self.judge(candidate, over, delta)
        verdict(name, judgement, device=self.device, expect=expect, line=_caller_line())
        return judgement


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def _caller_line() -> int | None:
    """The line, within the snippet's cell, that called into the harness (for messages)."""
    frame = inspect.currentframe()
    while frame is not None and frame.f_globals.get("__name__", "").startswith("perfblog."):
        frame = frame.f_back
    return frame.f_lineno if frame is not None else None
