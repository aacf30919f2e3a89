"""Test lanes stay honest: a test that starts a kernel, a MkDocs build or a browser carries the marker.

`make check` deselects the marked tests to stay fast, so an unmarked test that builds a site would
slow it silently. Python's audit hook sees every process the test process starts (``subprocess.Popen``,
fixtures included, from any thread); a test that started one its markers do not declare fails, naming
the marker. What child processes start in turn (the kernels of a `blog run` subprocess) and MkDocs
builds run in-process are not seen: those tests are marked by hand.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Sequence

import pytest

pytest_plugins = ["pytester"]  # tests/test_lanes.py runs a small suite under this conftest

#: The test now running (set before its fixtures, so a module fixture's build counts for it).
_running: list[str] = []
#: Test id -> markers that what it started calls for.
_needed: dict[str, set[str]] = {}


#: What each marker stands for, as failures name it.
WHAT = {"kernel": "a Jupyter kernel", "mkdocs": "a MkDocs build", "browser": "a browser"}


def lane_of(argv: Sequence[str]) -> str | None:
    """The marker a started process calls for, from its command line."""
    words = {os.path.basename(str(word)) for word in argv}  # `python -m mkdocs` or `.venv/bin/mkdocs`
    if "ipykernel_launcher" in words:
        return "kernel"
    if "mkdocs" in words and words & {"build", "serve"}:
        return "mkdocs"
    if "run-driver" in words:  # Playwright's driver, which launches the browser
        return "browser"
    return None


def _audit(event: str, args: tuple) -> None:
    """Called for every audited event; never raises, only records."""
    if event != "subprocess.Popen" or not _running:
        return
    argv = args[1]
    marker = lane_of(argv if isinstance(argv, list | tuple) else str(argv).split())
    if marker:
        _needed.setdefault(_running[0], set()).add(marker)


sys.addaudithook(_audit)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _running[:] = [item.nodeid]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    outcome = yield
    declared = {mark.name for mark in item.iter_markers()}
    missing = _needed.pop(item.nodeid, set()) - declared
    if missing:
        started = " and ".join(WHAT[name] for name in sorted(missing))
        marks = " ".join(f"@pytest.mark.{name}" for name in sorted(missing))
        pytest.fail(f"this test starts {started} but is not marked so: add {marks}, which keeps it out of "
                    f"`make check` (docs/testing.md)", pytrace=False)
    return outcome


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    _running.clear()
