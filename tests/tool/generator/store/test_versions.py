"""The torch version records (store/versions.py): their layout, failed runs stored with their cells'
outcomes, the history's reading of them, the claims that flip, and result format 5 still loading."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from paths import DATA

from perfblog.generator.errors import StoreError
from perfblog.generator.source.snippet import Hashes
from perfblog.generator.store import schema, versions
from perfblog.generator.store.content import ValueRecord
from perfblog.generator.store.result import CellOutcome, Failure, Outcome, Provenance, Result
from perfblog.generator.store.store import Store
from perfblog.harness.verdict import Verdict

FIXTURES = DATA / "versions"


def record(torch: str, *, failing: str | None = None, fits: bool = True) -> Result:
    """A version record of snippet ``demo``: cells setup, check; ``failing`` raised."""
    provenance = Provenance(device="cpu", cpu="cpu", cores=2, gpu=None, python="3.11.7", torch=torch,
                            triton=None, git_commit="abc", git_dirty=False, ran_at="2026-12-02T05:00:00Z",
                            duration_s=1.5, requested="cpu", accelerator_used=False)
    outcomes = tuple(CellOutcome(name, line, Outcome.RAISED if name == failing else Outcome.OK,
                                 "AssertionError: no" if name == failing else None)
                     for name, line in (("setup", 3), ("check", 9)))
    failure = Failure(f"snippets/demo.py:{dict(setup=3, check=9)[failing]}: cell {failing} raised "
                      f"AssertionError: no", failing) if failing else None
    return Result(snippet="demo", key="k1", hashes=Hashes("c", {}, {}, "f", 3), device_class="cpu-x86_64",
                  provenance=provenance, cells=(), values={"fits": ValueRecord("fits", fits, cell="check")},
                  outcomes=outcomes, failure=failure)


def test_a_record_lands_in_its_version_folder_and_reads_back(tmp_path: Path) -> None:
    path = versions.write(tmp_path, record("2.12.1"), "2.12.1")
    assert path == tmp_path / "demo" / "versions" / "cpu-x86_64" / "torch-2.12.1.json"
    (found,) = versions.version_outcomes(tmp_path, "demo")
    assert (found.torch, found.series, found.python) == ("2.12.1", "2.12", "3.11.7")
    assert found.ok and found.error is None
    assert found.claims == {"cell:setup": "ok", "cell:check": "ok", "value:fits": "true"}
    assert Store(tmp_path).results("demo") == {}  # the post's results never see a version record


def test_a_failed_run_is_stored_with_its_error_and_each_cells_outcome(tmp_path: Path) -> None:
    versions.write(tmp_path, record("2.10.0", failing="check", fits=False), "2.10.0")
    data = json.loads((tmp_path / "demo/versions/cpu-x86_64/torch-2.10.0.json").read_text())
    assert (data["status"], data["schema"], data["failure"]["cell"]) == ("failed", schema.SCHEMA, "check")
    (found,) = versions.version_outcomes(tmp_path, "demo")
    assert not found.ok and found.failing_cell == "check" and "AssertionError" in (found.error or "")
    assert found.cell("check").outcome is Outcome.RAISED and found.cell("setup").outcome is Outcome.OK


def test_records_come_oldest_first_and_the_flips_name_both_versions(tmp_path: Path) -> None:
    for torch in ("2.10.0", "2.9.1", "2.12.1+cpu"):
        versions.write(tmp_path, record(torch), torch)
    versions.write(tmp_path, record("2.13.0", failing="check", fits=False), "2.13.0")
    found = versions.version_outcomes(tmp_path, "demo")
    assert [o.torch for o in found] == ["2.9.1", "2.10.0", "2.12.1+cpu", "2.13.0"]
    assert versions.newest(found, "cpu-x86_64", upto="2.12.9").torch == "2.12.1+cpu"
    before = versions.newest(found, "cpu-x86_64", upto="2.12.1+cpu")
    assert before is not None and before.torch == "2.12.1+cpu"
    flipped = versions.flips(before, found[-1])
    assert [(f.claim, f.before, f.after, f.before_torch, f.after_torch) for f in flipped] == [
        ("cell:check", "ok", "raised", "2.12.1+cpu", "2.13.0"), ("value:fits", "true", "false", "2.12.1+cpu",
                                                                 "2.13.0")]


def test_the_committed_fixture_records_read(tmp_path: Path) -> None:
    """Fixture files as the runner writes them: one version ok, one whose first cell failed to import."""
    shutil.copytree(FIXTURES, tmp_path, dirs_exist_ok=True)
    found = versions.version_outcomes(tmp_path, "demo")
    assert [(o.torch, o.ok, o.failing_cell) for o in found] == [("2.9.0", False, "setup"),
                                                                ("2.12.1", True, None)]
    assert found[0].cell("check").outcome is Outcome.RAISED  # ran past the failing cell, and failed too


def test_a_record_filed_under_another_snippet_or_a_bad_version_is_refused(tmp_path: Path) -> None:
    path = versions.write(tmp_path, record("2.12.1"), "2.12.1")
    moved = tmp_path / "other" / path.relative_to(tmp_path / "demo")
    moved.parent.mkdir(parents=True)
    shutil.move(path, moved)
    with pytest.raises(StoreError, match="holds demo on cpu-x86_64, not other"):
        versions.version_outcomes(tmp_path, "other")
    with pytest.raises(StoreError, match="not a torch version"):
        versions.version_path(tmp_path, "demo", "cpu-x86_64", "../x")


def test_a_format_5_result_loads_with_no_outcomes_and_a_failed_one_is_no_posts_result(tmp_path: Path) -> None:
    document = record("2.13.0").to_json()
    old = {key: value for key, value in document.items() if key not in ("outcomes", "failure", "digest")}
    old = {**old, "schema": 5, "digest": schema.digest({**old, "schema": 5})}
    read = Result.from_json(old)
    assert read.intact and read.outcomes == () and read.failure is None
    failed = record("2.13.0", failing="check")
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "cpu-x86_64.json").write_text(json.dumps(failed.to_json()))
    with pytest.raises(StoreError, match="holds a failed run"):
        Store(tmp_path).results("demo")


def test_a_renamed_snippets_records_are_refiled_under_its_new_name(tmp_path: Path) -> None:
    versions.write(tmp_path, record("2.12.1"), "2.12.1")
    (tmp_path / "demo").rename(tmp_path / "renamed")  # what `blog mv` does to the folder first
    (path,) = versions.refile(tmp_path, "demo", "renamed")
    (found,) = versions.version_outcomes(tmp_path, "renamed")
    assert found.snippet == "renamed" and found.path == path and found.key == "k1"


def test_an_inconclusive_verdict_on_either_side_is_no_flip() -> None:
    def outcome(torch: str, verdicts: dict[str, str]) -> versions.VersionOutcome:
        found = versions.outcome_of(record(torch), torch, Path(torch))
        return replace(found, verdicts={name: SimpleNamespace(verdict=Verdict(v))
                                        for name, v in verdicts.items()})

    old = outcome("2.12.1", {"a": "faster", "b": "faster", "c": "no-difference"})
    new = outcome("2.13.0", {"a": "inconclusive", "b": "slower", "c": "no-difference"})
    flipped = versions.flips(old, new)
    assert [(f.claim, f.before, f.after) for f in flipped] == [("verdict:b", "faster", "slower")]
