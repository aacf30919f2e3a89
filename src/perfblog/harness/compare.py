"""Comparing callables on the same inputs, honestly (``compare``), and whole runs in rounds (``interleave``).

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
imported inside functions so that importing the harness stays light.
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from perfblog.harness import clocks, compilation
from perfblog.harness.clocks import Clock, CpuClock, CudaClock
from perfblog.harness.compilation import CompileStats, FirstCall, FirstCalls
from perfblog.harness.stats import Comparison, Measurement, NoiseLimits, Stats
from perfblog.harness.target import target_device
from perfblog.harness.verdict import MIN_BLOCKS

#: Why CPU peak memory is not reported; recorded in table captions.
CPU_MEMORY_NOTE = "peak memory is not measured on CPU: torch's CPU allocator keeps no resettable peak"
#: Timing rounds: every candidate gets one block per round (at least ``verdict.MIN_BLOCKS``).
ROUNDS = 20


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

    with clocks.pinned_threads(device, threads) as pinned, \
            tempfile.TemporaryDirectory(prefix="bench-cache-") as root:
        clock = CudaClock(clocks.cuda_module()) if device == "cuda" else CpuClock(pinned)
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
        if reset and compilation.is_compiled(self.fn):
            compilation.warm_process(device)
        with compilation.inductor_cache_dir(self.cache):
            if reset:
                compilation.forget_compiled()
            compilation.reset_compile_stats()
            cold, output = compilation.timed_first_call(lambda: self.fn(*self.arg_sets[0]), clock.sync)
            self.output = _snapshot(output)
            self.warm_up(clock, warmup)
            self.stats = compilation.read_compile_stats()
            warm = None
            if cold.compiled:
                compilation.forget_compiled()
                warm, _ = compilation.timed_first_call(lambda: self.fn(*self.arg_sets[0]), clock.sync)
        self.first = FirstCalls(cold, warm)

    def warm_up(self, clock: Clock, warmup: int) -> None:
        """Every input set at least once (recompilations happen here, not while timing)."""
        with compilation.inductor_cache_dir(self.cache):
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


def interleave(runs: Mapping[str, Callable[[], Mapping[str, float]]], *, repeats: int = ROUNDS,
               device: str | None = None, threads: int | None = None, baseline: str | None = None,
               limits: NoiseLimits | None = None) -> dict[str, Comparison]:
    """Time whole runs the harness cannot split into calls (a model's prefill and decode loop).

    Each run returns seconds per metric ({"prefill": s, "decode": s per token}); the runs take turns
    ``repeats`` times (the order rotating), and each metric becomes a ``Comparison`` with the same
    intervals, verdicts and noise checks as ``compare``. Runs must be warmed up (compiled) before.
    """
    device = device or target_device()
    names = list(runs)
    if not names:
        raise ValueError("nothing to compare")
    repeats = max(repeats, MIN_BLOCKS)
    sync = clocks.syncer(device)
    samples: dict[str, list[Mapping[str, float]]] = {name: [] for name in names}
    shares: dict[str, list[float]] = {name: [] for name in names}
    with clocks.pinned_threads(device, threads) as pinned:
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
