"""The first compiled call of a new interpreter: what a user waits for when a script starts.

A measurement inside the snippet's kernel has already paid the process's one-off costs (imports of
Dynamo and Inductor, the compiler's start-up), so its "cold" figure is cold for the cache only. Here each
first call runs in a child interpreter started with the kernel's own ``sys.executable``: once with an
empty Inductor cache (cold), once more in another new process with the cache the first one filled (warm
cache). The child times ``import torch`` too, so the three costs can be told apart.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass

from perfblog.harness import clocks
from perfblog.harness.target import target_device

#: What the child runs: import torch, the caller's setup, then one timed call, split by torch's metrics.
_CHILD = """
import json, sys, time
_start = time.perf_counter()
import torch
_import_s = time.perf_counter() - _start
torch.set_num_threads({threads})
{setup}
from torch._dynamo.utils import clear_compilation_metrics, get_compilation_metrics
_sync = torch.cuda.synchronize if {device!r} == "cuda" else (lambda: None)
clear_compilation_metrics()
_sync()
_start = time.perf_counter()
{call}
_sync()
_wall = time.perf_counter() - _start
_metrics = list(get_compilation_metrics())
_total = sum(getattr(m, "entire_frame_compile_time_s", None) or 0.0 for m in _metrics)
_backend = sum(getattr(m, "backend_compile_time_s", None) or 0.0 for m in _metrics)
print("\\n" + json.dumps({{"import_s": _import_s, "wall_s": _wall, "frames": len(_metrics),
                          "dynamo_s": max(_total - _backend, 0.0), "inductor_s": _backend}}))
"""


@dataclass(frozen=True)
class FreshCall:
    """One first call in a new process: its wall time, its Dynamo / Inductor split, the torch import."""

    wall_s: float
    dynamo_s: float
    inductor_s: float
    frames: int
    import_s: float


@dataclass(frozen=True)
class FreshCalls:
    """The first call of a new process with an empty Inductor cache (cold) and with a filled one (warm)."""

    cold: FreshCall
    warm: FreshCall


def fresh_first_calls(setup: str, call: str, *, device: str | None = None, threads: int | None = None,
                      python: str | None = None, timeout_s: float = 600.0) -> FreshCalls:
    """Time ``call`` (one statement, e.g. ``"compiled(x)"``) after ``setup`` in two new interpreters.

    ``setup`` is Python source that defines what ``call`` uses; torch is already imported. Both children
    share one fresh cache directory: the first fills it (cold), the second reads it (warm cache). The
    interpreter is ``python`` or this one's (``sys.executable``: in a snippet, the kernel's). A child that
    fails raises RuntimeError with the end of its stderr.
    """
    device = device or target_device()
    script = _CHILD.format(setup=textwrap.dedent(setup), call=textwrap.dedent(call).strip(), device=device,
                           threads=clocks.threads_for(device, threads))
    with tempfile.TemporaryDirectory(prefix="bench-fresh-") as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache,
               "TRITON_CACHE_DIR": os.path.join(cache, "triton")}
        cold, warm = (_child(python or sys.executable, script, env, timeout_s) for _ in range(2))
    return FreshCalls(cold, warm)


def _child(python: str, script: str, env: dict[str, str], timeout_s: float) -> FreshCall:
    """Run one child interpreter and read the figures it printed last."""
    done = subprocess.run([python, "-c", script], env=env, capture_output=True, text=True, timeout=timeout_s,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"fresh-process compile failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return FreshCall(**json.loads(done.stdout.strip().splitlines()[-1]))
