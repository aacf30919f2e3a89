"""The results store, the lock, modes and device preference, through the engine and the `blog` commands."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from perfblog.generator import commands, device, probe, resolve
from perfblog.generator.engine import Engine, Settings
from perfblog.generator.errors import GeneratorError, LockError
from perfblog.generator.resolve import Mode
from perfblog.generator.result import Provenance, Result
from perfblog.generator.store import Store

SNIPPET = ('# %% [markdown]\n# prose\n\n'
           '# %% name="main"\nfrom perfblog.generator import glue\nglue("n", 7)\nprint("hi")\n')
GPU = "cuda-nvidia-h200"
CPU = device.cpu_class()


def blog(*argv: str) -> int:
    """The snippet commands of `blog`, in-process."""
    parser = argparse.ArgumentParser(prog="blog")
    commands.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return int(args.handler(args) or 0)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")  # a site: `blog` finds its folders through it
    (tmp_path / "docs").mkdir()
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "s.py").write_text(SNIPPET)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv(resolve.MODE_ENV, raising=False)
    return tmp_path


def engine(project: Path, mode: str = "auto") -> Engine:
    snippets = project / "snippets"
    return Engine(Settings(snippets_dir=snippets, results_dir=snippets / "_results", mode=mode, device="cpu"))


def fake_result(eng: Engine, device_class: str, ran_at: str, stale: bool = False) -> Path:
    """A hand-written result file, as another machine would have committed it."""
    snip = eng.snippet("s")
    h200 = {"name": "NVIDIA H200", "driver": "570.86", "cuda": "12.8", "capability": "9.0"}
    result = {"snippet": "s", "key": "0" * 64 if stale else snip.key, "hashes": snip.hashes.to_json(),
              "status": "ok", "device_class": device_class,
              "cells": [{"name": "main", "source": "", "outputs": [], "wall_s": 1.0, "raises": False,
                         "hide": False, "line": 4}],
              "values": {"n": {"kind": "value", "name": "n", "value": 99, "unit": None, "cell": "main"}},
              "tables": {}, "charts": {},
              "provenance": {"device": "NVIDIA H200", "cpu": "Intel Xeon", "cores": 16, "gpu": h200,
                             "python": "3.12.3", "torch": "2.11.0", "triton": "3.6.0", "git_commit": None,
                             "git_dirty": None, "ran_at": ran_at, "duration_s": 1.0}}
    return eng.store.save(Result.from_json(result), {})


@pytest.mark.kernel
def test_result_file_is_sorted_json_written_without_leftovers(project: Path) -> None:
    eng = engine(project)
    outcome = eng.run(eng.snippet("s"))
    assert outcome.ok, outcome.error
    path = project / "snippets" / "_results" / "s" / f"{CPU}.json"
    text = path.read_text()
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert data["values"]["n"]["value"] == 7 and data["status"] == "ok"
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


@pytest.mark.kernel
def test_failed_run_never_replaces_a_good_result(project: Path) -> None:
    eng = engine(project)
    assert eng.run(eng.snippet("s")).ok
    stored = eng.store.path("s", CPU)
    before = stored.read_bytes()
    (project / "snippets" / "s.py").write_text(SNIPPET.replace('print("hi")', 'raise SystemError("broken")'))
    outcome = eng.run(eng.snippet("s"))
    assert not outcome.ok and "cell 'main' raised SystemError: broken" in outcome.error
    assert stored.read_bytes() == before
    assert eng.shown(eng.snippet("s")).state == "stale"


@pytest.mark.kernel
def test_blog_run_reports_a_failure_keeps_the_old_result_and_exits_1(project: Path, capsys) -> None:
    assert blog("run", "--device", "cpu") == 0
    (project / "snippets" / "s.py").write_text(SNIPPET.replace('print("hi")', "1/0"))
    assert blog("run", "--device", "cpu") == 1
    err = capsys.readouterr().err
    assert "s.py:7: cell 'main' raised ZeroDivisionError" in err
    assert f"the previous result snippets/_results/s/{CPU}.json was kept" in err


def test_a_second_lock_holder_fails_fast_with_a_clear_message(project: Path) -> None:
    store = Store(project / "snippets" / "_results")
    with store.lock():
        busy = r"locked by pid \d+ \(another `blog run`"
        with pytest.raises(LockError, match=busy), Store(store.root).lock():
            pass
        done = subprocess.run([sys.executable, "-m", "perfblog.core.cli", "run", "--device", "cpu"],
                              capture_output=True, text=True, timeout=120, cwd=project)
    assert done.returncode == 2
    assert "is locked by pid" in done.stderr
    # Released, it is usable again, and re-entrant for its holder (`blog run` holds it for the whole run
    # and takes it again around each snippet), but not for another thread.
    with store.lock(), store.lock():
        other = ThreadPoolExecutor(1).submit(lambda: store.lock().__enter__())
        with pytest.raises(LockError):
            other.result(timeout=30)


@pytest.mark.kernel
def test_a_second_blog_run_fails_fast_even_between_the_first_runs_snippets(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "snippets" / "t.py").write_text(SNIPPET)
    second: list[subprocess.CompletedProcess[str]] = []
    run_one = Engine.run

    def run_then_start_another_blog_run(self: Engine, snip: Any, progress: Any = None) -> Any:
        outcome = run_one(self, snip, progress)
        if not second:  # the first snippet is stored, the second not yet started
            command = [sys.executable, "-m", "perfblog.core.cli", "run", "--device", "cpu"]
            second.append(subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=project))
        return outcome

    monkeypatch.setattr(Engine, "run", run_then_start_another_blog_run)
    assert blog("run", "--device", "cpu") == 0
    assert second[0].returncode == 2, second[0].stderr
    assert "is locked by pid" in second[0].stderr
    assert all(engine(project).store.path(stem, CPU).is_file() for stem in ("s", "t"))


def test_mode_from_environment_wins_over_configuration() -> None:
    assert resolve.mode("auto", {}) is Mode.AUTO
    assert resolve.mode("auto", {resolve.MODE_ENV: "frozen"}) is Mode.FROZEN
    with pytest.raises(GeneratorError, match=r"BLOG_EXEC_MODE='sometimes' is not a mode "
                                             r"\(choose from auto, frozen, force, off\)"):
        resolve.mode("auto", {resolve.MODE_ENV: "sometimes"})


def test_modes_are_an_enum_of_four_whose_values_are_their_names_in_configuration() -> None:
    assert [m.value for m in Mode] == ["auto", "frozen", "force", "off"]
    assert Mode("frozen") is Mode.FROZEN and Mode.OFF == "off" and f"mode {Mode.FORCE}" == "mode force"
    assert [m for m in Mode if m.executes] == [Mode.AUTO, Mode.FORCE]
    assert [m for m in Mode if not m.shows_outputs] == [Mode.OFF]
    assert Settings(Path("s"), Path("r"), mode="off").mode is Mode.OFF  # a name given is the mode


def test_modes_decide_what_runs(project: Path) -> None:
    eng = engine(project)
    snip = eng.snippet("s")
    assert [eng.needs_run(snip, m) for m in Mode] == [True, False, True, False]  # missing
    fake_result(eng, CPU, "2026-11-30T10:00:00Z")
    assert [eng.needs_run(snip, m) for m in Mode] == [False, False, True, False]  # fresh
    fake_result(eng, CPU, "2026-11-30T10:00:00Z", stale=True)
    assert [eng.needs_run(snip, m) for m in Mode] == [True, False, True, False]  # stale


@pytest.mark.kernel
def test_fresh_gpu_result_is_shown_by_a_cpu_machine_and_never_overwritten(project: Path, capsys) -> None:
    eng = engine(project)
    gpu_file = fake_result(eng, GPU, "2026-11-01T00:00:00Z")
    before = gpu_file.read_bytes()
    snip = eng.snippet("s")
    assert not eng.needs_run(snip)
    assert eng.shown(snip).device_class == GPU
    assert blog("run") == 0  # auto: the GPU result is fresh, nothing runs
    assert "skip s (fresh result exists" in capsys.readouterr().err
    assert not eng.store.path("s", CPU).exists()
    assert blog("run", "--force", "--device", "cpu") == 0  # forced: measured on the CPU, filed apart
    assert eng.store.path("s", CPU).exists() and gpu_file.read_bytes() == before
    assert eng.shown(eng.snippet("s")).device_class == GPU  # a fresh GPU result still wins


def test_stale_gpu_result_yields_to_fresh_cpu_then_newest_stale(project: Path) -> None:
    eng = engine(project)
    fake_result(eng, GPU, "2026-11-01T00:00:00Z", stale=True)
    fake_result(eng, CPU, "2026-10-01T00:00:00Z")
    snip = eng.snippet("s")
    assert eng.shown(snip).device_class == CPU
    fake_result(eng, CPU, "2026-10-01T00:00:00Z", stale=True)
    shown = eng.shown(snip)
    assert (shown.device_class, shown.state) == (GPU, "stale")


@pytest.mark.kernel
def test_blog_status_lists_states_and_exits_1_on_stale_or_missing(project: Path, capsys) -> None:
    assert blog("status") == 1
    assert "missing" in capsys.readouterr().out
    assert blog("run", "--device", "cpu") == 0
    assert blog("status") == 0
    out = capsys.readouterr().out
    assert "fresh" in out and CPU in out
    (project / "snippets" / "s.py").write_text(SNIPPET.replace('print("hi")', 'print("bye")'))
    assert blog("status") == 1
    assert "code of cell 'main' changed" in capsys.readouterr().out
    assert blog("show", "s") == 1
    assert "stale" in capsys.readouterr().out


def test_blog_status_shows_a_malformed_snippet_with_its_line_beside_the_others_and_exits_2(
    project: Path, capsys
) -> None:
    (project / "snippets" / "bad.py").write_text('# %% name="x"\nx = (\n')
    assert blog("status") == 2
    out = capsys.readouterr().out
    assert "malformed" in out and "snippets/bad.py:2: syntax error in cell 'x'" in out
    assert "missing" in out  # the good snippet's row is still there


def test_unknown_snippet_is_bad_input(project: Path) -> None:
    with pytest.raises(GeneratorError, match="no snippet 'nope'"):
        blog("run", "nope")


def test_atomic_writes_get_the_mode_an_ordinary_write_would(tmp_path: Path) -> None:
    """Not mkstemp's 0600: a key file or report written into the site must stay readable once deployed."""
    from perfblog.core.fsio import atomic_write

    atomic_write(tmp_path / "key.txt", b"k")
    (tmp_path / "plain.txt").write_bytes(b"k")
    assert (tmp_path / "key.txt").stat().st_mode == (tmp_path / "plain.txt").stat().st_mode


