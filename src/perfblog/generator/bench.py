"""The benchmark harness snippets import: compare callables on the same inputs, honestly.

Method, per ``compare``:

1. **Threads.** On CPU the harness pins torch's thread count itself (``THREADS``, default 1; a snippet
   cannot forget) for the whole comparison, compilation included: Inductor bakes the count into the
   C++ it generates. On a shared machine a second thread mostly waits at barriers, which is noise.
2. **Compile times, cold and warm** (a candidate made by ``torch.compile``). Cold: Dynamo reset, a fresh
   empty Inductor/Triton cache directory of its own, in-memory caches cleared, then the first call.
   Warm: Dynamo reset and in-memory caches cleared again, the same (now filled) cache directory, the
   first call again. Each is split into Dynamo tracing and backend compilation (AOTAutograd + Inductor
   code generation) from torch's own compilation metrics, not from a timer around the call. Both are
   single samples. Process start-up (imports, the first compiler launch) is paid once, beforehand, by a
   throwaway compile, so it lands on no candidate.
3. **Warm-up**: every input set is used, so recompilations happen before timing.
4. **Steady state in interleaved rounds**: each round times one block of calls of every candidate (in a
   rotating order), inputs rotating from call to call, so a slow spell of the machine hits every
   candidate alike. On CPU a block is ``torch.utils.benchmark.Timer.timeit``; on CUDA, CUDA events
   around the block, then a synchronisation.
5. **Speed ratios with a 95 % interval** (``verdict.ratio_interval``: a bootstrap over the paired
   rounds, fixed seed) and **verdicts** by the one rule of ``verdict.decide``.
6. **Noise**: a candidate whose blocks spread too widely, a CPU candidate that did not get its CPU
   (process CPU time over wall time, per thread), or a machine whose load average exceeds its CPUs
   marks the comparison noisy (``NoiseLimits``); a warning goes to stderr and the tables say so. A
   noisy comparison is never the basis of a verdict: it is ``inconclusive``.
7. Peak memory of one call on CUDA (``torch.cuda.max_memory_allocated`` after a reset); on CPU torch's
   allocator keeps no resettable peak, so it is ``None`` rather than a guess.
8. Graphs, graph breaks and their reasons from ``torch._dynamo.utils.counters``, recompilations from
   Dynamo's compilation metrics (``torch._dynamo.explain`` under-reports breaks that leave no graph).

``Comparison.record`` writes a compact table for posts in each language the harness words
(``TABLE_WORDS``: ``<name>`` in Chinese, ``<name>.en`` in English; a post's ``table()`` embed shows the
one in its page's language) and ``<name>.raw`` with every number in seconds;
``Comparison.record_verdict`` writes a verdict a post embeds with ``verdict()``, optionally with the
verdict the snippet expects (a re-run that disagrees fails ``blog run``). ``interleave`` gives whole-run
timings (a model's prefill and decode loop) the same rounds, intervals and noise checks. torch is
imported inside functions so that ``import perfblog.generator`` stays light.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perfblog.generator.target import target_device
from perfblog.generator.verdict import DELTA, Interval, Verdict, decide, ratio_interval

#: Why CPU peak memory is not reported; recorded in table captions.
CPU_MEMORY_NOTE = "peak memory is not measured on CPU: torch's CPU allocator keeps no resettable peak"
#: CPU threads the harness times with, unless a comparison asks for others (``BLOG_BENCH_THREADS``).
THREADS_ENV = "BLOG_BENCH_THREADS"
THREADS = 1
#: Timing rounds: every candidate gets one block per round (at least ``verdict.MIN_BLOCKS``).
ROUNDS = 20


@dataclass(frozen=True)
class TableWords:
    """The compact table's words in one language: headers, cells and the caption's sentences."""

    candidate: str
    cold: str
    warm: str
    median: str  # "{unit}" is the time unit
    iqr: str
    rounds: str
    speedup: str
    peak: str
    baseline: str  # the baseline's speed-up cell
    open: str  # brackets around a split or an interval
    close: str
    sentence: str  # joins the caption's sentences
    stop: str
    setup: Callable[[str, int, int], str]  # device, threads, input sets
    timing: Callable[[int], str]  # rounds
    ratio: Callable[[str], str]  # the baseline's name
    compile_note: str
    cpu_memory: str
    noisy: Callable[[str], str]  # the reasons, joined

    def bracket(self, text: str) -> str:
        return f"{self.open}{text}{self.close}"


#: The languages the compact table is recorded in; the first is the unsuffixed ``<name>``.
TABLE_WORDS: dict[str, TableWords] = {
    "zh": TableWords(
        candidate="写法", cold="冷编译首次调用 s（Dynamo / Inductor）",
        warm="热缓存首次调用 s（Dynamo / Inductor）",
        median="中位数（{unit}）", iqr="IQR（{unit}）", rounds="轮数", speedup="加速比（95 % 区间）",
        peak="峰值显存（MiB）", baseline="1（基准）", open="（", close="）", sentence="；", stop="。",
        setup=lambda device, threads, sets: (f"设备 {device}，{threads} 线程（由测量框架固定），"
                                             f"{sets} 组输入轮换"),
        timing=lambda rounds: f"预热后各写法交替计时 {rounds} 轮，取每次调用的中位数与四分位距（IQR）",
        ratio=lambda baseline: f"加速比 = {baseline} 的中位数 ÷ 本行的中位数，括号内为按轮自助法（bootstrap）"
                               "得到的 95 % 区间",
        compile_note="冷编译：重置 Dynamo、使用全新的空 Inductor 缓存目录；"
                     "热缓存：同一缓存目录已填满后再次首次调用；"
                     "括号内为 torch 编译指标中的 Dynamo 跟踪与 Inductor（含 AOTAutograd）时间；均为单次测量",
        cpu_memory="CPU 上不测峰值内存",
        noisy=lambda reasons: f"测量受干扰（{reasons}），不据此下结论",
    ),
    "en": TableWords(
        candidate="variant", cold="cold first call s (Dynamo / Inductor)",
        warm="warm-cache first call s (Dynamo / Inductor)", median="median ({unit})", iqr="IQR ({unit})",
        rounds="rounds", speedup="speed-up (95 % interval)", peak="peak memory (MiB)",
        baseline="1 (baseline)",
        open=" (", close=")", sentence="; ", stop=".",
        setup=lambda device, threads, sets: (f"device {device}, {threads} thread{'s' * (threads != 1)} "
                                             f"(pinned by the harness), {sets} rotating input sets"),
        timing=lambda rounds: (f"after warm-up the variants take turns for {rounds} rounds; median and "
                               "interquartile range (IQR) per call"),
        ratio=lambda baseline: (f"speed-up = median of {baseline} / median of the row, with its 95 % "
                                "bootstrap interval over the rounds in brackets"),
        compile_note="cold: Dynamo reset and a fresh, empty Inductor cache directory; warm cache: the first "
                     "call again with that directory filled; in brackets the Dynamo tracing and Inductor "
                     "(AOTAutograd included) time from torch's compile metrics; single samples",
        cpu_memory="peak memory is not measured on CPU",
        noisy=lambda reasons: f"noisy measurement ({reasons}): no conclusion rests on it",
    ),
}


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
class CompileStats:
    """What Dynamo did while a piece of code ran: graphs, breaks and recompilations."""

    graphs: int
    graph_breaks: int
    break_reasons: tuple[str, ...]
    recompiles: int
    recompile_reasons: tuple[str, ...]
    graph_ops: tuple[int, ...] = ()

    @property
    def break_summary(self) -> str:
        """The first line of each distinct break reason, joined for a table cell."""
        return "; ".join(first_line(reason) for reason in self.break_reasons)


@dataclass(frozen=True)
class FirstCall:
    """One first call: its wall time and, when it compiled, the split torch's metrics give."""

    wall_s: float
    dynamo_s: float | None = None  # tracing: the frame's compile time less the backend's
    inductor_s: float | None = None  # the backend: AOTAutograd and Inductor's code generation
    frames: int = 0  # frames Dynamo compiled during the call

    @property
    def compiled(self) -> bool:
        return self.frames > 0

    def summary(self, language: str = "zh") -> str:
        """"1.46（0.21 / 1.18）": wall seconds, then Dynamo and Inductor, as the tables show it."""
        split = ""
        if self.dynamo_s is not None and self.inductor_s is not None:
            split = TABLE_WORDS[language].bracket(f"{readable(self.dynamo_s)} / {readable(self.inductor_s)}")
        return f"{readable(self.wall_s)}{split}"


