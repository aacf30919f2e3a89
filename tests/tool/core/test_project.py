"""One project loader for every command and both plugins: mkdocs.yml, found the way git finds a repo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from perfblog.core import project
from perfblog.core.errors import ProjectError

MKDOCS_YML = """\
site_name: 测试站
site_url: !ENV [PERFBLOG_TEST_SITE_URL, "https://fallback.example.org"]
docs_dir: content
theme: {name: material, language: zh}
plugins:
  - blog: {blog_dir: ., post_url_format: "{slug}"}
  - snippets: {snippets_dir: code, results_dir: code/_frozen}
  - seo: {seo_audit: false, seo_feed: false}
"""

POST = """\
---
date: 2024-01-05
slug: answer
description: 一个测试页面，用来检查快照结果目录与站点地址都来自同一个配置文件，而不是命令自己的默认值。
---

# 答案

答案是 <%= value("calc", "n") %>。
"""

SNIPPET = '# %% name="main"\nfrom perfblog.generator import glue\nglue("n", 6 * 7)\n'


def git(root: Path, *args: str, when: str | None = None) -> None:
    env = {**os.environ, **({"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {})}
    subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)


def blog(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BLOG_EXEC_MODE"}
    return subprocess.run([sys.executable, "-m", "perfblog.cli", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site whose folders are all non-default, in a git repository, with its post committed first."""
    root = tmp_path_factory.mktemp("project")
    (root / "mkdocs.yml").write_text(MKDOCS_YML, encoding="utf-8")
    (root / "content" / "posts").mkdir(parents=True)
    (root / "content" / "index.md").write_text("# 首页\n", encoding="utf-8")
    (root / "content" / "posts" / "answer.md").write_text(POST, encoding="utf-8")
    (root / "code").mkdir()
    (root / "code" / "calc.py").write_text(SNIPPET, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.org")
    git(root, "config", "user.name", "t")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "post", "--no-gpg-sign", when="2024-02-01T00:00:00+00:00")
    return root


def test_the_config_is_found_in_the_current_folder_or_a_parent(site: Path) -> None:
    assert project.find_config(site / "content" / "posts") == site / "mkdocs.yml"
    assert project.find_config(site) == site / "mkdocs.yml"


def test_the_loader_reads_the_snippets_plugins_folders_and_the_env_site_url(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFBLOG_TEST_SITE_URL", "https://blog.example.net/notes")
    loaded = project.load(start=site / "content")
    assert loaded.site_url == "https://blog.example.net/notes/"  # one trailing slash, added once
    assert loaded.layout.docs_dir == site / "content"
    assert loaded.layout.posts_dir == site / "content" / "posts"
    assert loaded.layout.snippets_dir == site / "code"
    assert loaded.layout.results_dir == site / "code" / "_frozen"
    assert loaded.language == "zh-CN"


def test_outside_a_site_a_command_says_so_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    done = blog(tmp_path, "run")
    assert done.returncode == 2
    assert "mkdocs.yml not found" in done.stderr and "-f" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_config_error_is_one_line_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nplugins:\n  - snippets: {exec_mode: sometimes}\n")
    (tmp_path / "docs").mkdir()
    with pytest.raises(ProjectError, match=r"mkdocs\.yml: .*exec_mode"):
        project.load(start=tmp_path)


@pytest.mark.kernel
def test_blog_run_and_status_from_a_subfolder_use_the_sites_results_dir(site: Path) -> None:
    sub = site / "content" / "posts"
    done = blog(sub, "run", "--device", "cpu")
    assert done.returncode == 0, done.stderr
    stored = list((site / "code" / "_frozen" / "calc").glob("cpu-*.json"))
    assert len(stored) == 1 and json.loads(stored[0].read_text())["values"]["n"]["value"] == 42
    assert sorted(p.name for p in sub.iterdir()) == ["answer.md"]  # no store, no lock where we stood
    assert blog(sub, "status").returncode == 0
    assert blog(site / "code", "show", "calc").returncode == 0


def test_blog_new_writes_into_the_sites_posts_and_snippets_folders(site: Path) -> None:
    done = blog(site / "code", "new", "图断裂", "--snippet")
    assert done.returncode == 0, done.stderr
    assert (site / "content" / "posts" / "tu-duan-lie.md").is_file()
    assert (site / "code" / "tu-duan-lie.py").is_file()
    post = (site / "content" / "posts" / "tu-duan-lie.md").read_text(encoding="utf-8")
    assert "code/tu-duan-lie.py" in post  # the embed comment names the snippet where it really is
    for made in ("content/posts/tu-duan-lie.md", "code/tu-duan-lie.py"):
        (site / made).unlink()


def test_f_names_the_config_explicitly(site: Path, tmp_path: Path) -> None:
    done = blog(tmp_path, "status", "-f", str(site / "mkdocs.yml"))
    assert done.returncode in (0, 1), done.stderr  # it found the site's snippets, wherever we stand
    assert "calc" in done.stdout


@pytest.mark.kernel
@pytest.mark.mkdocs
def test_a_post_is_dated_by_its_embedded_snippets_results_in_the_configured_folders(site: Path) -> None:
    """The snippets plugin lists a page's embeds in its meta; the seo plugin dates the page by them."""
    if not list((site / "code" / "_frozen").rglob("*.json")):
        assert blog(site, "run", "--device", "cpu").returncode == 0
    git(site, "add", "code/_frozen")
    git(site, "commit", "-qm", "results", "--no-gpg-sign", when="2024-03-15T09:30:00+00:00")
    env = {**os.environ, "PERFBLOG_TEST_SITE_URL": "https://env.example.com/", "NO_MKDOCS_2_WARNING": "1"}
    env.pop("BLOG_EXEC_MODE", None)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=site, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    sitemap = (site / "site" / "sitemap.xml").read_text(encoding="utf-8")
    entry = sitemap.split("<loc>https://env.example.com/answer/</loc>", 1)[1].split("</url>", 1)[0]
    assert "<lastmod>2024-03-15T09:30:00Z</lastmod>" in entry
    page = (site / "site" / "answer" / "index.html").read_text(encoding="utf-8")
    assert 'class="snippet-value"' in page and ">42</span>" in page


def test_page_language_is_the_front_matters_else_the_sites() -> None:
    assert project.page_language({"lang": "en"}, "zh-CN") == "en"
    assert project.page_language({}, "zh-CN") == "zh-CN"
    assert project.language_tag("zh") == "zh-CN" and project.language_tag("en-us") == "en-US"


def test_a_layout_without_a_config_uses_the_conventional_folders(tmp_path: Path) -> None:
    layout = project.Layout.of_folders(tmp_path, tmp_path / "s")
    assert layout.results_dir == (tmp_path / "s" / "_results").resolve()
    assert layout.state_dir == tmp_path.resolve() / ".blog"
