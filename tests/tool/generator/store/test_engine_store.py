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

from perfblog.generator import commands, device
from perfblog.generator.errors import GeneratorError, LockError
from perfblog.generator.run.engine import Engine, Settings
from perfblog.generator.store import codec, resolve
from perfblog.generator.store.resolve import Mode
from perfblog.generator.store.result import Provenance, Result
from perfblog.generator.store.store import Store
from perfblog.harness import probe

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


def fake_result(eng: Engine, device_class: str, ran_at: str, stale: bool = False, stem: str = "s") -> Path:
    """A hand-written result file, as another machine would have committed it."""
    snip = eng.snippet(stem)
    h200 = {"name": "NVIDIA H200", "driver": "570.86", "cuda": "12.8", "capability": "9.0"}
    result = {"snippet": stem, "key": "0" * 64 if stale else snip.key, "hashes": codec.write(snip.hashes),
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
        done = subprocess.run([sys.executable, "-m", "perfblog.cli", "run", "--device", "cpu"],
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
            command = [sys.executable, "-m", "perfblog.cli", "run", "--device", "cpu"]
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


def test_a_cpu_run_never_demotes_a_page_from_gpu_numbers_a_stale_gpu_result_is_shown_with_its_reason(
    project: Path,
) -> None:
    eng = engine(project)
    fake_result(eng, GPU, "2026-11-01T00:00:00Z", stale=True)
    fake_result(eng, CPU, "2026-12-01T00:00:00Z")  # a newer, fresh CPU result
    shown = eng.shown(eng.snippet("s"))
    assert (shown.device_class, shown.state) == (GPU, "stale") and shown.reasons
    assert not shown.accepted  # not acknowledged: a strict build fails on it
    fake_result(eng, CPU, "2026-12-01T00:00:00Z", stale=True)
    assert eng.shown(eng.snippet("s")).device_class == GPU


def test_the_author_can_accept_a_stale_gpu_result_until_a_gpu_rerun(project: Path) -> None:
    header = "# ---\n# blog:\n#   accept_stale_gpu_until_rerun: true\n# ---\n\n"
    (project / "snippets" / "s.py").write_text(header + SNIPPET)
    eng = engine(project)
    fake_result(eng, GPU, "2026-11-01T00:00:00Z", stale=True)
    fake_result(eng, CPU, "2026-12-01T00:00:00Z")
    shown = eng.shown(eng.snippet("s"))
    assert (shown.device_class, shown.state, shown.accepted) == (GPU, "stale", True)
    cpu = resolve.status_of(eng.snippet("s"), CPU, eng.results("s")[CPU])
    assert not cpu.accepted  # the setting is about GPU results only


def test_a_snippet_header_declares_its_device_and_a_bad_declaration_names_file_and_line(
    project: Path,
) -> None:
    path = project / "snippets" / "s.py"
    path.write_text("# ---\n# blog:\n#   device: cpu\n# ---\n\n" + SNIPPET)
    eng = engine(project)
    assert eng.snippet("s").options["device"] == "cpu"
    path.write_text("# ---\n# blog:\n#   device: gpu\n# ---\n\n" + SNIPPET)
    with pytest.raises(GeneratorError, match=r"s.py:1: blog.device must be one of any, cpu, cuda, not 'gpu'"):
        engine(project).snippet("s")


def test_a_run_is_filed_under_the_device_it_really_used() -> None:
    cuda, cpu = device.CUDA, device.CPU
    assert device.file_under(cuda, GPU, "any", used=True, described=True) == GPU
    assert device.file_under(cuda, GPU, "any", used=False, described=False) == CPU  # tensors never on the GPU
    assert device.file_under(cpu, CPU, "any", used=False, described=False) == CPU
    with pytest.raises(GeneratorError, match=r"declares device: cuda in its header, but the run on "
                                             r"cuda-nvidia-h200 never used it"):
        device.file_under(cuda, GPU, "cuda", used=False, described=False)
    assert device.run_kind(cuda, "cpu") is cpu and device.run_kind(cuda, "any") is cuda


HARNESS = "def scale(x):\n    return x\n"
MEASURED = '# %% name="main"\nfrom _harness import scale\nprint(scale(1))\n'


def test_rekeying_keeps_gpu_results_fresh_across_a_harness_change_that_left_their_code_alone(
    project: Path, capsys,
) -> None:
    snippets = project / "snippets"
    (snippets / "_harness.py").write_text(HARNESS)
    (snippets / "s.py").write_text(MEASURED)
    (snippets / "t.py").write_text(MEASURED)
    eng = engine(project)
    gpu_s = fake_result(eng, GPU, "2026-11-01T00:00:00Z")
    gpu_t = fake_result(eng, GPU, "2026-11-01T00:00:00Z", stem="t")
    cpu_s = fake_result(eng, CPU, "2026-11-01T00:00:00Z")
    cpu_before = cpu_s.read_bytes()
    (snippets / "_harness.py").write_text(HARNESS + "# the harness changed\n")
    (snippets / "t.py").write_text(MEASURED.replace("scale(1)", "scale(2)"))  # t's measured code changed too
    assert eng.shown(eng.snippet("s")).state == "stale"
    assert blog("migrate", "--rekey", "snippets/_harness.py") == 0
    out = capsys.readouterr().out
    assert "snippets/_results/s/cuda-nvidia-h200.json: re-keyed: measured code unchanged, only _harness.py " \
           "changed" in out
    assert "snippets/_results/t/cuda-nvidia-h200.json: left stale: code of cell 'main' changed" in out
    eng = engine(project)
    s, t = eng.shown(eng.snippet("s")), eng.shown(eng.snippet("t"))
    assert (s.device_class, s.state, t.state) == (GPU, "fresh", "stale")
    (rekey,) = s.result.rekeyed
    assert rekey.modules == ("_harness.py",) and rekey.from_key != s.result.key
    assert s.result.provenance.ran_at == "2026-11-01T00:00:00Z"  # the measurement itself is untouched
    assert cpu_s.read_bytes() == cpu_before  # CPU results are re-run, never re-keyed
    assert "rekeyed" in gpu_s.read_text() and gpu_t.exists()


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


VERDICT_SNIPPET = '''# %% name="main"
from perfblog.generator.bench import Comparison, NoiseLimits

rounds = {{"eager": [2.0 + 0.01 * (i % 3) for i in range(12)], "compiled": [{compiled} for i in range(12)]}}
timed = Comparison.of_samples("cpu", rounds, limits=NoiseLimits(load_per_cpu=1e9))
timed.record_verdict("compiled", "compiled", expect="faster")
print("measured")
'''


@pytest.mark.kernel
def test_a_rerun_whose_verdict_flips_fails_blog_run_names_the_line_and_keeps_the_old_result(
    project: Path, capsys,
) -> None:
    path = project / "snippets" / "s.py"
    path.write_text(VERDICT_SNIPPET.format(compiled="1.0 + 0.01 * (i % 2)"))
    assert blog("run", "--device", "cpu") == 0
    stored = project / "snippets" / "_results" / "s" / f"{CPU}.json"
    good = stored.read_bytes()
    assert json.loads(good)["verdicts"]["compiled"]["verdict"] == "faster"
    path.write_text(VERDICT_SNIPPET.format(compiled="4.0 + 0.01 * (i % 2)"))  # the same claim, now false
    capsys.readouterr()
    assert blog("run", "--device", "cpu") == 1
    err = capsys.readouterr().err
    assert ("snippets/s.py:6: verdict 'compiled' is slower (compiled over eager: 0.502, 95% interval"
            in " ".join(err.split()))
    assert "but the snippet expects faster" in " ".join(err.split())
    assert "the previous result snippets/_results/s/" in err
    assert stored.read_bytes() == good


@pytest.mark.kernel
def test_a_cpu_only_snippet_run_on_a_gpu_machine_is_filed_and_labelled_as_a_cpu_result(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys,
) -> None:
    monkeypatch.setattr(device, "gpu_name", lambda: "NVIDIA H200")  # this machine, as the GPU machine sees it
    (project / "snippets" / "s.py").write_text('# %% name="main"\nimport torch\nprint(torch.ones(3).sum())\n')
    assert blog("run", "--device", "cuda") == 0
    assert f"ok   s on {CPU}" in capsys.readouterr().err
    assert not (project / "snippets" / "_results" / "s" / f"{GPU}.json").exists()
    result = engine(project).results("s")[CPU]
    prov = result.provenance
    assert (prov.requested, prov.accelerator_used, prov.gpu) == ("cuda", False, None)
    assert "NVIDIA" not in prov.device
    eng = Engine(Settings(snippets_dir=project / "snippets", results_dir=project / "snippets" / "_results",
                          device="cuda"))
    assert not eng.needs_run(eng.snippet("s"))  # a cuda run found it CPU-only: no need to run it again
    # A snippet that declares it measures the GPU and never uses it is refused, naming its header.
    (project / "snippets" / "s.py").write_text('# ---\n# blog:\n#   device: cuda\n# ---\n\n'
                                               '# %% name="main"\nprint(1)\n')
    assert blog("run", "--device", "cuda") == 1
    assert ("snippets/s.py:1: declares device: cuda in its header, but the run on cuda-nvidia-h200 never "
            "used it; it is not stored") in " ".join(capsys.readouterr().err.split())


def test_blog_status_lists_each_results_torch_and_labels_other_versions(project: Path, capsys) -> None:
    eng = engine(project)
    fake_result(eng, GPU, "2026-11-01T00:00:00Z")  # made under torch 2.11
    assert blog("status") == 0
    out = capsys.readouterr().out
    declared = ".".join(importlib.metadata.version("torch").split(".")[:2])  # by default, the installed one
    assert f"posts describe torch {declared}" in out
    assert "2.11.0 (labelled)" in out  # listed, labelled, and no reason to fail
