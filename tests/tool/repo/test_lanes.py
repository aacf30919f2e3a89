"""The markers that keep `make check` fast are enforced: an unmarked test that starts a build fails."""

from __future__ import annotations

import sys

import pytest
from conftest import lane_of
from paths import TESTS

CONFTEST = TESTS / "conftest.py"


@pytest.mark.parametrize(("argv", "lane"), [
    ([sys.executable, "-m", "ipykernel_launcher", "-f", "/tmp/k.json"], "kernel"),
    ([sys.executable, "-m", "mkdocs", "build", "--strict"], "mkdocs"),
    ([sys.executable, "-m", "mkdocs", "serve", "--dev-addr", "127.0.0.1:8000"], "mkdocs"),
    ([".venv/bin/mkdocs", "build"], "mkdocs"),
    (["playwright/driver/node", "playwright/driver/package/cli.js", "run-driver"], "browser"),
    ([sys.executable, "-m", "perfblog.cli", "status"], None),
    (["git", "log", "-1", "--format=%cI", "--", "mkdocs.yml"], None),
])  # fmt: skip
def test_a_started_process_calls_for_the_marker_of_what_it_is(argv: list[str], lane: str | None) -> None:
    assert lane_of(argv) == lane


def test_an_unmarked_test_that_starts_a_build_fails_naming_the_marker(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n    mkdocs: runs a MkDocs build\n")
    pytester.makepyfile(
        """
        import subprocess, sys
        import pytest

        @pytest.fixture(scope="module")
        def built():  # a module fixture's process counts for the first test that asks for it
            subprocess.run([sys.executable, "-c", "pass", "mkdocs", "build"], check=True)

        def test_unmarked(built):
            pass

        @pytest.mark.mkdocs
        def test_marked():
            subprocess.run([sys.executable, "-c", "pass", "mkdocs", "build"], check=True)
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*test_unmarked*", "*starts a MkDocs build but is not marked so: add @pytest.mark.mkdocs*"]
    )
