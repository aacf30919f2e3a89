"""What do intervals and verdicts cost? Their share of a measured snippet's time; the target is <= 2 %.

Runs the measuring part of two snippet-like workloads in this process, the way a snippet does:
``compare`` (compiled candidates included, cold and warm compile times, warm-up, interleaved rounds),
then ``record`` (the post's table and the raw table, both with the speed-up's interval) and one
``record_verdict`` per candidate. Every call of the bootstrap (``verdict.ratio_interval``) and of the
rule (``verdict.decide``) is timed; their total is divided by the workload's total. The kernel's
start-up and the snippet's other cells are left out of the denominator, so the share is an upper
bound of what a whole snippet pays. Records are sent nowhere (no kernel): their display is a no-op.

    .venv/bin/python bench/verdict_cost.py
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from perfblog.harness import compare, record, stats, verdict

TARGET = 0.02


class Stopwatch:
    """Wraps functions and adds up the time spent inside them."""

    def __init__(self) -> None:
        self.spent = 0.0
        self.calls = 0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - start
                self.calls += 1
        return timed


def demo() -> tuple[dict[str, Callable[..., Any]], list[tuple[Any, ...]], dict[str, Any]]:
    """The example post's comparison: a Python loop against torch.dot."""
    values = torch.rand(100_000)
    as_list = values.tolist()

    def python_loop(x: torch.Tensor) -> float:
        total = 0.0
        for v in as_list:
            total += v * v
        return total

    def torch_dot(x: torch.Tensor) -> float:
        return torch.dot(x, x).item()

    return {"loop": python_loop, "dot": torch_dot}, [(values,)], {"rtol": 1e-4, "atol": 0}


def gates() -> tuple[dict[str, Callable[..., Any]], list[tuple[Any, ...]], dict[str, Any]]:
    """The flagship's where/cond comparison: five candidates, three of them compiled."""
    def gate_if(x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return F.gelu(x) * 2
        return -x

    def gate_where(x: torch.Tensor) -> torch.Tensor:
        return torch.where(x.sum() > 0, F.gelu(x) * 2, -x)

    def gate_cond(x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.sum() > 0, lambda t: F.gelu(t) * 2, lambda t: -t, (x,))

    inputs = [(torch.randn(1 << 14) + shift,) for shift in (0.1, -0.1, 0.2, -0.2)]
    candidates = {"eager if": gate_if, "eager where": gate_where, "compiled if": torch.compile(gate_if),
                  "compiled where": torch.compile(gate_where, fullgraph=True),
                  "compiled cond": torch.compile(gate_cond, fullgraph=True)}
    return candidates, inputs, {}


def main() -> int:
    record._emit = lambda payload: None  # no kernel to display records in
    watch = Stopwatch()
    verdict.ratio_interval = watch.wrap(verdict.ratio_interval)
    stats.ratio_interval = verdict.ratio_interval  # the name ``Comparison`` calls
    verdict.decide = watch.wrap(verdict.decide)  # ``Judgement.verdict`` calls it in its own module
    print(f"torch={torch.__version__} load={os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    worst = 0.0
    for name, make in (("demo: loop vs torch.dot", demo), ("where/cond: 5 candidates, 3 compiled", gates)):
        candidates, inputs, kwargs = make()
        watch.spent, watch.calls = 0.0, 0
        start = time.perf_counter()
        result = compare.compare(candidates, inputs, device="cpu", min_run_time=0.3, **kwargs)
        result.record("timings", caption="cost")
        for candidate in list(candidates)[1:]:
            result.record_verdict(candidate.replace(" ", "_"), candidate)
        total = time.perf_counter() - start
        share = watch.spent / total
        worst = max(worst, share)
        print(f"  {name}: {total:.2f} s in all, {watch.spent * 1e3:.1f} ms in {watch.calls} interval and "
              f"verdict computations: {share:.2%} {'OK' if share <= TARGET else 'OVER 2%'}")
    print(f"  load average at the end {os.getloadavg()[0]:.2f}")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
