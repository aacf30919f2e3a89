"""Prepare, then render: a build makes every embedded snippet's result ready before any page renders, so
rendering a page never starts a kernel."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config

from perfblog.generator.render.render import Renderer
from perfblog.generator.run.engine import Engine
from perfblog.generator.run.runner import RunResult

pytestmark = pytest.mark.mkdocs

REPO = Path(__file__).parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "engine" / "blog"
POST = """---
date: 2026-01-02
---

# 内存占用

<% if false %>
<%= output("rich_outputs", "table") %>
<% endif %>
"""


@pytest.fixture
def stale_site(tmp_path: Path) -> Path:
    """The engine fixture's site in auto mode with one snippet whose stored result its edit made stale, and
    one post that embeds it only inside a branch never taken."""
    root = tmp_path / "blog"
    (root / "posts/posts").mkdir(parents=True)
    config = (FIXTURE / "mkdocs.yml").read_text(encoding="utf-8")
    config = config.replace("exec_mode: frozen", "exec_mode: auto")
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    (root / "posts/index.md").write_text("# 首页\n", encoding="utf-8")
    (root / "posts/posts/memory.md").write_text(POST, encoding="utf-8")
    shutil.copytree(REPO / "snippets/_results/rich_outputs", root / "snippets/_results/rich_outputs")
    source = (REPO / "snippets/rich_outputs.py").read_text(encoding="utf-8")
    (root / "snippets/rich_outputs.py").write_text(source.replace("SHAPE = (4096, 4096)", "SHAPE = (8, 8)"),
                                                   encoding="utf-8")
    return root


def test_a_stale_snippet_runs_once_before_the_first_page_renders(stale_site: Path, monkeypatch) -> None:
    events: list[str] = []
    rendering = False

    def run(engine: Engine, snip, *args, **kwargs) -> RunResult:
        assert not rendering, "a snippet ran while a page rendered"
        events.append(f"run {snip.stem}")
        return RunResult(snip, engine.device_class, ok=False, duration_s=0.0, error="not run in this test")

    fill = Renderer.fill

    def rendered(self: Renderer, *args, **kwargs) -> str:
        nonlocal rendering
        events.append("render")
        rendering = True
        try:
            return fill(self, *args, **kwargs)
        finally:
            rendering = False

    monkeypatch.setattr(Engine, "run", run)
    monkeypatch.setattr(Renderer, "fill", rendered)
    monkeypatch.delenv("BLOG_EXEC_MODE", raising=False)
    build(load_config(str(stale_site / "mkdocs.yml")))
    assert events[0] == "run rich_outputs" and events.count("run rich_outputs") == 1
    assert set(events[1:]) == {"render"}