@dataclass(frozen=True)
class FirstCalls:
    """A candidate's first call with an empty cache (cold) and with the cache it filled (warm)."""

    cold: FirstCall
    warm: FirstCall | None = None  # None when nothing was compiled
    stats: CompileStats | None = None  # what Dynamo did during the cold call (``first_calls`` only)


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
class Judgement:
    """A candidate against a baseline: the ratio, its interval, the margin, what noise there was."""

    candidate: str
    baseline: str
    interval: Interval
    delta: float
    noise: tuple[str, ...]

    @property
    def verdict(self) -> Verdict:
        """The rule's verdict; a noisy measurement supports none."""
        return Verdict.INCONCLUSIVE if self.noise else decide(self.interval, self.delta)


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
        unit, scale = _time_unit([m.timing.median_s for m in self.measurements])
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
        from perfblog.generator.record import table, translator

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
        from perfblog.generator.record import verdict

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


def _time_unit(seconds: Sequence[float], below: float = 1000) -> tuple[str, float]:
    """The unit (and its factor from seconds) that shows the largest value under `below`."""
    largest = max(seconds, default=0.0)
    for unit, scale in (("µs", 1e6), ("ms", 1e3)):
        if largest * scale < below:
            return unit, scale
    return "s", 1.0


def readable(value: float) -> str:
    """Three significant digits (all digits from 1000 up), never scientific notation: 1234, 12.3, 0.0123."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:.0f}"
    value = float(f"{value:.3g}")  # round first, so 99.96 shows as 100, not 100.0
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def first_line(text: str) -> str:
    """The first non-empty line of a message: the part that is stable across torch versions."""
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return ""


def reset_compile_stats() -> None:
    """Forget Dynamo's counters and compilation metrics (not its caches)."""
    from torch._dynamo.utils import clear_compilation_metrics, counters

    counters.clear()
    clear_compilation_metrics()