def test_this_machines_device_class_comes_from_the_registry_without_torch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(device, "gpu_name", lambda: "NVIDIA H200")  # what nvidia-smi would say
    assert device.resolve("auto") == (device.CUDA, GPU)
    assert device.resolve("cpu") == (device.CPU, CPU)
    monkeypatch.setattr(device, "gpu_name", lambda: None)
    assert device.resolve("auto") == (device.CPU, CPU)
    with pytest.raises(GeneratorError, match=r"^--device cuda: no NVIDIA GPU found \(nvidia-smi lists"):
        device.resolve("cuda")
    with pytest.raises(GeneratorError, match=r"unknown device 'tpu' \(choose from auto, cpu, cuda\)"):
        device.resolve("tpu")
    assert device.DEVICES == ("auto", "cpu", "cuda")


def test_each_kind_says_what_its_kernel_needs_and_how_it_ranks() -> None:
    cuda, cpu = device.CUDA, device.CPU
    assert (cuda.torch_device, dict(cuda.kernel_env), cuda.accelerator) == ("cuda", {}, True)
    hidden = {"CUDA_VISIBLE_DEVICES": ""}  # torch in a CPU run's kernel must not use a GPU
    assert (cpu.torch_device, dict(cpu.kernel_env), cpu.accelerator) == ("cpu", hidden, False)
    assert device.kind(GPU) is device.CUDA and device.kind(CPU) is device.CPU
    assert device.kind("rocm-mi300x") is None  # a kind this version does not know
    classes = ["cpu-aarch64", "rocm-mi300x", CPU, GPU]
    assert device.preferred_order(classes, CPU) == [GPU, CPU, "cpu-aarch64", "rocm-mi300x"]


