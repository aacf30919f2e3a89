"""Your own blog in five minutes, as a new user walks it: `blog init` in an empty folder, a post and a
snippet of one's own, `blog run`, then the deploy workflow's own build step run here (frozen, --strict),
and the published page checked; the workflows pass actionlint; a phone shows every column of a table.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest
import yaml
from paths import ROOT

from perfblog.core.init import WORKFLOW

REPO = ROOT
BIN = Path(sys.executable).parent
NAME, URL = "向量笔记", "https://notes.example.org/"
TITLE, SLUG, SNIPPET = "向量点积为什么比循环快", "xiang-liang-dian-ji-wei-shen-me-bi-xun-huan-kuai", "vec_dot"

SNIPPET_CODE = '''\
# %% name="setup"
import timeit

a = [float(i) for i in range(10_000)]
b = [float(i % 7) for i in range(10_000)]

# %% name="main"
from perfblog.generator import glue, table

loop = min(timeit.repeat(lambda: [x * y for x, y in zip(a, b)], number=20, repeat=3))
builtin = min(timeit.repeat(lambda: sum(map(float.__mul__, a, b)), number=20, repeat=3))
print(f"loop {loop:.4f} s, map {builtin:.4f} s")
glue("ratio", loop / builtin)
table("sizes", [{"n": n, "loop (ms)": n / 1e3, "map (ms)": n / 2e3, "ratio": 2.0, "elements": n,
                 "bytes": 8 * n, "device": "cpu", "python": "3", "note": "a long note for a wide table"}
                for n in (10, 100, 1000)])
'''

POST = f'''\
---
date: 2026-11-01
slug: {SLUG}
description: 向量点积用 map 和内置函数为什么比逐个元素的循环快，本文用真实运行的代码测出两种写法的耗时之比。
keywords:
  - 向量点积
---

# {TITLE}

向量点积是数值计算里最常见的运算。本文比较逐个元素的循环和内置函数两种写法，看向量点积在纯 Python
中慢在哪里，快的写法又快多少。

<!-- more -->

## 向量点积的两种写法

下面的代码在一万个元素上各跑二十次，取三轮中最快的一轮。

<%= code("{SNIPPET}", "main") %>

<%= output("{SNIPPET}", "main") %>

两种写法的耗时之比（循环比内置函数）是 <%= value("{SNIPPET}", "ratio", ".2f") %>。每一轮都在同一台机器上
运行，运行它的设备和版本写在结果下方，数字来自真实的运行。

## 不同规模下的向量点积

<%= table("{SNIPPET}", "sizes") %>

规模越大，解释器逐个元素执行的开销越明显，向量点积两种写法的差别也随之变化。
'''


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """A command as the user types it, with the virtual environment's tools first on the PATH."""
    environ = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **env}
    environ.pop("BLOG_EXEC_MODE", None)
    environ.update(env)
    return subprocess.run(args, cwd=cwd, env=environ, capture_output=True, text=True, timeout=600)


def build_step(blog: Path) -> dict:
    """The deploy workflow's build step, as GitHub Actions would run it."""
    workflow = yaml.safe_load((blog / WORKFLOW).read_text(encoding="utf-8"))
    (step,) = [s for s in workflow["jobs"]["build"]["steps"] if s.get("name") == "Build"]
    return step


@pytest.fixture(scope="module")
def blog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new blog with a published post of one's own and its snippet run; the first post stays a draft."""
    root = tmp_path_factory.mktemp("own") / "notes"
    made = run(["blog", "init", str(root), "--name", NAME, "--url", URL], cwd=root.parent)
    assert made.returncode == 0, made.stderr
    added = run(["blog", "new", TITLE, "--snippet", SNIPPET], cwd=root)
    assert added.returncode == 0, added.stderr
    (root / "snippets" / f"{SNIPPET}.py").write_text(SNIPPET_CODE, encoding="utf-8")
    (root / "posts/posts" / f"{SLUG}.md").write_text(POST, encoding="utf-8")
    ran = run(["blog", "run", SNIPPET, "--device", "cpu"], cwd=root)
    assert ran.returncode == 0, ran.stderr
    return root


@pytest.fixture(scope="module")
def built(blog: Path) -> tuple[Path, str]:
    """The site, built by the workflow's own build step (its env and command), and what it logged."""
    step = build_step(blog)
    done = run(["bash", "-c", step["run"]], cwd=blog, **step["env"])
    assert done.returncode == 0, done.stderr
    return blog / "site", done.stderr


@pytest.mark.mkdocs
@pytest.mark.kernel
def test_a_new_blog_builds_strict_and_publishes_the_post_with_its_results(built: tuple[Path, str]) -> None:
    site, _ = built
    doc = lxml.html.document_fromstring((site / SLUG / "index.html").read_bytes())
    assert doc.get("lang") == "zh-CN"
    assert doc.xpath("//link[@rel='canonical']/@href") == [f"{URL}{SLUG}/"]
    assert doc.findtext(".//title").startswith(TITLE)
    article = doc.xpath("//article")[0].text_content()
    assert "loop " in article and " s, map " in article  # the output the snippet printed
    assert f"{SNIPPET} · main · CPU" in article  # the provenance line
    assert len(doc.xpath("//table//th")) == 9
    assert (site / "sitemap.xml").read_text(encoding="utf-8").count(f"{URL}{SLUG}/") == 1
    key = (site.parent / "indexnow.key").read_text(encoding="utf-8").strip()
    assert (site / f"{key}.txt").read_text(encoding="utf-8") == key


