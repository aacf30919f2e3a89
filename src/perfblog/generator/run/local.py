"""The local executor: this machine, on its one device class (`blog run`, `-j N`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from perfblog.generator.errors import GeneratorError
from perfblog.generator.run import runner
from perfblog.generator.run.executor import Job, Watch, execute
from perfblog.generator.run.runner import Progress, RunResult
from perfblog.generator.source.snippet import Purpose


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


def _progress(job: Job, watch: Watch) -> Progress:
    return lambda cell, done, total: watch.cell(job, cell, done, total)
