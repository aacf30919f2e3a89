"""Prepare, then render: a build makes every embedded snippet's result ready before any page renders, so
rendering a page never starts a kernel. And what a build adds to pages: MathJax only where the blog loads
none of its own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from paths import DATA, ROOT

from perfblog.generator.build import Build
from perfblog.generator.render import maths
from perfblog.generator.render.render import Renderer
from perfblog.generator.run.engine import Engine, Settings
from perfblog.generator.run.runner import RunResult

pytestmark = pytest.mark.mkdocs

REPO = ROOT
FIXTURE = DATA / "engine" / "blog"
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


def _config(tmp_path: Path, extra: str = "") -> object:
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "mkdocs.yml").write_text(f"site_name: x\ntheme: {{name: material, custom_dir: overrides}}\n"
                                         f"{extra}", encoding="utf-8")
    (tmp_path / "overrides").mkdir(exist_ok=True)
    return load_config(str(tmp_path / "mkdocs.yml"))


@pytest.mark.parametrize(("extra", "template", "loaded"), [
    ("", "", False),
    ("extra_javascript: [javascripts/mathjax.js, https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js]\n",
     "", True),
    ("extra_javascript: [https://unpkg.com/katex@0/dist/katex.min.js]\n", "", True),
    ("", '{% block scripts %}<script src="https://cdn.example/MathJax/tex-chtml.js"></script>{% endblock %}',
     True),
    ("", "{% block scripts %}<script>window.MathJax = {tex: {}}</script>{% endblock %}", True),
])
def test_the_sites_mathjax_is_not_added_where_the_blog_loads_one(tmp_path, extra, template, loaded) -> None:
    config = _config(tmp_path, extra)
    (tmp_path / "overrides" / "main.html").write_text(template, encoding="utf-8")
    assert maths.loaded_by(config) is loaded
    build = Build(Engine(Settings(tmp_path / "s", tmp_path / "s" / "_results", mode="frozen")), tmp_path,
                  own_math=loaded)
    html = build.page_content('<p><span class="arithmatex">\\(x\\)</span></p>', "post/", embeds=False)
    assert (maths.FOLDER in html) is not loaded and build.math is not loaded


def test_a_script_the_page_writes_counts_as_its_mathjax(tmp_path) -> None:
    build = Build(Engine(Settings(tmp_path / "s", tmp_path / "s" / "_results", mode="frozen")), tmp_path)
    page = ('<script src="https://cdn.example/mathjax/3/tex-chtml.js"></script>'
            '<span class="arithmatex">x</span>')
    assert build.page_content(page, "post/", embeds=False) == page and not build.math
