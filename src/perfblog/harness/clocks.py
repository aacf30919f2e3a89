"""How one device is timed: clocks for blocks of calls (CPU through ``torch.utils.benchmark``, CUDA through
events), synchronisation, and the CPU thread count the harness pins.

torch is imported inside functions so that importing the harness stays light.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

#: CPU threads the harness times with, unless a comparison asks for others (``BLOG_BENCH_THREADS``).
THREADS_ENV = "BLOG_BENCH_THREADS"
THREADS = 1


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


def syncer(device: str) -> Callable[[], None]:
    if device == "cuda":
        return cuda_module().synchronize
    return lambda: None


def cuda_module() -> Any:
    """torch.cuda, behind a function so tests can hand the harness a fake."""
    import torch

    return torch.cuda


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
