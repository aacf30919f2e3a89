"""Snippets on save: only an edited snippet re-runs, in the background, and a failed re-run loses nothing.

These use the real engine (a Jupyter kernel per run) and the real watcher of `mkdocs serve`
(LiveReloadServer's polling observer); the snippets are tiny and need no torch.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from mkdocs.livereload import LiveReloadServer

from perfblog.generator.build import Build
from perfblog.generator.preview import SnippetPreview
from perfblog.generator.run.engine import Engine, Settings
from perfblog.generator.store.store import Store

pytestmark = pytest.mark.kernel

SNIPPET = """\
# %% [markdown]
# {prose}

# %% name="main"
from perfblog.generator import glue
from {helper} import factor
glue("answer", {value} * factor)
print("answer", {value} * factor)
"""


def write_snippet(root: Path, stem: str, value: int, prose: str = "prose", helper: str = "_helper") -> Path:
    path = root / "snippets" / f"{stem}.py"
    path.write_text(SNIPPET.format(prose=prose, value=value, helper=helper), encoding="utf-8")
    return path


def wait_for(condition: Callable[[], bool], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "_helper.py").write_text("factor = 1\n", encoding="utf-8")
    (tmp_path / "snippets" / "_other.py").write_text("factor = 10\n", encoding="utf-8")
    write_snippet(tmp_path, "a", 1)
    write_snippet(tmp_path, "b", 2, helper="_other")
    eng = Engine(Settings(tmp_path / "snippets", tmp_path / "snippets" / "_results", device="cpu"))
    for stem in ("a", "b"):
        assert eng.run(eng.snippet(stem)).ok
    return eng


@pytest.fixture
def preview(engine: Engine, tmp_path: Path) -> Iterator[SnippetPreview]:
    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path))
    watcher = SnippetPreview(engine)
    watcher.attach(server)
    server.observer.start()
    yield watcher
    watcher.stop()
    server.observer.stop()
    server.server_close()


def value(engine: Engine, stem: str) -> int:
    result = engine.shown(engine.snippet(stem)).result
    assert result is not None
    return int(result.values["answer"].value)  # type: ignore[arg-type]


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The errors the preview logged (from its worker thread too)."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def stored(engine: Engine) -> dict[str, tuple[int, bytes]]:
    """Each snippet's result file: (mtime, bytes). A run, even one measuring the same, changes both."""
    return {p.parent.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in engine.store.root.glob("*/*.json")}


def reran(engine: Engine, stem: str, before: dict[str, tuple[int, bytes]], preview: SnippetPreview) -> bool:
    """Whether ``stem`` has a new result and the preview has nothing of it queued or running."""
    return stored(engine)[stem] != before[stem] and not preview.busy(stem)


def test_saving_a_code_edit_reruns_that_snippet_alone_in_the_background(
    engine: Engine, preview: SnippetPreview, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = stored(engine)
    write_snippet(tmp_path, "a", 7)
    wait_for(lambda: reran(engine, "a", before, preview))
    assert engine.shown(engine.snippet("a")).state == "fresh"
    assert value(engine, "a") == 7
    assert value(engine, "b") == 20
    assert stored(engine)["b"] == before["b"] and not preview.busy("b") and not errors(caplog)


def test_a_markdown_cell_edit_or_a_touch_runs_nothing(
    engine: Engine, preview: SnippetPreview, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = stored(engine)
    path = write_snippet(tmp_path, "a", 1, prose="new prose, same code")
    assert preview.changed() == []
    path.touch()
    assert preview.changed() == []
    time.sleep(1.5)  # three polling intervals of the observer
    assert not preview.busy("a") and not preview.busy("b") and not errors(caplog)
    assert stored(engine) == before


def test_editing_a_local_module_queues_only_the_snippets_that_import_it(
    engine: Engine, preview: SnippetPreview, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = stored(engine)
    (tmp_path / "snippets" / "_other.py").write_text("factor = 100\n", encoding="utf-8")
    wait_for(lambda: reran(engine, "b", before, preview))
    assert value(engine, "b") == 200
    assert value(engine, "a") == 1
    assert stored(engine)["a"] == before["a"] and not preview.busy("a") and not errors(caplog)


def test_a_failing_rerun_keeps_the_previous_result_and_reports_the_error(
    engine: Engine, preview: SnippetPreview, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = (tmp_path / "snippets/_results/a").glob("*.json").__next__().read_bytes()
    files = stored(engine)
    failing = '# %% name="main"\nraise RuntimeError("boom")\n'
    (tmp_path / "snippets/a.py").write_text(failing, encoding="utf-8")
    wait_for(lambda: errors(caplog) and not preview.busy("a"))
    (error,) = errors(caplog)
    assert "a.py:2: cell 'main' raised RuntimeError: boom (the previous result is kept)" in error
    assert (tmp_path / "snippets/_results/a").glob("*.json").__next__().read_bytes() == before
    assert stored(engine) == files
    assert engine.shown(engine.snippet("a")).state == "stale"


def test_while_a_blog_run_holds_the_store_the_rerun_waits_and_the_build_warning_says_it_is_coming(
    engine: Engine, preview: SnippetPreview, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = stored(engine)
    with Store(engine.store.root).lock():  # a `blog run` in a terminal holds the store
        write_snippet(tmp_path, "a", 5)
        preview.changed()  # as the plugin does before each serve-time build (the watcher may have too)
        assert preview.busy("a")
        serving = Build(Engine(replace(engine.settings, mode="frozen")), tmp_path, preview.busy)
        with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.snippets"):
            serving.prepare(serving.renderer.parse('<%= provenance("a") %>', "posts/x.md"))
        assert "stale" in caplog.text and "re-running it in the background" in caplog.text
        assert "blog run" not in caplog.text
        time.sleep(1.0)  # the worker has tried, found the store locked and is waiting to retry
        assert preview.busy("a") and stored(engine) == before
    wait_for(lambda: reran(engine, "a", before, preview))
    assert value(engine, "a") == 5
    assert stored(engine)["b"] == before["b"] and not errors(caplog)
