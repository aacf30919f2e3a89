"""The benchmark harness snippets import: compare callables on the same inputs, honestly.

Method, per candidate, in this order:

1. the first call is timed on its own (for a compiled function it includes compilation);
2. warm-up: every input set is used at least once, so recompilations happen before timing;
3. steady state: blocks of calls are timed, inputs rotating from call to call. On CPU the blocks come
   from ``torch.utils.benchmark.Timer.blocked_autorange`` (the thread count is the process's, not its
   default of one); on CUDA from CUDA events around each block followed by a synchronisation;
4. peak memory of one call: ``torch.cuda.max_memory_allocated`` after a reset on CUDA; on CPU there is
   no resettable peak counter for torch's allocator, so it is ``None`` rather than a guess;
5. graphs, graph breaks and their reasons from ``torch._dynamo.utils.counters`` (its ``graph_break`` and
   ``unimplemented`` categories together), recompilations and their reasons from Dynamo's compilation
   metrics (``torch._dynamo.explain`` under-reports breaks that leave an empty graph).

Statistics are median, interquartile range and number of blocks; speed-ups are ratios of medians.
``Comparison.record`` writes two tables: a compact one with Chinese headers for the post, and
``<name>.raw`` with every number in seconds and the full method, so nothing measured is lost.
torch is imported inside functions so that ``import perfblog.generator`` stays light.
"""

from __future__ import annotations

import itertools
import math
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perfblog.generator.target import target_device

#: Why CPU peak memory is not reported; recorded in table captions.
CPU_MEMORY_NOTE = "peak memory is not measured on CPU: torch's CPU allocator keeps no resettable peak"
#: The same, for the compact Chinese caption a post shows.
CPU_MEMORY_NOTE_ZH = "CPU 上不测峰值内存"


@dataclass(frozen=True)
class Stats:
    """Summary of per-call times (seconds), one sample per timed block."""

    median_s: float
    q1_s: float
    q3_s: float
    repeats: int
    number_per_repeat: int

    @property
    def iqr_s(self) -> float:
        return self.q3_s - self.q1_s

    @classmethod
    def from_samples(cls, samples: Sequence[float], number_per_repeat: int = 1) -> Stats:
        """Median and quartiles (the 'inclusive' method, as numpy's default linear quantiles)."""
        if not samples:
            raise ValueError("no timing samples")
        if len(samples) == 1:
            q1 = median = q3 = samples[0]
        else:
            q1, median, q3 = statistics.quantiles(samples, n=4, method="inclusive")
        return cls(median, q1, q3, len(samples), number_per_repeat)


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
class Measurement:
    """One candidate's numbers."""

    name: str
    device: str
    first_call_s: float
    timing: Stats
    peak_memory_bytes: int | None
    compile: CompileStats


