"""Test lanes stay honest: a test that starts a kernel, a MkDocs build or a browser carries the marker.

The browser tests never skip themselves: without Debian's chromium they fail, naming `make browser`;
`--no-browser` leaves them out on purpose, and the summary says how many were left out.

`make check` deselects the marked tests to stay fast, so an unmarked test that builds a site would
slow it silently. Python's audit hook sees every process the test process starts (``subprocess.Popen``,
fixtures included, from any thread); a test that started one its markers do not declare fails, naming
the marker. What child processes start in turn (the kernels of a `blog run` subprocess) and MkDocs
builds run in-process are not seen: those tests are marked by hand.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Generator, Sequence
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]  # tests/tool/repo/test_lanes.py runs a small suite under this conftest

#: The test now running (set before its fixtures, so a module fixture's build counts for it).
_running: list[str] = []
#: Test id -> markers that what it started calls for.
_needed: dict[str, set[str]] = {}


#: Debian's chromium, which Playwright drives by path (never `playwright install`).
CHROMIUM = Path("/usr/bin/chromium")
NO_BROWSER = "--no-browser"

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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(NO_BROWSER, action="store_true",
                     help="leave out the browser tests (without this, they fail when chromium is missing)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption(NO_BROWSER):
        return
    left_out = [item for item in items if item.get_closest_marker("browser")]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not item.get_closest_marker("browser")]
    config.stash[_LEFT_OUT] = len(left_out)


_LEFT_OUT = pytest.StashKey[int]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _running[:] = [item.nodeid]
    if item.get_closest_marker("browser") and not CHROMIUM.exists():
        pytest.fail(f"this browser test needs Debian's chromium ({CHROMIUM}): run `make browser`, or leave "
                    f"the browser tests out on purpose with {NO_BROWSER} (`make test NO_BROWSER=1`)",
                    pytrace=False)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    left_out = config.stash.get(_LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(f"{NO_BROWSER}: {left_out} browser tests left out", yellow=True)


@pytest.fixture
def sigint_raises() -> Generator[None, None, None]:
    """SIGINT raises KeyboardInterrupt during the test, as in an interactive shell: a suite started as a
    background job of a non-interactive shell inherits SIGINT ignored, and Ctrl-C would never arrive."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def frozen_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example blog's site, built once a session for every test that reads its pages: from stored
    results only (frozen: nothing runs) and not strict, since what the pages say is tested there and what
    fails `--strict` where the checks are. One build, not one per module: each costs most of a minute."""
    site = tmp_path_factory.mktemp("frozen-site")
    env = {**os.environ, "BLOG_EXEC_MODE": "frozen", "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(site)],
                          cwd=Path(__file__).resolve().parent.parent, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return site