def read_compile_stats() -> CompileStats:
    """Graphs, breaks and recompilations since the last `reset_compile_stats`."""
    from torch._dynamo.utils import counters, get_compilation_metrics

    # Breaks at a call land in counters["graph_break"]; a break at a jump on tensor data (`if x.sum() > 0`)
    # and a frame Dynamo gave up on entirely stay in counters["unimplemented"] (seen on torch 2.13).
    breaks = counters["graph_break"] + counters["unimplemented"]
    metrics = list(get_compilation_metrics())
    recompile_reasons = tuple(r for m in metrics if (r := getattr(m, "recompile_reason", None)))
    return CompileStats(
        graphs=int(counters["stats"]["unique_graphs"]),
        graph_breaks=int(sum(breaks.values())),
        break_reasons=tuple(breaks),
        recompiles=len(recompile_reasons),
        recompile_reasons=recompile_reasons,
        graph_ops=tuple(n for m in metrics if (n := getattr(m, "graph_op_count", None))),
    )


def count_compiles(run: Callable[[], Any]) -> CompileStats:
    """Run `run()` with fresh counters and say how many graphs, breaks and recompiles it caused."""
    reset_compile_stats()
    run()
    return read_compile_stats()


# --- threads, caches and first calls ----------------------------------------------------------------


def threads_for(device: str, threads: int | None = None) -> int:
    """The CPU thread count a measurement on ``device`` uses: the argument, ``BLOG_BENCH_THREADS``, 1."""
    if threads is None:
        threads = int(os.environ.get(THREADS_ENV) or THREADS)
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    return threads


@contextlib.contextmanager
def pinned_threads(device: str, threads: int | None = None) -> Iterator[int]:
    """On CPU, torch's thread count set for what runs inside (and restored after); the count in use."""
    import torch

    if device == "cuda":
        yield torch.get_num_threads()
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads_for(device, threads))
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