@dataclass(frozen=True)
class Comparison:
    """All candidates measured on the same inputs; the first (or named) one is the baseline."""

    device: str
    baseline: str
    measurements: tuple[Measurement, ...]
    threads: int
    input_sets: int
    notes: tuple[str, ...] = field(default=())
    #: The 1-minute load average when measuring began: other work on the machine skews CPU numbers.
    load_average: float | None = None

    def __getitem__(self, name: str) -> Measurement:
        for measurement in self.measurements:
            if measurement.name == name:
                return measurement
        raise KeyError(f"no candidate named {name!r}; have {[m.name for m in self.measurements]}")

    def speedup(self, name: str, over: str | None = None) -> float:
        """How many times faster `name` is than `over` (default: the baseline), from medians."""
        reference = self[over or self.baseline].timing.median_s
        return reference / self[name].timing.median_s

    def rows(self) -> list[dict[str, Any]]:
        """One row per candidate, in microseconds, for a table."""
        return [
            {
                "candidate": m.name,
                "device": m.device,
                "first_call_s": round(m.first_call_s, 4),
                "median_us": round(m.timing.median_s * 1e6, 3),
                "iqr_us": round(m.timing.iqr_s * 1e6, 3),
                "repeats": m.timing.repeats,
                "calls_per_repeat": m.timing.number_per_repeat,
                "speedup": round(self.speedup(m.name), 3),
                "peak_mem_bytes": m.peak_memory_bytes,
                "graphs": m.compile.graphs,
                "graph_breaks": m.compile.graph_breaks,
                "recompiles": m.compile.recompiles,
                "break_reasons": m.compile.break_summary,
            }
            for m in self.measurements
        ]

    def caption(self) -> str:
        parts = [
            f"device {self.device}, {self.threads} thread{'s' * (self.threads != 1)}, "
            f"{self.input_sets} rotating input set(s);",
            f"median and IQR per call over the repeats; speed-up = median of {self.baseline} / median;",
            "first call timed apart (includes compilation)",
        ]
        if self.load_average is not None:
            parts.append(f"(1-min load average {self.load_average:.2f} on {os.cpu_count()} CPUs)")
        return "; ".join([" ".join(parts), *self.notes])

    def display_rows(self) -> list[dict[str, Any]]:
        """One row per candidate for a post: Chinese headers with units, numbers at a readable precision.

        Times are in one unit per column (the largest that keeps every value under 1000, or 10000 for
        first calls); the peak memory column appears only where it was measured.
        """
        unit, scale = _time_unit([m.timing.median_s for m in self.measurements])
        # First calls span orders of magnitude (eager vs compiling): seconds only from 10 s up.
        first_unit, first_scale = _time_unit([m.first_call_s for m in self.measurements], below=10_000)
        with_memory = any(m.peak_memory_bytes is not None for m in self.measurements)
        rows = []
        for m in self.measurements:
            row: dict[str, Any] = {
                "写法": m.name,
                f"首次调用（含编译，{first_unit}）": readable(m.first_call_s * first_scale),
                f"中位数（{unit}）": readable(m.timing.median_s * scale),
                f"IQR（{unit}）": readable(m.timing.iqr_s * scale),
                "重复次数": m.timing.repeats,
                "加速比": f"{self.speedup(m.name):.2f}×",
            }
            if with_memory:
                peak = m.peak_memory_bytes
                row["峰值显存（MiB）"] = None if peak is None else readable(peak / 2**20)
            rows.append(row)
        return rows

    def display_caption(self, caption: str | None = None) -> str:
        """A short Chinese caption: what was compared, the device, the thread count and the method."""
        parts = [
            f"设备 {self.device}，{self.threads} 线程，{self.input_sets} 组输入轮换",
            "首次调用单独计时（含编译）；其余为预热后每次调用的中位数与四分位距（IQR）",
            f"加速比 = {self.baseline} 的中位数 ÷ 本行的中位数",
        ]
        if self.device != "cuda":
            parts.append(CPU_MEMORY_NOTE_ZH)
        return "；".join([caption, *parts] if caption else parts) + "。"

    def record(self, name: str, caption: str | None = None) -> None:
        """Record the comparison twice: `name`, compact for the post, and `name.raw`, every number.

        The raw table keeps seconds, calls per repeat, graphs, breaks and their reasons, recompiles,
        and the full method in its caption (load average included), so nothing measured is lost.
        """
        from perfblog.generator.record import table

        table(name, self.display_rows(), caption=self.display_caption(caption))
        full = self.caption() if caption is None else f"{caption} ({self.caption()})"
        table(f"{name}.raw", self.rows(), caption=full)


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
) -> Comparison:
    """Measure every candidate on the same input sets (a list of argument tuples, rotated per call).

    With `check`, every candidate's first output must equal the baseline's (``torch.testing.assert_close``)
    so that a speed-up is never reported for a function that computes something else.
    With `reset`, Dynamo is reset before each candidate: its cache lives on the code object, so two
    ``torch.compile`` wrappers of one function with different options would otherwise share graphs,
    and the first call would not always include compilation.
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
    clock = CudaClock(_cuda_module()) if device == "cuda" else CpuClock(torch.get_num_threads())

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    measurements = []
    reference: Any = None
    for name, fn in candidates.items():
        if reset:
            torch._dynamo.reset()
        measurement, output = _measure(name, fn, arg_sets, clock, device, min_run_time, warmup)
        if check and name == baseline:
            reference = output
        measurements.append((measurement, output))
    if check:
        kwargs = {} if rtol is None and atol is None else {"rtol": rtol or 0.0, "atol": atol or 0.0}
        for measurement, output in measurements:
            torch.testing.assert_close(
                output, reference, **kwargs,
                msg=lambda m, name=measurement.name: f"{name} differs from {baseline}: {m}",
            )
    notes = () if device == "cuda" else (CPU_MEMORY_NOTE,)
    return Comparison(device, baseline, tuple(m for m, _ in measurements), clock.threads,
                      len(arg_sets), notes, load)


def _measure(
    name: str,
    fn: Callable[..., Any],
    arg_sets: list[tuple[Any, ...]],
    clock: Clock,
    device: str,
    min_run_time: float,
    warmup: int,
) -> tuple[Measurement, Any]:
    reset_compile_stats()
    clock.sync()
    start = time.perf_counter()
    output = fn(*arg_sets[0])
    clock.sync()
    first_call_s = time.perf_counter() - start
    output = _snapshot(output)
    for args in itertools.islice(itertools.cycle(arg_sets), max(warmup, len(arg_sets))):
        fn(*args)
    clock.sync()
    call = _rotating(fn, arg_sets)
    stats = clock.measure(call, min_run_time)
    peak = clock.peak_memory(lambda: fn(*arg_sets[0]))
    return Measurement(name, device, first_call_s, stats, peak, read_compile_stats()), output


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


class Clock:
    """How one device is timed and synchronised."""

    threads: int = 0

    def sync(self) -> None:
        raise NotImplementedError

    def measure(self, call: Callable[[], Any], min_run_time: float) -> Stats:
        raise NotImplementedError

    def peak_memory(self, call: Callable[[], Any]) -> int | None:
        raise NotImplementedError


class CpuClock(Clock):
    """CPU timing through torch.utils.benchmark, with the process's thread count."""

    min_repeats = 10

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def sync(self) -> None:
        """CPU work is synchronous."""

    def measure(self, call: Callable[[], Any], min_run_time: float) -> Stats:
        from torch.utils.benchmark import Timer

        timer = Timer(stmt="call()", globals={"call": call}, num_threads=self.threads)
        result = timer.blocked_autorange(min_run_time=min_run_time)
        samples = list(result.times)
        # On a loaded machine one slow block can use up min_run_time: top up to a usable sample.
        while len(samples) < self.min_repeats:
            samples.extend(timer.timeit(result.number_per_run).times)
        return Stats.from_samples(samples, result.number_per_run)

    def peak_memory(self, call: Callable[[], Any]) -> int | None:
        return None