def test_a_new_device_kind_is_one_entry_in_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    rocm = device.DeviceKind(name="rocm", rank=0, detect=lambda: "mi300x", torch_device="cuda",
                             probe=probe.cuda_gpu, label="ROCm", absent="no AMD GPU found")
    monkeypatch.setattr(device, "KINDS", {**device.KINDS, "rocm": rocm})
    monkeypatch.setattr(device, "gpu_name", lambda: None)
    assert device.resolve("auto") == (rocm, "rocm-mi300x")
    assert device.resolve("cpu") == (device.CPU, CPU)
    assert device.kind("rocm-mi300x") is rocm
    assert device.preferred_order([CPU, "rocm-mi300x"], CPU) == ["rocm-mi300x", CPU]


def test_the_kernel_probe_of_a_cpu_run_describes_the_cpu_and_the_versions() -> None:
    seen = probe.describe("cpu")
    assert seen["gpu"] is None and seen["device"] == seen["cpu"] == probe.cpu_model()
    assert seen["python"] == platform.python_version()
    assert seen["torch"] == importlib.metadata.version("torch")
    stamped = {**seen, "git_commit": None, "git_dirty": None, "ran_at": "2026-12-01T00:00:00Z",
               "duration_s": 1.0}
    assert Provenance.from_json(stamped).to_json() == stamped  # the probe's part fits the result format
