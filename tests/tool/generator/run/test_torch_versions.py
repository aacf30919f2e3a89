"""`blog run --torch` and `blog envs` (generator/torches.py, run/matrix.py) against fake torch releases:
environments holding a tiny `torch` package (ipykernel and the rest from this test's own environment,
through a .pth), so one claim flips between "98.0.0" and "99.0.0" without downloading a real torch. The
newest version is resolved by pip itself, offline, from a wheel of the fake release in the wheels folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import yaml
from paths import ROOT

from perfblog.cli import main
from perfblog.generator import torches
from perfblog.generator.run import envs, matrix
from perfblog.generator.store import versions

PYTHON = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
MINOR = f"{sys.version_info.major}.{sys.version_info.minor}"

SNIPPET = '''# %% name="setup"
import torch

from perfblog.generator import glue

glue("fast_path", torch.fast_path())

# %% name="check"
assert torch.fast_path(), "the fast path is gone"

# %% name="after"
print("still runs")
'''


def fake_torch(version: str, fast: bool) -> str:
    return f"__version__ = {version!r}\n\n\ndef fast_path():\n    return {fast!r}\n"


def fake_env(cache: Path, version: str, fast: bool, *, kernel: bool = True) -> Path:
    """The environment `blog run --torch SERIES` would make, made here without pip: the builder reuses it
    because its key is the one it would compute."""
    series = matrix.series_of(version)
    spec = envs.Spec(PYTHON, (*matrix.KERNEL_REQUIREMENTS, f"torch=={series}.*"))
    into = cache / "perfblog" / "envs" / f"torch-{series}-py{MINOR}"
    subprocess.run([str(PYTHON), "-m", "venv", "--without-pip", str(into)], check=True)
    site = Path(subprocess.run([str(into / "bin" / "python"), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text(fake_torch(version, fast))
    (site / f"torch-{version}.dist-info").mkdir()
    (site / f"torch-{version}.dist-info" / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    if kernel:  # ipykernel (and the rest) from this test's environment
        (site / "test-kernel.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    record = {"key": spec.key(), "python": spec.version(), "requirements": sorted(spec.requirements)}
    (into / envs.KEY_FILE).write_text(json.dumps(record))
    return into


def fake_wheel(folder: Path, version: str) -> None:
    """A wheel of the fake release, so that pip resolves it as the newest torch (offline)."""
    folder.mkdir(parents=True, exist_ok=True)
    info = f"torch-{version}.dist-info"
    with zipfile.ZipFile(folder / f"torch-{version}-py3-none-any.whl", "w") as wheel:
        wheel.writestr("torch/__init__.py", fake_torch(version, False))
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
        wheel.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                        "Tag: py3-none-any\n")
        wheel.writestr(f"{info}/RECORD", "")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A snippets folder with one claim snippet, the user's cache in tmp_path, pip offline."""
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "claim.py").write_text(SNIPPET)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # this machine's constraints and mirrors: not here
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setattr(matrix, "python_for", lambda series: PYTHON)
    monkeypatch.setattr(matrix, "DEFAULT_PYTHON", MINOR)
    return tmp_path


def run(*argv: str) -> int:
    return main(["run", "--snippets-dir", "snippets", *argv])


@pytest.mark.kernel
def test_latest_fails_naming_the_flipped_claim_and_both_versions(site: Path, capsys, monkeypatch) -> None:
    fake_env(site / "cache", "98.0.0", fast=True)
    fake_env(site / "cache", "99.0.0", fast=False)
    fake_wheel(site / "cache" / "perfblog" / "wheels", "99.0.0")
    summary = site / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run("--torch", "98.0", "claim") == 0
    assert run("--torch", "98.0", "claim") == 0  # its record is of the current code: not run again
    assert "skip   claim: its record of this version is of its current code" in capsys.readouterr().err
    assert run("--torch", "latest", "claim") == 1  # a re-check always runs
    err = capsys.readouterr().err
    assert "FLIPPED claim cell:check: ok on torch 98.0.0 -> raised on torch 99.0.0" in err
    assert "FLIPPED claim value:fast_path: true on torch 98.0.0 -> false on torch 99.0.0" in err
    assert "cell:after" not in err  # ran past the failing cell, and held on both
    assert "| claim | `cell:check` | ok (98.0.0) | raised (99.0.0) |" in summary.read_text()
    old, new = versions.version_outcomes(site / "snippets" / "_results", "claim")
    assert (old.torch, old.ok) == ("98.0.0", True)
    assert (new.torch, new.ok, new.failing_cell) == ("99.0.0", False, "check")
    assert "the fast path is gone" in (new.error or "")
    # a week later, no newer torch: compared with the stored record of the same version, nothing flipped
    assert run("--torch", "latest", "claim") == 0
    assert "claim: every claim as on 99.0.0" in capsys.readouterr().err


