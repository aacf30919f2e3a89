"""Is the harness (perfblog.harness) accurate? Time the same operations with it and with a
different timer, and fail when they disagree.

CPU: the harness times blocks with torch.utils.benchmark; the reference here is an independent loop
over time.perf_counter_ns (its own block sizing, the garbage collector off during a block, the same
pinned thread count), so a fault in the harness's timer, its block calibration or its statistics
shows up as a ratio away from 1.
CUDA (when a GPU is present): the reference is triton.testing.do_bench (median mode).
The two are interleaved over several rounds so that machine noise hits both alike (who goes first
alternates); the script prints each median, the median over rounds of the paired ratio harness /
reference and the load average, and exits 1 when a ratio is outside 1 +/- 5%.

    .venv/bin/python bench/harness_accuracy.py [--rounds 21] [--threads 1]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

from perfblog.harness import clocks, compare

TOLERANCE = 0.05
#: Reference blocks on CPU: at least this long, and this many.
BLOCK_S = 0.01
BLOCKS = 20


def cpu_cases() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    x = torch.randn(1 << 16)
    a, b = torch.randn(384, 384), torch.randn(384, 384)
    return {
        "elementwise gelu(2x+1)*sigmoid(x), n=65536": (
            lambda t: torch.nn.functional.gelu(2 * t + 1) * torch.sigmoid(t), (x,)),
        "matmul 384x384 fp32": (torch.mm, (a, b)),
    }


def cuda_cases() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    x = torch.randn(1 << 24, device="cuda")
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    return {
        "elementwise gelu(2x+1)*sigmoid(x), n=16M": (
            lambda t: torch.nn.functional.gelu(2 * t + 1) * torch.sigmoid(t), (x,)),
        "matmul 4096x4096 fp16": (torch.mm, (a, b)),
    }


def reference_cpu(fn: Callable[..., Any], args: tuple[Any, ...], min_run_time: float) -> float:
    """Median seconds per call from a plain perf_counter_ns loop: no torch.utils.benchmark involved."""
    for _ in range(3):
        fn(*args)
    number = 1
    while True:
        start = time.perf_counter_ns()
        for _ in range(number):
            fn(*args)
        elapsed = (time.perf_counter_ns() - start) / 1e9
        if elapsed >= BLOCK_S:
            break
        number *= 2
    samples = []
    deadline = time.perf_counter() + min_run_time
    while len(samples) < BLOCKS or time.perf_counter() < deadline:
        gc.disable()
        try:
            start = time.perf_counter_ns()
            for _ in range(number):
                fn(*args)
            samples.append((time.perf_counter_ns() - start) / 1e9 / number)
        finally:
            gc.enable()
    return statistics.median(samples)


def reference_cuda(fn: Callable[..., Any], args: tuple[Any, ...], min_run_time: float) -> float:
    import triton.testing

    ms = triton.testing.do_bench(lambda: fn(*args), rep=int(min_run_time * 1e3), return_mode="median")
    return ms / 1e3


def harness(fn: Callable[..., Any], args: tuple[Any, ...], device: str, min_run_time: float) -> float:
    comparison = compare.compare({"op": fn}, [args], device=device, min_run_time=min_run_time, check=False,
                               reset=False)
    return comparison["op"].timing.median_s


Timer = Callable[[Callable[..., Any], tuple[Any, ...], float], float]


def run(device: str, rounds: int, min_run_time: float,
        measure: Callable[[Callable[..., Any], tuple[Any, ...], str, float], float] = harness,
        reference: Timer | None = None) -> bool:
    """Compare ``measure`` (the harness) with the reference on every case; False when any is outside 5%."""
    cases = cuda_cases() if device == "cuda" else cpu_cases()
    reference = reference or (reference_cuda if device == "cuda" else reference_cpu)
    tool = "triton.testing.do_bench" if device == "cuda" else "a perf_counter_ns loop"
    load = os.getloadavg()[0]
    print(f"device={device} threads={torch.get_num_threads()} torch={torch.__version__} rounds={rounds} "
          f"load={load:.2f} on {os.cpu_count()} CPUs")
    ok = True
    for label, (fn, args) in cases.items():
        ours, theirs = [], []
        for round_ in range(rounds):
            # Alternate who goes first, so a slow spell does not always land on the same side.
            if round_ % 2:
                theirs.append(reference(fn, args, min_run_time))
            ours.append(measure(fn, args, device, min_run_time))
            if not round_ % 2:
                theirs.append(reference(fn, args, min_run_time))
        mine, ref = statistics.median(ours), statistics.median(theirs)
        # Each round's pair ran back to back: the median of paired ratios resists load from other work.
        ratio = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
        within = abs(ratio - 1) <= TOLERANCE
        ok &= within
        print(f"  {label}: harness {mine * 1e6:.2f} us, {tool} {ref * 1e6:.2f} us (medians over rounds, "
              f"ratio {mine / ref:.3f}); median paired ratio {ratio:.3f} {'OK' if within else 'OUT OF 5%'}")
    print(f"  load average at the end {os.getloadavg()[0]:.2f}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--min-run-time", type=float, default=0.2)
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads for both sides (default 1, as the harness pins them)")
    options = parser.parse_args()
    os.environ[clocks.THREADS_ENV] = str(options.threads)
    torch.set_num_threads(options.threads)
    ok = run("cpu", options.rounds, options.min_run_time)
    if torch.cuda.is_available():
        ok &= run("cuda", options.rounds, options.min_run_time)
    else:
        print("no CUDA device: the triton.testing.do_bench comparison was not run")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
