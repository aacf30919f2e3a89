"""Where snippets execute: the seam between deciding what to run (the engine) and running it.

A ``Job`` is one snippet on one device class. An ``Executor`` runs a batch of jobs and yields each
``RunResult`` as it finishes; it never raises for a snippet that fails, and it never touches the store
(the engine stores what it yields, under the store's lock, one result at a time). ``execute`` is the
execution of one job on this machine, the runner in a fresh kernel: every executor ends in it, here or
on a cluster's node.

The executors are registered by name in ``executors.EXECUTORS`` (`blog run --executor NAME`); ``local.Local``
is the default. The rule that keeps measurements clean is the same for all: a timing snippet never
shares its device with another snippet while it runs; snippets whose header says
``blog: {purpose: behaviour}`` may.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from perfblog.generator.run import runner
from perfblog.generator.run.runner import Progress, RunOptions, RunResult
from perfblog.generator.source.snippet import Cell, Purpose, Snippet


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
class Workload:
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
