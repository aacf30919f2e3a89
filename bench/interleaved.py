"""Interleaved timing for the build benchmarks: two variants, warmed up, then timed in turn so machine noise
hits both alike; medians, spread and the ratio of medians for wall and CPU time."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

#: One timed run of a variant: (wall seconds, CPU seconds).
Timed = Callable[[], tuple[float, float]]


def mkdocs_build(cwd: Path, *args: str, **env: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one `mkdocs build` process; SystemExit if it fails."""
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **env}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"mkdocs build {' '.join(args)} in {cwd} failed:\n{done.stderr}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(variants: dict[str, Timed], repeats: int) -> dict[tuple[str, str], list[float]]:
    """Each variant once to warm up (file caches, bytecode), then ``repeats`` rounds of all of them."""
    for run in variants.values():
        run()
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeats):
        for name, run in variants.items():
            wall, cpu = run()
            samples.setdefault((name, "wall"), []).append(wall)
            samples.setdefault((name, "cpu"), []).append(cpu)
    return samples


def report(samples: dict[tuple[str, str], list[float]], baseline: str, candidate: str,
           target: float) -> dict[str, float]:
    """Print medians, IQR, min and max of each variant and the ratio candidate/baseline; the ratios."""
    ratios = {}
    width = max(len(baseline), len(candidate))
    for clock in ("wall", "cpu"):
        for name in (baseline, candidate):
            values = samples[(name, clock)]
            q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
            print(f"  {clock:4s} {name:{width}s} median {median:6.2f} s   IQR {q3 - q1:5.2f} s   "
                  f"min {min(values):6.2f} s   max {max(values):6.2f} s")
        ratios[clock] = (statistics.median(samples[(candidate, clock)])
                         / statistics.median(samples[(baseline, clock)]))
        print(f"  {clock:4s} ratio {candidate}/{baseline} (medians): {ratios[clock]:.3f}  "
              f"(target <= {target})")
    return ratios
