"""What torch's compiler did and what it cost: graphs, graph breaks and recompilations from Dynamo's
counters and compilation metrics, and first calls timed from an empty (cold) and a filled (warm) cache,
split into Dynamo tracing and backend compilation.

torch is imported inside functions so that importing the harness stays light.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from perfblog.harness import clocks
from perfblog.harness.target import target_device
from perfblog.harness.words import TABLE_WORDS, readable


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


def forget_compiled() -> None:
    """Dynamo's caches and Inductor's in-memory caches: a new process's state, minus its imports."""
    import torch

    torch._dynamo.reset()
    inductor_utils = sys.modules.get("torch._inductor.utils")
    if inductor_utils is not None:  # never imported: nothing of Inductor's is cached in memory
        clear = getattr(inductor_utils, "clear_caches", None) or inductor_utils.clear_inductor_caches
        clear()


_process_warmed: set[str] = set()


def warm_process(device: str) -> None:
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


def is_compiled(fn: Any) -> bool:
    """Whether ``fn`` came from ``torch.compile`` (a wrapped function or an OptimizedModule)."""
    if getattr(fn, "_torchdynamo_orig_callable", None) is not None:
        return True
    from torch._dynamo.eval_frame import OptimizedModule

    return isinstance(fn, OptimizedModule)


def timed_first_call(call: Callable[[], Any], sync: Callable[[], None]) -> tuple[FirstCall, Any]:
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
    device = device or target_device()
    sync = clocks.syncer(device)
    with clocks.pinned_threads(device, threads), contextlib.ExitStack() as stack:
        path = cache_dir or stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-cache-"))
        os.makedirs(path, exist_ok=True)
        if os.listdir(path):
            raise ValueError(f"{path}: a cold compile needs an empty cache directory")
        warm_process(device)
        with inductor_cache_dir(path):
            forget_compiled()
            reset_compile_stats()
            cold, _ = timed_first_call(call, sync)
            stats = read_compile_stats()
            forget_compiled()
            warm, _ = timed_first_call(call, sync)
    return FirstCalls(cold, warm if cold.compiled else None, stats)