class CudaClock(Clock):
    """CUDA timing: events around blocks of calls, a synchronisation before every reading."""

    #: Blocks are grown until one takes at least this long, so event overhead is negligible.
    min_block_s = 1e-3
    min_repeats = 10

    def __init__(self, cuda: Any) -> None:
        self.cuda = cuda
        self.threads = 1

    def sync(self) -> None:
        self.cuda.synchronize()

    def _block(self, call: Callable[[], Any], number: int) -> float:
        start = self.cuda.Event(enable_timing=True)
        end = self.cuda.Event(enable_timing=True)
        self.cuda.synchronize()
        start.record()
        for _ in range(number):
            call()
        end.record()
        self.cuda.synchronize()
        return start.elapsed_time(end) / 1e3  # ms -> s

    def measure(self, call: Callable[[], Any], min_run_time: float) -> Stats:
        number = 1
        while (elapsed := self._block(call, number)) < self.min_block_s and number < 1 << 20:
            number *= 2 if elapsed <= 0 else max(2, min(10, int(self.min_block_s / elapsed) + 1))
        samples: list[float] = []
        total = 0.0
        while total < min_run_time or len(samples) < self.min_repeats:
            block = self._block(call, number)
            samples.append(block / number)
            total += block
        return Stats.from_samples(samples, number)

    def peak_memory(self, call: Callable[[], Any]) -> int | None:
        self.cuda.synchronize()
        self.cuda.reset_peak_memory_stats()
        call()
        self.cuda.synchronize()
        return int(self.cuda.max_memory_allocated())

