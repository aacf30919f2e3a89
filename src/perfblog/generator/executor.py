"""Where snippets execute: the seam between deciding what to run (the engine) and running it.

A ``Job`` is one snippet on one device class. An ``Executor`` runs a batch of jobs and yields each
``RunResult`` as it finishes; it never raises for a snippet that fails, and it never touches the store
(the engine stores what it yields, under the store's lock, one result at a time). ``execute`` is the
execution of one job on this machine, the runner in a fresh kernel: every executor ends in it, here or
on a cluster's node.

Executors are registered by name in ``EXECUTORS`` (`blog run --executor NAME`); ``Local`` is the default.
The rule that keeps measurements clean is the same for all: a timing snippet never shares its device
with another snippet while it runs; snippets whose header says ``blog: {purpose: behaviour}`` may.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from perfblog.generator import runner
from perfblog.generator.errors import GeneratorError
from perfblog.generator.runner import Progress, RunOptions, RunResult
from perfblog.generator.snippet import Cell, Purpose, Snippet


@dataclass(frozen=True)
class Job:
    """One snippet (as on disk, with its header options) to run on one device class."""

    snippet: Snippet
    options: RunOptions

    @property
    def purpose(self) -> Purpose:
        return self.snippet.purpose

    @property
    def label(self) -> str:
        """How messages name the job: the snippet and the device class."""
        return f"{self.snippet.stem} on {self.options.device_class}"


class Watch(Protocol):
    """How a caller follows a batch: a job started, a cell of it finished."""

    def started(self, job: Job) -> None: ...

    def cell(self, job: Job, cell: Cell, done: int, total: int) -> None: ...


class Unwatched:
    """A watch that ignores everything."""

    def started(self, job: Job) -> None:
        pass

    def cell(self, job: Job, cell: Cell, done: int, total: int) -> None:
        pass


class Executor(Protocol):
    """Runs jobs and yields each one's outcome as it finishes (in any order). Used as a context
    manager: what it connects to (a cluster) is held from entry to exit."""

    name: str
    here: bool  # runs jobs on this machine, in this repository (the engine then checks what they change)

    def device_classes(self) -> list[str]:
        """The device classes this executor runs jobs on."""
        ...

    def run(self, jobs: Sequence[Job], watch: Watch) -> Iterator[RunResult]: ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...


@dataclass(frozen=True)
class Scope:
    """What an executor serves: this machine's device class, the snippets `blog run` was given (as
    found; jobs load them afresh), their folder and the results dir (never shipped anywhere)."""

    device_class: str
    snippets: tuple[Snippet, ...]
    snippets_dir: Path
    results_dir: Path


@dataclass(frozen=True)
class Request:
    """What `blog run` asks of an executor: how many snippets at once on this machine (``-j``), the
    cluster's address and the device classes to fill (empty: every class the executor offers)."""

    workers: int = 1
    address: str | None = None
    device_classes: tuple[str, ...] = ()


def execute(job: Job, progress: Progress | None = None) -> RunResult:
    """Run one job on this machine: the snippet's cells in a fresh kernel (see ``runner``)."""
    return runner.run(job.snippet, job.options, progress)


def refused(outcome: RunResult, why: str) -> RunResult:
    """A run that succeeded but whose result is not to be stored, and why (an undeclared change)."""
    return replace(outcome, ok=False, result=None, images={}, error=f"{why}; its result is not stored")


def _progress(job: Job, watch: Watch) -> Progress:
    return lambda cell, done, total: watch.cell(job, cell, done, total)


@dataclass
class Local:
    """This machine, on its one device class: timing snippets one at a time with nothing else running,
    then behaviour-only snippets ``workers`` at a time (each in its own kernel, from its own thread)."""

    device_class: str
    workers: int = 1
    name: str = "local"
    here: bool = True

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise GeneratorError(f"-j {self.workers}: the number of parallel snippets must be at least 1")

    def __enter__(self) -> Local:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def device_classes(self) -> list[str]:
        return [self.device_class]

    def run(self, jobs: Sequence[Job], watch: Watch) -> Iterator[RunResult]:
        alone = [j for j in jobs if self.workers == 1 or j.purpose is Purpose.TIMING]
        shared = [j for j in jobs if j not in alone]
        for job in alone:
            watch.started(job)
            yield execute(job, _progress(job, watch))
        if shared:
            yield from _parallel(shared, self.workers, lambda job: execute(job, _progress(job, watch)), watch)


def _parallel(jobs: Sequence[Job], workers: int, one: Callable[[Job], RunResult],
              watch: Watch) -> Iterator[RunResult]:
    """``one(job)`` for every job, ``workers`` at a time, each outcome as it finishes. An interrupt
    (Ctrl-C, or SIGTERM turned into one) ends the kernels still running before it propagates."""
    pending = list(jobs)
    running: dict[Future[RunResult], Job] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="blog-run") as pool:
        try:
            while pending or running:
                while pending and len(running) < workers:
                    job = pending.pop(0)
                    watch.started(job)  # from this thread only, in submission order
                    running[pool.submit(one, job)] = job
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    running.pop(future)
                    yield future.result()
        except BaseException:
            pending.clear()
            runner.end_all()
            raise


def _local(request: Request, scope: Scope) -> Executor:
    if request.address or request.device_classes:
        raise GeneratorError("--address and --device-class go with --executor ray; "
                             "the local executor runs on this machine's device class")
    return Local(scope.device_class, request.workers)


def _ray(request: Request, scope: Scope) -> Executor:
    from perfblog.generator import cluster  # imports Ray only when it connects

    if request.workers != 1:
        raise GeneratorError("-j goes with the local executor; on Ray, the cluster's resources decide how "
                             "many snippets run at once")
    return cluster.RayExecutor(scope, address=request.address, requested=request.device_classes)


@dataclass(frozen=True)
class Kind:
    """An executor `blog run --executor` can choose: how it is made, and what it is for."""

    make: Callable[[Request, Scope], Executor]
    help: str


#: Executors by the name `blog run --executor` takes.
EXECUTORS: dict[str, Kind] = {
    "local": Kind(_local, "this machine (the default); -j N runs behaviour-only snippets N at a time"),
    "ray": Kind(_ray, "a Ray cluster (pip install 'perfblog[cluster]'): every device class its nodes offer"),
}
