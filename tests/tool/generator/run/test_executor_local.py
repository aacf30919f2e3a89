"""The executor seam on this machine: `blog run -j N` runs behaviour-only snippets side by side, timing
snippets alone; an interrupted parallel run ends the kernels it started."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from executors import blog, engine, interval, overlap, site, snippet

from perfblog.generator import device
from perfblog.generator.errors import GeneratorError, SnippetError
from perfblog.generator.run import runner
from perfblog.generator.run.executor import Job, Request, Workload
from perfblog.generator.run.executors import EXECUTORS
from perfblog.generator.run.local import Local
from perfblog.generator.source.snippet import Purpose

CPU = device.cpu_class()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return site(tmp_path, monkeypatch)


def stored(project: Path, stem: str) -> tuple[float, float]:
    return interval(engine(project).results(stem)[CPU])


@pytest.mark.kernel
def test_j_runs_behaviour_snippets_side_by_side_and_a_timing_snippet_alone(project: Path) -> None:
    snippets = project / "snippets"
    (snippets / "measure.py").write_text(snippet(None, 2))
    (snippets / "check_a.py").write_text(snippet("behaviour", 2))
    (snippets / "check_b.py").write_text(snippet("behaviour", 2))
    assert blog("run", "--device", "cpu", "-j", "2") == 0
    timing, a, b = (stored(project, stem) for stem in ("measure", "check_a", "check_b"))
    assert overlap(a, b)  # side by side: the two 2 s cells overlapped
    assert not overlap(timing, a) and not overlap(timing, b)


@pytest.mark.kernel
def test_without_j_behaviour_snippets_run_one_after_another(project: Path) -> None:
    snippets = project / "snippets"
    (snippets / "check_a.py").write_text(snippet("behaviour", 1))
    (snippets / "check_b.py").write_text(snippet("behaviour", 1))
    assert blog("run", "--device", "cpu") == 0
    assert not overlap(stored(project, "check_a"), stored(project, "check_b"))


@pytest.mark.kernel
def test_a_parallel_failure_is_reported_and_the_others_are_stored(project: Path, capsys) -> None:
    snippets = project / "snippets"
    (snippets / "check_a.py").write_text(snippet("behaviour", 0))
    (snippets / "check_b.py").write_text(snippet("behaviour", 0).replace("time.sleep(0)", "1/0"))
    assert blog("run", "--device", "cpu", "-j", "2") == 1
    err = capsys.readouterr().err
    assert "check_b.py:9: cell 'main' raised ZeroDivisionError" in err
    assert "1 of 2 snippet(s) failed" in err
    assert (snippets / "_results" / "check_a" / f"{CPU}.json").is_file()
    assert not (snippets / "_results" / "check_b").exists()


@pytest.mark.kernel
def test_ending_all_runs_ends_a_kernel_running_in_another_thread(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text(snippet("behaviour", 600))
    from perfblog.generator.source import snippet as snippet_module

    job = Job(snippet_module.load(path, tmp_path), runner.RunOptions(device="cpu", device_class=CPU))
    outcomes: list[runner.RunResult] = []
    thread = threading.Thread(target=lambda: outcomes.append(runner.run(job.snippet, job.options)))
    thread.start()
    deadline = time.monotonic() + 120
    while not runner._LIVE and time.monotonic() < deadline:  # the kernel is up
        time.sleep(0.1)
    time.sleep(1)
    started = time.monotonic()
    runner.end_all()
    thread.join(60)
    assert time.monotonic() - started < 30 and outcomes
    assert not outcomes[0].ok and "the kernel died" in (outcomes[0].error or "")


@pytest.mark.kernel
def test_an_interrupted_parallel_run_ends_its_kernels_and_re_raises(tmp_path: Path, sigint_raises) -> None:
    from perfblog.generator.source import snippet as snippet_module

    jobs = []
    for stem in ("a", "b"):
        path = tmp_path / f"{stem}.py"
        path.write_text(snippet("behaviour", 120))
        options = runner.RunOptions(device="cpu", device_class=CPU)
        jobs.append(Job(snippet_module.load(path, tmp_path), options))

    class InterruptOnceRunning:
        def started(self, job: Job) -> None:
            pass

        def cell(self, job: Job, cell: object, done: int, total: int) -> None:
            pass

    batch = Local(CPU, workers=2).run(jobs, InterruptOnceRunning())
    timer = threading.Timer(8, lambda: os.kill(os.getpid(), signal.SIGINT))  # Ctrl-C, once both run
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        next(batch)
    timer.cancel()
    assert time.monotonic() - started < 60  # not the 120 s the cells asked for
    assert not runner._LIVE


def test_a_snippet_is_a_timing_snippet_unless_its_header_says_otherwise(tmp_path: Path) -> None:
    from perfblog.generator.source import snippet as snippet_module

    path = tmp_path / "s.py"
    path.write_text(snippet(None, 0))
    assert snippet_module.load(path).purpose is Purpose.TIMING
    path.write_text(snippet("behaviour", 0))
    assert snippet_module.load(path).purpose is Purpose.BEHAVIOUR
    path.write_text(snippet("sometimes", 0))
    with pytest.raises(SnippetError, match=r"s.py:1: blog.purpose must be one of timing, behaviour"):
        snippet_module.load(path)


def test_purpose_is_not_part_of_the_key(tmp_path: Path) -> None:
    from perfblog.generator.source import snippet as snippet_module

    path = tmp_path / "s.py"
    path.write_text(snippet(None, 0))
    key = snippet_module.load(path).key
    path.write_text(snippet("behaviour", 0))
    assert snippet_module.load(path).key == key


def test_j_below_one_and_cluster_options_on_the_local_executor_are_refused(project: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        blog("run", "-j", "0")
    assert exit_.value.code == 2
    assert "-j must be at least 1, not 0" in capsys.readouterr().err
    with pytest.raises(GeneratorError, match="--address and --device-class go with --executor ray"):
        EXECUTORS["local"].make(Request(address="ray://127.0.0.1:10001"), Workload(CPU, (), project, project))


def test_without_ray_installed_the_ray_executor_says_how_to_install_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    (project / "snippets" / "s.py").write_text(snippet(None, 0))
    install = r"needs Ray, which is not installed: pip install 'perfblog\[cluster\]'"
    with pytest.raises(GeneratorError, match=install):
        blog("run", "--executor", "ray")


def test_ray_options_are_refused_with_j(project: Path) -> None:
    with pytest.raises(GeneratorError, match="-j goes with the local executor"):
        EXECUTORS["ray"].make(Request(workers=2), Workload(CPU, (), project, project))


@pytest.mark.kernel
def test_an_undeclared_write_during_parallel_runs_fails_each_run_beside_it_but_declared_writes_do_not(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snippets = project / "snippets"
    stray = "open('../stray.txt', 'w').write('x')\n"  # the kernel runs in snippets/
    declared = "open('../b.out', 'w').write('x')\n"
    (snippets / "a.py").write_text(snippet("behaviour", 2, stray))
    (snippets / "b.py").write_text(snippet("behaviour", 2, declared).replace(
        "purpose: behaviour", "purpose: behaviour, writes: [b.out]"))
    (snippets / "c.py").write_text(snippet(None, 0))
    assert blog("run", "--device", "cpu", "-j", "2") == 1
    err = capsys.readouterr().err
    assert "snippets/a.py: the run changed files of the repository that the snippet does not declare: " \
           "stray.txt" in err
    assert "snippets/b.py: the run changed files of the repository that the snippet does not declare: " \
           "stray.txt" in err and "(b.py ran beside a.py" not in err
    assert "b.out" not in err.replace("writes: [b.out]", "")
    assert set(engine(project).results("c")) == {CPU}  # alone, it changed nothing
    assert not engine(project).results("a") and not engine(project).results("b")


@pytest.mark.kernel
def test_a_snippet_that_declares_its_writes_is_stored_and_reads_back(project: Path) -> None:
    declared = "open('../out.txt', 'w').write('x')\n"
    text = snippet("behaviour", 0, declared).replace("behaviour", "behaviour, writes: [out.txt]")
    (project / "snippets" / "w.py").write_text(text)
    assert blog("run", "--device", "cpu", "-j", "2") == 0
    assert engine(project).results("w")[CPU].options["writes"] == ["out.txt"]
