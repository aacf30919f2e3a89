"""Interleaved timing for the build benchmarks: variants warmed up, then timed in turn so machine noise
hits them alike; medians, spread and the ratio of medians for wall time, CPU time and peak memory."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple


class Run(NamedTuple):
    """One process: wall and CPU seconds (user + system), and its peak resident memory in MiB."""

    wall: float
    cpu: float
    peak_mib: float


#: One timed run of a variant.
Timed = Callable[[], Run]
CLOCKS = ("wall", "cpu")


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run `cmd` and measure that process alone (os.wait4: its own rusage, not all children's)."""
    start = time.perf_counter()
    process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    errors = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} in {cwd} failed:\n{errors[-4000:]}")
    return Run(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def mkdocs_build(cwd: Path, *args: str, **env: str) -> Run:
    """One `mkdocs build` process; SystemExit if it fails."""
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **env}
    return run([sys.executable, "-m", "mkdocs", "build", "-q", *args], cwd, environment)


def measure(variants: dict[str, Timed], repeats: int) -> dict[tuple[str, str], list[float]]:
    """Each variant once to warm up (file caches, bytecode), then ``repeats`` rounds of all of them."""
    for timed in variants.values():
        timed()
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeats):
        for name, timed in variants.items():
            result = timed()
            for clock, value in zip(Run._fields, result, strict=True):
                samples.setdefault((name, clock.removesuffix("_mib")), []).append(value)
    return samples


def _spread(values: list[float]) -> tuple[float, float]:
    """(median, interquartile range)."""
    if len(values) < 2:
        return values[0], 0.0
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return median, q3 - q1


def report(samples: dict[tuple[str, str], list[float]], baseline: str, candidate: str,
           target: float) -> dict[str, float]:
    """Print medians, IQR, min and max of each variant and the ratio candidate/baseline of wall and CPU
    time; the ratios."""
    ratios = {}
    width = max(len(baseline), len(candidate))
    for clock in CLOCKS:
        for name in (baseline, candidate):
            values = samples[(name, clock)]
            median, iqr = _spread(values)
            print(f"  {clock:4s} {name:{width}s} median {median:6.2f} s   IQR {iqr:5.2f} s   "
                  f"min {min(values):6.2f} s   max {max(values):6.2f} s")
        ratios[clock] = (statistics.median(samples[(candidate, clock)])
                         / statistics.median(samples[(baseline, clock)]))
        print(f"  {clock:4s} ratio {candidate}/{baseline} (medians): {ratios[clock]:.3f}  "
              f"(target <= {target})")
    return ratios


def memory(samples: dict[tuple[str, str], list[float]], baseline: str, candidate: str,
           budget_mib: float) -> float:
    """Print the median peak memory of both and the difference; the difference in MiB."""
    base, cand = (statistics.median(samples[(name, "peak")]) for name in (baseline, candidate))
    for name, value in ((baseline, base), (candidate, cand)):
        values = samples[(name, "peak")]
        print(f"  peak {name:{max(len(baseline), len(candidate))}s} median {value:6.1f} MiB   "
              f"min {min(values):6.1f}   max {max(values):6.1f}")
    print(f"  peak {candidate} - {baseline}: {cand - base:+.1f} MiB ({cand / base:.2f}x; target <= "
          f"+{budget_mib:g} MiB)")
    return cand - base