@pytest.mark.mkdocs
@pytest.mark.kernel
def test_the_build_names_the_draft_it_left_out(built: tuple[Path, str]) -> None:
    site, log = built
    assert "1 draft(s) left out of this build" in log and "posts/posts/di-yi-pian-wen-zhang.md" in log
    assert not (site / "di-yi-pian-wen-zhang").exists()


@pytest.mark.mkdocs
@pytest.mark.kernel
def test_a_placeholder_left_in_a_heading_or_the_text_fails_the_strict_build(blog: Path) -> None:
    post = blog / "posts/posts" / f"{SLUG}.md"
    filled = post.read_text(encoding="utf-8")
    try:
        post.write_text(filled.replace("## 不同规模下的向量点积", "## 待填写"), encoding="utf-8")
        done = run(["mkdocs", "build", "--strict", "-d", str(blog / "site-placeholder")], cwd=blog,
                   BLOG_EXEC_MODE="frozen", NO_MKDOCS_2_WARNING="1")
    finally:
        post.write_text(filled, encoding="utf-8")
    assert done.returncode == 1
    assert f"{SLUG}/index.html: placeholder-unfilled: 小标题里还留着占位文字「待填写」" in done.stderr


def test_blog_init_refuses_a_folder_that_holds_anything_and_names_it(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    (tmp_path / "posts").mkdir()
    done = run(["blog", "init", str(tmp_path), "--name", NAME], cwd=tmp_path)
    assert done.returncode == 2
    assert f"blog: error: {tmp_path} is not empty (it holds notes.txt, posts)" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "posts"]


@pytest.mark.parametrize("workflow", [REPO / WORKFLOW, "init"])
def test_the_deploy_workflow_passes_actionlint(workflow: Path | str, tmp_path: Path) -> None:
    if workflow == "init":
        assert run(["blog", "init", str(tmp_path / "b"), "--name", NAME], cwd=tmp_path).returncode == 0
        workflow = tmp_path / "b" / WORKFLOW
    done = run([str(BIN / "actionlint"), "-no-color", str(workflow)], cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("workflow", [REPO / WORKFLOW, "init"])
def test_the_deploy_workflow_builds_frozen_and_strict_then_deploys_to_pages(workflow: Path | str,
                                                                            tmp_path: Path) -> None:
    if workflow == "init":
        assert run(["blog", "init", str(tmp_path / "b"), "--name", NAME], cwd=tmp_path).returncode == 0
        workflow = tmp_path / "b" / WORKFLOW
    jobs = yaml.safe_load(Path(workflow).read_text(encoding="utf-8"))["jobs"]
    step = next(s for s in jobs["build"]["steps"] if s.get("name") == "Build")
    assert step["env"]["BLOG_EXEC_MODE"] == "frozen" and step["run"] == "mkdocs build --strict"
    assert [s.get("uses", "").split("@")[0] for s in jobs["deploy"]["steps"]] == ["actions/deploy-pages"]


@pytest.mark.browser
@pytest.mark.mkdocs
@pytest.mark.kernel
def test_on_a_390_px_phone_a_wide_table_scrolls_and_hides_no_column(built: tuple[Path, str]) -> None:
    from playwright import sync_api

    site, _ = built
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        tab = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        tab.goto((site / SLUG / "index.html").as_uri())
        table = tab.locator("article table").first
        sync_api.expect(table).to_be_visible()
        box = table.evaluate("""t => { for (let e = t.parentElement; e; e = e.parentElement) {
            if (['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
                return [e.clientWidth, e.scrollWidth]; }
            return null; }""")
        last = tab.locator("article table tr th").last
        last.scroll_into_view_if_needed()
        sync_api.expect(last).to_be_in_viewport()
        page_width = tab.evaluate("document.documentElement.scrollWidth")
        shot = site.parent / "phone.png"
        tab.screenshot(path=str(shot), full_page=True)
        print(f"screenshot: {shot}")
        browser.close()
    assert box is not None, "the table is in no box that scrolls sideways"
    assert box[0] <= 390 < box[1]  # narrower than the phone, holding a table wider than it
    assert page_width <= 390  # the page itself never scrolls sideways: the table's box does


@pytest.mark.mkdocs
@pytest.mark.kernel
def test_the_first_draft_of_blog_init_builds_strict_once_filled_in(tmp_path: Path) -> None:
    root = tmp_path / "first"
    assert run(["blog", "init", str(root), "--name", "First notes", "--url", URL, "--language", "en"],
               cwd=tmp_path).returncode == 0
    (post,) = (root / "posts/posts").glob("*.md")
    text = post.read_text(encoding="utf-8")
    assert text.count("TO FILL IN") == 4 and "draft: true" in text
    filled = (text.replace("draft: true\n", "")
              .replace("description: TO FILL IN", "description: How a first post of a perfblog blog shows "
                                                  "the code of a snippet and the output it printed.")
              .replace("  - TO FILL IN", "  - first post")
              .replace("## TO FILL IN", "## The first post and its snippet")
              .replace("TO FILL IN: the first paragraph says what question the post answers, with its focus "
                       "keyphrase (the first of its keywords) in it.",
                       "This first post shows a snippet's code and what it printed when it ran."))
    post.write_text(filled, encoding="utf-8")
    assert run(["blog", "run", "--device", "cpu"], cwd=root).returncode == 0
    done = run(["make", "site"], cwd=root)
    assert done.returncode == 0, done.stderr
    page = (root / "site" / post.stem / "index.html").read_text(encoding="utf-8")
    assert "first · main · CPU" in page and "device: cpu" in page
