"""Worker processes a build shares: the seo plugin's cards are drawn and its pages audited in them while
MkDocs goes on rendering, so a first build's extra work lands on the other cores.

A pool costs its start-up, so tasks wait here until `start_at` of them do; a build with fewer never starts
one, and each task's result is then worked out in this process when it is asked for. A task whose worker
died (out of memory, killed) is worked out here too: a pool may make a build faster, never fail it.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Generic, TypeVar

T = TypeVar("T")

#: Tasks wait in this process until this many do; then a pool starts and takes them all.
START_AT = 12
#: The most workers a build starts: what they do (cards, audits) is about half of what the build's own
#: process does while they work, so more would wait idle, each holding its own parser and dictionary.
MOST = 4


def cores() -> int:
    """How many workers a build starts here: the cores this process may run on (not the machine's, which
    a container or `taskset` may deny it), at most MOST."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(usable, MOST))


class Task(Generic[T]):
    """One call, made in a worker process or, failing one, here when its result is asked for."""

    def __init__(self, function: Callable[..., T], args: tuple) -> None:
        self._function, self._args = function, args
        self._future: Future[T] | None = None
        self._done = False
        self._value: T | None = None

    def result(self) -> T:
        if not self._done:
            future, self._future = self._future, None
            try:
                self._value = future.result() if future is not None else self._function(*self._args)
            except (BrokenProcessPool, CancelledError):  # the worker is gone, or the pool: work it out here
                self._value = self._function(*self._args)
            self._done = True
            self._args = ()  # a page's HTML, say: not kept once it is done with
        return self._value  # type: ignore[return-value]

    @property
    def ready(self) -> bool:
        """Whether `result` would not wait."""
        return self._done or (self._future is not None and self._future.done())

    def send(self, pool: ProcessPoolExecutor) -> None:
        """Hand the call to `pool`."""
        self._future = pool.submit(self._function, *self._args)


class Workers:
    """A pool of `count` worker processes, started once `start_at` tasks wait (never with `count` < 2)."""

    def __init__(self, count: int, start_at: int = START_AT) -> None:
        self.count = count
        self.start_at = start_at
        self._waiting: list[Task] = []
        self._pool: ProcessPoolExecutor | None = None

    @property
    def started(self) -> bool:
        return self._pool is not None

    def run(self, function: Callable[..., T], *args: object) -> Task[T]:
        """`function(*args)` in a worker; `function` is a module's top-level function, its arguments and
        result picklable."""
        task: Task[T] = Task(function, args)
        self._waiting.append(task)
        if self._pool is None and self.count > 1 and len(self._waiting) >= self.start_at:
            methods = multiprocessing.get_all_start_methods()  # a fork of a process with threads may hang
            context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            self._pool = ProcessPoolExecutor(self.count, mp_context=context, initializer=end_with,
                                             initargs=(os.getpid(),))  # fmt: skip
        if self._pool is not None:
            for waiting in self._waiting:
                try:
                    waiting.send(self._pool)
                except BrokenProcessPool:  # left to be worked out here
                    break
            self._waiting.clear()
        return task

    def shutdown(self) -> None:
        """Stop the pool; tasks not yet asked for are worked out here if they are asked for later."""
        self._waiting.clear()
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


def end_with(build: int) -> None:
    """A worker ends when the build process `build` is gone (killed, say): a pool's idle workers would
    otherwise wait for work forever."""
    if os.name == "posix":  # signal 0 only asks whether the process exists (on Windows it would kill it)
        threading.Thread(target=_watch, args=(build,), daemon=True).start()


def _watch(build: int) -> None:
    while True:
        time.sleep(2)
        try:
            os.kill(build, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:  # it exists
            pass
