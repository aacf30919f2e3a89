"""Key scheme 2 -> 3 (`blog migrate`): a result is re-keyed only when the move of the harness alone made
it stale; anything else that changed leaves it stale, for `blog run`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from perfblog.generator.source import snippet
from perfblog.generator.store import key_scheme
from perfblog.generator.store.result import Provenance, Result

AT = "2026-12-02T00:00:00Z"
SNIPPET = "# %%\nimport _helper\nfrom perfblog.api import measure\nmeasure(_helper.SIZE)\n"


class Project:
    """A project holding perfblog in src/ (as this repository does), a snippet and a helper beside it."""

    def __init__(self, root: Path) -> None:
        self.snippets = root / "snippets"
        self.package = root / "src" / "perfblog"
        self.package.mkdir(parents=True)
        self.snippets.mkdir()
        self.write("src/perfblog/__init__.py", "")
        self.write("snippets/_helper.py", "SIZE = 8\n")
        self.write("snippets/s.py", SNIPPET)

    def write(self, rel: str, text: str) -> None:
        (self.snippets.parent / rel).write_text(text, encoding="utf-8")

    def harness(self, where: str) -> None:
        """The snippet-facing ``perfblog.api``, re-exporting ``measure`` from ``where``."""
        for old in self.package.glob("h_*.py"):
            old.unlink()
        self.write(f"src/perfblog/{where}.py", "def measure(n):\n    return n\n")
        self.write("src/perfblog/api.py", f"from perfblog.{where} import measure\n")

    def load(self) -> snippet.Snippet:
        return snippet.load(self.snippets / "s.py", self.snippets)

    def tables(self) -> dict[str, str]:
        """The harness as the snippet's key records it now, by path in perfblog."""
        return {key_scheme.package_path(m): h for m, h in self.load().modules.items()
                if key_scheme.package_path(m)}


def stored(snip: snippet.Snippet) -> Result:
    """A result keyed by scheme 2 of ``snip`` as it is now."""
    provenance = Provenance(device="cpu", cpu="cpu", cores=1, gpu=None, python="3.12.3", torch=None,
                            triton=None, git_commit=None, git_dirty=None, ran_at="2026-12-01T00:00:00Z",
                            duration_s=1.0)
    return Result(snippet=snip.stem, key=snip.key, hashes=replace(snip.hashes, scheme=2),
                  device_class="cpu-x86_64", provenance=provenance, cells=())


@pytest.fixture
def moved(tmp_path: Path) -> tuple[Project, Result, dict[str, str], dict[str, str]]:
    """A scheme-2 result, fresh before the harness moved from ``h_old`` to ``h_new``; the tables."""
    project = Project(tmp_path)
    project.harness("h_old")
    before, result = project.tables(), stored(project.load())
    project.harness("h_new")
    return project, result, before, project.tables()


def test_a_result_only_the_move_made_stale_is_re_keyed_and_says_so(moved) -> None:
    project, result, before, after = moved
    snip = project.load()
    assert snip.key != result.key
    again = key_scheme.migrated(snip, result, AT, before, after)
    assert isinstance(again, Result)
    assert again.key == snip.key and again.hashes.scheme == snippet.KEY_SCHEME
    (rekey,) = again.rekeyed
    assert (rekey.at, rekey.from_key) == (AT, result.key)
    assert rekey.modules == ("../src/perfblog/api.py", "../src/perfblog/h_new.py", "../src/perfblog/h_old.py")
    assert again.cells == result.cells and again.provenance == result.provenance  # the measurement stays


def test_changed_code_a_changed_helper_or_another_harness_leave_it_stale(moved) -> None:
    project, result, before, after = moved
    project.write("snippets/_helper.py", "SIZE = 16\n")
    assert key_scheme.migrated(project.load(), result, AT, before, after) == (
        "a module of its own (beside the snippets) changed")
    project.write("snippets/_helper.py", "SIZE = 8\n")
    project.write("snippets/s.py", "# %%\nimport _helper\nfrom perfblog.api import measure\nmeasure(4)\n")
    assert key_scheme.migrated(project.load(), result, AT, before, after) == (
        "its code, cells or options changed since it ran")


def test_a_harness_that_was_not_the_one_that_moved_or_changed_after_leaves_it_stale(moved) -> None:
    project, result, before, after = moved
    snip = project.load()
    other = {path: "0" * 64 for path in before}
    assert key_scheme.migrated(snip, result, AT, other, after) == "its harness was not the one that moved"
    project.write("src/perfblog/h_new.py", "def measure(n):\n    return 2 * n\n")
    assert key_scheme.migrated(project.load(), result, AT, before, after) == (
        "the harness changed beyond the move")


def test_only_scheme_2_is_migrated_and_a_result_without_a_harness_keeps_its_key(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write("snippets/s.py", "# %%\nprint(1)\n")
    snip = project.load()
    result = stored(snip)
    again = key_scheme.migrated(snip, result, AT)
    assert isinstance(again, Result) and again.key == result.key and again.rekeyed == ()
    assert again.hashes.scheme == snippet.KEY_SCHEME
    assert key_scheme.migrated(snip, again, AT) == f"keyed by scheme {snippet.KEY_SCHEME}, not 2"


def test_the_frozen_tables_are_the_harness_before_and_after_the_move() -> None:
    assert key_scheme.FROM_SCHEME + 1 == snippet.KEY_SCHEME  # a new scheme needs a migration of its own
    assert "perfblog/generator/bench.py" in key_scheme.BEFORE and "perfblog/harness/compare.py" not in (
        key_scheme.BEFORE)
    assert {"perfblog/generator/bench.py", "perfblog/harness/compare.py"} <= set(key_scheme.AFTER)