def pin_threads(device: str, threads: int | None = None) -> int:
    """Pin torch's CPU threads for the rest of the kernel (before compiling a model measured later)."""
    import torch

    if device != "cuda":
        torch.set_num_threads(threads_for(device, threads))
    return torch.get_num_threads()


@contextlib.contextmanager
def inductor_cache_dir(path: str) -> Iterator[None]:
    """Inductor's and Triton's on-disk caches in ``path`` for what runs inside (restored after)."""
    saved = {k: os.environ.get(k) for k in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")}
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = path
    os.environ["TRITON_CACHE_DIR"] = os.path.join(path, "triton")
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _forget_compiled() -> None:
    """Dynamo's caches and Inductor's in-memory caches: a new process's state, minus its imports."""
    import torch

    torch._dynamo.reset()
    inductor_utils = sys.modules.get("torch._inductor.utils")
    if inductor_utils is not None:  # never imported: nothing of Inductor's is cached in memory
        clear = getattr(inductor_utils, "clear_caches", None) or inductor_utils.clear_inductor_caches
        clear()


_process_warmed: set[str] = set()


def _warm_process(device: str) -> None:
    """Pay the process's one-off compiler start-up (imports, first launch) on a throwaway function."""
    if device in _process_warmed:
        return
    import torch

    root = tempfile.mkdtemp(prefix="bench-warm-")
    try:
        with inductor_cache_dir(root):
            torch.compile(lambda t: torch.relu(t) * 2 + 1)(torch.randn(8, 8, device=device))
            torch._dynamo.reset()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    _process_warmed.add(device)


def _is_compiled(fn: Any) -> bool:
    """Whether ``fn`` came from ``torch.compile`` (a wrapped function or an OptimizedModule)."""
    if getattr(fn, "_torchdynamo_orig_callable", None) is not None:
        return True
    from torch._dynamo.eval_frame import OptimizedModule

    return isinstance(fn, OptimizedModule)


def _timed_first_call(call: Callable[[], Any], sync: Callable[[], None]) -> tuple[FirstCall, Any]:
    """One call timed on its own, split by the compilation metrics it left (cleared before)."""
    from torch._dynamo.utils import clear_compilation_metrics, get_compilation_metrics

    clear_compilation_metrics()
    sync()
    start = time.perf_counter()
    output = call()
    sync()
    wall = time.perf_counter() - start
    metrics = list(get_compilation_metrics())
    if not metrics:
        return FirstCall(wall), output
    total = sum(getattr(m, "entire_frame_compile_time_s", None) or 0.0 for m in metrics)
    backend = sum(getattr(m, "backend_compile_time_s", None) or 0.0 for m in metrics)
    split = FirstCall(wall, dynamo_s=max(total - backend, 0.0), inductor_s=backend, frames=len(metrics))
    return split, output


def first_calls(call: Callable[[], Any], *, device: str | None = None, threads: int | None = None,
                cache_dir: str | None = None) -> FirstCalls:
    """Time ``call()`` from an empty compile cache (cold), then again with the cache it filled (warm).

    For code the harness does not time itself (a model's whole generation loop): Dynamo is reset and
    the in-memory caches cleared before each; the cache directory, fresh and empty, is ``cache_dir``
    (kept, so the caller can compile again from it) or a temporary one. ``stats`` says what Dynamo did
    during the cold call. The warm call leaves ``call`` compiled.
    """
    from perfblog.generator.errors import GeneratorError

    device = device or target_device()
    sync = _syncer(device)
    with pinned_threads(device, threads), contextlib.ExitStack() as stack:
        path = cache_dir or stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-cache-"))
        os.makedirs(path, exist_ok=True)
        if os.listdir(path):
            raise GeneratorError(f"{path}: a cold compile needs an empty cache directory")
        _warm_process(device)
        with inductor_cache_dir(path):
            _forget_compiled()
            reset_compile_stats()
            cold, _ = _timed_first_call(call, sync)
            stats = read_compile_stats()
            _forget_compiled()
            warm, _ = _timed_first_call(call, sync)
    return FirstCalls(cold, warm if cold.compiled else None, stats)


def _syncer(device: str) -> Callable[[], None]:
    if device == "cuda":
        return _cuda_module().synchronize
    return lambda: None


# --- comparing candidates -----------------------------------------------------------------------------


def compare(
    candidates: Mapping[str, Callable[..., Any]],
    inputs: Sequence[Sequence[Any]],
    *,
    device: str | None = None,
    baseline: str | None = None,
    min_run_time: float = 0.5,
    warmup: int = 3,
    check: bool = True,
    reset: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    threads: int | None = None,
    rounds: int = ROUNDS,
    limits: NoiseLimits | None = None,
) -> Comparison:
    """Measure every candidate on the same input sets (a list of argument tuples, rotated per call).

    ``min_run_time`` is the timing budget per candidate, spread over ``rounds`` interleaved rounds.
    With `check`, every candidate's first output must equal the baseline's (``torch.testing.assert_close``)
    so that a speed-up is never reported for a function that computes something else.
    With `reset` (the default), each candidate starts from a reset Dynamo: its cache lives on the code
    object, so two ``torch.compile`` wrappers of one function would otherwise share graphs, and the
    first call would not always include compilation.
    """
    import torch

    if not candidates:
        raise ValueError("nothing to compare")
    if not inputs:
        raise ValueError("at least one input set is needed")
    device = device or target_device()
    baseline = baseline or next(iter(candidates))
    if baseline not in candidates:
        raise KeyError(f"baseline {baseline!r} is not a candidate")
    arg_sets = [tuple(args) for args in inputs]
    for index, args in enumerate(arg_sets):
        _refuse_all_zero(args, index)

    with pinned_threads(device, threads) as pinned, \
            tempfile.TemporaryDirectory(prefix="bench-cache-") as root:
        clock = CudaClock(_cuda_module()) if device == "cuda" else CpuClock(pinned)
        prepared = [_Candidate(name, fn, arg_sets, root) for name, fn in candidates.items()]
        for candidate in prepared:
            candidate.first_calls(clock, device, reset, warmup)
        if reset:  # each reset forgot the candidates before it: compile them again, from their warm caches
            for candidate in prepared:
                candidate.warm_up(clock, warmup)
        load = _load_average()
        blocks = _interleaved(prepared, clock, min_run_time, rounds)
        load_end = _load_average()
        measurements = [c.measurement(device, clock, blocks[c.name]) for c in prepared]

    if check:
        reference = next(c.output for c in prepared if c.name == baseline)
        kwargs = {} if rtol is None and atol is None else {"rtol": rtol or 0.0, "atol": atol or 0.0}
        for c in prepared:
            torch.testing.assert_close(
                c.output, reference, **kwargs,
                msg=lambda m, name=c.name: f"{name} differs from {baseline}: {m}",
            )
    notes = () if device == "cuda" else (CPU_MEMORY_NOTE,)
    comparison = Comparison(device, baseline, tuple(measurements), clock.threads, len(arg_sets), notes,
                            load, load_end, limits=limits or NoiseLimits())
    _warn_if_noisy(comparison)
    return comparison


class _Candidate:
    """One candidate through the phases of ``compare``: first calls, warm-up, blocks."""

    def __init__(self, name: str, fn: Callable[..., Any], arg_sets: list[tuple[Any, ...]], root: str) -> None:
        self.name = name
        self.fn = fn
        self.arg_sets = arg_sets
        self.cache = tempfile.mkdtemp(dir=root)  # its own, empty: the cold first call fills it
        self.call = _rotating(fn, arg_sets)
        self.output: Any = None
        self.first = FirstCalls(FirstCall(0.0))
        self.stats = CompileStats(0, 0, (), 0, ())
        self.number = 1  # calls per timed block, set by calibration

    def first_calls(self, clock: Clock, device: str, reset: bool, warmup: int) -> None:
        """Cold and warm first calls (warm only when it compiled), and what Dynamo did on every input."""
        if reset and _is_compiled(self.fn):
            _warm_process(device)
        with inductor_cache_dir(self.cache):
            if reset:
                _forget_compiled()
            reset_compile_stats()
            cold, output = _timed_first_call(lambda: self.fn(*self.arg_sets[0]), clock.sync)
            self.output = _snapshot(output)
            self.warm_up(clock, warmup)
            self.stats = read_compile_stats()
            warm = None
            if cold.compiled:
                _forget_compiled()
                warm, _ = _timed_first_call(lambda: self.fn(*self.arg_sets[0]), clock.sync)
        self.first = FirstCalls(cold, warm)

    def warm_up(self, clock: Clock, warmup: int) -> None:
        """Every input set at least once (recompilations happen here, not while timing)."""
        with inductor_cache_dir(self.cache):
            for args in itertools.islice(itertools.cycle(self.arg_sets), max(warmup, len(self.arg_sets))):
                self.fn(*args)
            clock.sync()

    def measurement(self, device: str, clock: Clock, blocks: list[tuple[float, float | None]]) -> Measurement:
        samples = [t for t, _ in blocks]
        shares = [s for _, s in blocks if s is not None]
        stats = Stats.from_samples(samples, self.number)
        peak = clock.peak_memory(lambda: self.fn(*self.arg_sets[0]))
        return Measurement(self.name, device, self.first, stats, peak, self.stats,
                           statistics.median(shares) if shares else None)


def _interleaved(candidates: list[_Candidate], clock: Clock, min_run_time: float,
                 rounds: int) -> dict[str, list[tuple[float, float | None]]]:
    """Per candidate, one (seconds per call, CPU share) per round; the order rotates from round to round."""
    from perfblog.generator.verdict import MIN_BLOCKS

    rounds = max(rounds, MIN_BLOCKS)
    target = max(min_run_time / rounds, clock.min_block_s)
    for c in candidates:
        c.number = clock.calibrate(c.call, target)
    blocks: dict[str, list[tuple[float, float | None]]] = {c.name: [] for c in candidates}
    for r in range(rounds):
        for c in candidates[r % len(candidates):] + candidates[:r % len(candidates)]:
            blocks[c.name].append(clock.block(c.call, c.number))
    return blocks


def _load_average() -> float | None:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def _warn_if_noisy(comparison: Comparison) -> None:
    noise = comparison.noise()
    if noise:
        print(f"bench: noisy measurement, no verdict will rest on it: {'; '.join(noise)}", file=sys.stderr)


def _snapshot(output: Any) -> Any:
    """Copy the tensors of an output: CUDA-graph outputs are overwritten by the next replay."""
    import torch
    from torch.utils._pytree import tree_map

    return tree_map(lambda t: t.detach().clone() if isinstance(t, torch.Tensor) else t, output)


def _rotating(fn: Callable[..., Any], arg_sets: list[tuple[Any, ...]]) -> Callable[[], Any]:
    """A no-argument call that uses the next input set each time (one set: no rotation cost)."""
    if len(arg_sets) == 1:
        only = arg_sets[0]
        return lambda: fn(*only)
    cycle = itertools.cycle(arg_sets)
    return lambda: fn(*next(cycle))


def _refuse_all_zero(args: tuple[Any, ...], index: int) -> None:
    """All-zero inputs take shortcuts (denormal-free, sparse paths) and flatter a kernel: refuse them."""
    import torch

    for position, arg in enumerate(args):
        if isinstance(arg, torch.Tensor) and arg.numel() and not bool(arg.detach().ne(0).any()):
            raise ValueError(f"input set {index}, argument {position} is all zeros; use random data")


def _cuda_module() -> Any:
    """torch.cuda, behind a function so tests can hand the harness a fake."""
    import torch

    return torch.cuda


# --- whole runs in rounds -----------------------------------------------------------------------------


def interleave(runs: Mapping[str, Callable[[], Mapping[str, float]]], *, repeats: int = ROUNDS,
               device: str | None = None, threads: int | None = None, baseline: str | None = None,
               limits: NoiseLimits | None = None) -> dict[str, Comparison]:
    """Time whole runs the harness cannot split into calls (a model's prefill and decode loop).

    Each run returns seconds per metric ({"prefill": s, "decode": s per token}); the runs take turns
    ``repeats`` times (the order rotating), and each metric becomes a ``Comparison`` with the same
    intervals, verdicts and noise checks as ``compare``. Runs must be warmed up (compiled) before.
    """
    from perfblog.generator.verdict import MIN_BLOCKS

    device = device or target_device()
    names = list(runs)
    if not names:
        raise ValueError("nothing to compare")
    repeats = max(repeats, MIN_BLOCKS)
    sync = _syncer(device)
    samples: dict[str, list[Mapping[str, float]]] = {name: [] for name in names}
    shares: dict[str, list[float]] = {name: [] for name in names}
    with pinned_threads(device, threads) as pinned:
        load = _load_average()
        for r in range(repeats):
            for name in names[r % len(names):] + names[:r % len(names)]:
                sync()
                cpu, wall = time.process_time(), time.perf_counter()
                samples[name].append(runs[name]())
                sync()
                if device != "cuda":
                    shares[name].append((time.process_time() - cpu) / ((time.perf_counter() - wall) * pinned))
        load_end = _load_average()
    medians = {name: statistics.median(shares[name]) if shares[name] else None for name in names}
    comparisons = {}
    for metric in samples[names[0]][0]:
        comparisons[metric] = Comparison.of_samples(
            device, {name: [s[metric] for s in samples[name]] for name in names}, baseline=baseline,
            threads=pinned, cpu_shares=medians, loads=(load, load_end), limits=limits)
        _warn_if_noisy(comparisons[metric])
    return comparisons


# --- clocks -------------------------------------------------------------------------------------------


class Clock:
    """How one device is timed and synchronised."""

    threads: int = 0
    #: Blocks are grown until one takes at least this long, so the clock's overhead is negligible.
    min_block_s = 1e-3

    def sync(self) -> None:
        raise NotImplementedError

    def block(self, call: Callable[[], Any], number: int) -> tuple[float, float | None]:
        """Seconds per call over ``number`` calls, and the CPU share (None where it means nothing)."""
        raise NotImplementedError

    def calibrate(self, call: Callable[[], Any], target_s: float) -> int:
        """Calls per block so that a block takes about ``target_s`` (and at least ``min_block_s``)."""
        number = 1
        while number < 1 << 20:
            per_call, _ = self.block(call, number)
            elapsed = per_call * number
            if elapsed >= target_s:
                break
            grow = 10 if elapsed <= 0 else math.ceil(target_s / elapsed)
            number *= max(2, min(10, grow))
        return number

    def peak_memory(self, call: Callable[[], Any]) -> int | None:
        raise NotImplementedError


class CpuClock(Clock):
    """CPU blocks through ``torch.utils.benchmark.Timer.timeit`` with the pinned thread count."""

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def sync(self) -> None:
        """CPU work is synchronous."""

    def block(self, call: Callable[[], Any], number: int) -> tuple[float, float | None]:
        from torch.utils.benchmark import Timer

        timer = Timer(stmt="call()", globals={"call": call}, num_threads=self.threads)
        cpu, wall = time.process_time(), time.perf_counter()
        measured = timer.timeit(number)
        share = (time.process_time() - cpu) / ((time.perf_counter() - wall) * self.threads)
        return measured.median, min(share, 1.0)

    def peak_memory(self, call: Callable[[], Any]) -> int | None:
        return None


class CudaClock(Clock):
    """CUDA timing: events around blocks of calls, a synchronisation before every reading."""

    def __init__(self, cuda: Any) -> None:
        self.cuda = cuda
        self.threads = 1

    def sync(self) -> None:
        self.cuda.synchronize()

    def block(self, call: Callable[[], Any], number: int) -> tuple[float, float | None]:
        start = self.cuda.Event(enable_timing=True)
        end = self.cuda.Event(enable_timing=True)
        self.cuda.synchronize()
        start.record()
        for _ in range(number):
            call()
        end.record()
        self.cuda.synchronize()
        return start.elapsed_time(end) / 1e3 / number, None  # ms -> s

    def peak_memory(self, call: Callable[[], Any]) -> int | None:
        self.cuda.synchronize()
        self.cuda.reset_peak_memory_stats()
        call()
        self.cuda.synchronize()
        return int(self.cuda.max_memory_allocated())