@pytest.mark.kernel
def test_a_version_whose_kernel_cannot_start_is_a_failure_record_with_every_cell_not_run(site: Path,
                                                                                       capsys) -> None:
    fake_env(site / "cache", "97.0.0", fast=True, kernel=False)  # no ipykernel in it
    assert run("--torch", "97.0", "claim") == 0  # a snippet failing on a version is its record
    assert "could not run a Jupyter kernel" in capsys.readouterr().err
    (found,) = versions.version_outcomes(site / "snippets" / "_results", "claim")
    assert (found.torch, found.ok, found.failing_cell) == ("97.0.0", False, None)
    assert [c.outcome.value for c in found.cells] == ["not-run"] * 3 and found.provenance.torch is None


def test_a_version_that_cannot_be_installed_is_reported_not_skipped(site: Path, capsys, monkeypatch) -> None:
    def no_python(series: str) -> Path:
        raise matrix.VersionError(f"torch {series}: no python3.99 on the PATH to make its environment with")

    monkeypatch.setattr(matrix, "python_for", no_python)
    assert run("--torch", "97.0", "claim") == 1
    assert "torch 97.0: NOT RUN torch 97.0: no python3.99 on the PATH" in capsys.readouterr().err
    assert not (site / "snippets" / "_results").exists()


def test_a_malformed_version_or_no_claim_snippet_is_one_line_and_exit_2(site: Path, capsys) -> None:
    assert run("--torch", "2.x", "claim") == 2
    assert run("--torch", "2.12") == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["blog: error: --torch: '2.x' is not a torch release series (2.12) or 'latest'",
                     "blog: error: --torch: no claim snippets: name them, or list them in mkdocs.yml's "
                     "claim_snippets (docs/versions.md)"]


def test_blog_envs_lists_each_environment_with_its_size_and_removes_on_request(site: Path, capsys) -> None:
    fake_env(site / "cache", "98.0.0", fast=True)
    (site / "cache" / "perfblog" / "envs" / "torch-2.9-py3.11").mkdir()  # left by an interrupted make
    assert main(["envs"]) == 0
    out = capsys.readouterr().out
    assert f"torch-98.0-py{MINOR}" in out and "GiB" in out and "torch==98.0.*" in out and "unfinished" in out
    assert main(["envs", "--remove", "torch-2.9-py3.11"]) == 0
    assert [env.path.name for env, _ in envs.listing(site / "cache" / "perfblog" / "envs")] == [
        f"torch-98.0-py{MINOR}"]
    assert main(["envs", "--remove", "nothing"]) == 2


@pytest.mark.parametrize("recheck", [True, False])
def test_the_weekly_recheck_is_this_repositorys_and_opt_in_for_a_new_blog(recheck: bool,
                                                                          tmp_path: Path) -> None:
    ours = ROOT / torches.RECHECK
    assert ours.read_text(encoding="utf-8") == torches.workflow("pip install .")
    blog = tmp_path / "b"
    assert main(["init", str(blog), "--name", "B", *(["--recheck-torch"] if recheck else [])]) == 0
    theirs = blog / torches.RECHECK
    assert theirs.is_file() == recheck
    for workflow in [ours, theirs] if recheck else [ours]:
        done = subprocess.run([str(Path(sys.executable).parent / "actionlint"), "-no-color", str(workflow)],
                              capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        jobs = yaml.safe_load(workflow.read_text(encoding="utf-8"))  # YAML 1.1 reads the key `on` as True
        assert jobs[True]["schedule"][0]["cron"]
        assert jobs["jobs"]["recheck"]["steps"][-1]["run"] == "blog run --torch latest"


def test_blog_envs_never_lists_or_prunes_environments_of_others(site: Path, capsys) -> None:
    (site / "docs").mkdir()
    (site / "mkdocs.yml").write_text("site_name: t\nplugins:\n  - snippets:\n"
                                     "      torch_versions: ['2.12']\n")
    other = site / "cache" / "perfblog" / "envs" / "downloads-abc"
    other.mkdir(parents=True)
    fake_env(site / "cache", "98.0.0", fast=True)
    assert main(["envs", "--prune"]) == 0
    assert "removed torch-98.0" in capsys.readouterr().out and other.is_dir()
