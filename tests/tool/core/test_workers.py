"""Worker processes a build shares: a pool starts only when enough work waits, and a pool can make a build
faster, never fail it."""

from __future__ import annotations

import os
import subprocess
import sys

from perfblog.core import workers
from perfblog.core.workers import Workers


def square(number: int) -> int:
    return number * number


def pid(_: int) -> int:
    return os.getpid()


def dies_in_a_worker(parent: int) -> int:
    """Kills the worker it runs in (as the out-of-memory killer would); in the build process, answers."""
    if os.getpid() != parent:
        os._exit(1)
    return 7


def test_tasks_wait_here_until_enough_do_and_then_run_in_worker_processes():
    few = Workers(2, start_at=3)
    tasks = [few.run(pid, n) for n in range(2)]
    assert not few.started and {t.result() for t in tasks} == {os.getpid()}  # worked out here, when asked
    pool = Workers(2, start_at=3)
    tasks = [pool.run(square, n) for n in range(6)] + [pool.run(pid, 0)]
    try:
        assert pool.started
        assert [t.result() for t in tasks[:6]] == [0, 1, 4, 9, 16, 25]
        assert tasks[6].result() != os.getpid()
    finally:
        pool.shutdown()


def test_a_build_starts_a_worker_for_each_core_it_may_run_on_up_to_a_few(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    assert workers.cores() == workers.MOST
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    assert workers.cores() == 1


def test_one_core_starts_no_pool():
    single = Workers(1, start_at=1)
    assert single.run(square, 3).result() == 9 and not single.started


def test_a_task_whose_worker_died_is_worked_out_here():
    pool = Workers(2, start_at=1)
    try:
        assert pool.run(dies_in_a_worker, os.getpid()).result() == 7
    finally:
        pool.shutdown()
    after = pool.run(square, 4)  # a pool shut down is started again for later work
    try:
        assert after.result() == 16
    finally:
        pool.shutdown()


def test_a_worker_ends_when_its_build_is_gone():
    """A build killed mid-way leaves no pool worker waiting for work forever."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                           text=True, check=True)  # fmt: skip
    gone = int(child.stdout)  # a process that has ended
    code = f"import time; from perfblog.core.workers import end_with; end_with({gone}); time.sleep(30)"
    worker = subprocess.run([sys.executable, "-c", code], timeout=20, check=False)
    assert worker.returncode == 0
