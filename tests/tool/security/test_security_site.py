"""Hostile front matter end to end, in real MkDocs builds of a small blog: one escaped head, titles shown
as written, slugs that stay inside the site, an error or a finding naming the post instead of a crash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import lxml.html
import pytest
from paths import DATA

pytestmark = pytest.mark.mkdocs

FIXTURE = DATA / "seo" / "site"
POST = "docs/posts/fullgraph.md"
DESCRIPTION = ("用 torch.compile 的 fullgraph=True 找出图断裂：一次编译整个模型，"
               "看清 Dynamo 在哪里退回 Python，以及整图编译带来的速度差异。")
LEGIT = ('解释 "fullgraph=True" 为什么会报错，以及 List<Tensor> 参数如何让 Dynamo '
         "在编译整个模型时退回 Python 执行。")


def site(tmp_path: Path, front: str = "", body: bytes | None = None) -> Path:
    root = tmp_path / "blog"
    shutil.copytree(FIXTURE, root)
    post = root / POST
    if body is not None:
        post.write_bytes(body)
    elif front:
        text = post.read_text(encoding="utf-8")
        post.write_text(text.replace("---\n", f"---\n{front}\n", 1), encoding="utf-8")
    return root


def build(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "-f", str(root / "mkdocs.yml")],
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def test_quotes_and_angle_brackets_in_front_matter_leave_one_escaped_head(tmp_path: Path) -> None:
    root = site(tmp_path)
    post = root / POST
    text = post.read_text(encoding="utf-8").replace(f"description: {DESCRIPTION}", "description: '"
                                                    + LEGIT.replace("'", "''") + "'")
    post.write_text(text.replace("---\n", "---\ntitle: '</title><script>alert(1)</script>x'\n"
                                 "author: '\"><img src=x onerror=alert(2)>'\n", 1), encoding="utf-8")
    done = build(root)
    assert done.returncode == 0, done.stderr
    html = (root / "site" / "torch-compile-fullgraph" / "index.html").read_bytes()
    head = lxml.html.document_fromstring(html).find("head")
    assert head.xpath("meta[@name='description']/@content") == [LEGIT]  # one, whole
    assert len(head.xpath("title")) == 1
    assert not head.xpath(".//script[not(@type='application/ld+json')][contains(., 'alert')] | .//img"
                          " | .//*[@onerror]")
    assert head.xpath("meta[@name='author']/@content") == ['"><img src=x onerror=alert(2)>']


def test_a_front_matter_title_with_markup_shows_as_written_and_makes_no_element(tmp_path: Path) -> None:
    title = "x < 16 & <img src=x onerror=alert(1)>"
    root = site(tmp_path, front=f"title: '{title}'")
    post = root / POST  # no heading: the blog's listing takes the excerpt's title from the front matter
    heading = "# torch.compile 的 fullgraph 模式与图断裂\n"
    post.write_text(post.read_text(encoding="utf-8").replace(heading, ""), encoding="utf-8")
    done = build(root)
    assert done.returncode == 0, done.stderr
    for page in (root / "site").rglob("*.html"):
        doc = lxml.html.document_fromstring(page.read_bytes())
        assert not doc.xpath("//img[@onerror] | //*[@onerror] | //script[not(@type='application/ld+json')]"
                             "[contains(., 'alert')]"), page
    built = root / "site" / "torch-compile-fullgraph" / "index.html"
    doc = lxml.html.document_fromstring(built.read_bytes())
    topics = doc.xpath("//*[contains(@class, 'md-header__topic')]")
    shown = [" ".join(e.text_content().split()) for e in topics]
    assert shown[-1] == title and doc.findtext(".//title").startswith(title)
    listing = lxml.html.document_fromstring((root / "site" / "index.html").read_bytes())
    assert title in [" ".join(h.text_content().split()) for h in listing.xpath("//article//h2")]


def test_a_slug_outside_site_dir_fails_the_build_and_writes_nothing_outside(tmp_path: Path) -> None:
    root = site(tmp_path)
    post = root / POST
    post.write_text(post.read_text(encoding="utf-8").replace("slug: torch-compile-fullgraph",
                                                             "slug: ../../../../outside"), encoding="utf-8")
    done = build(root)
    assert done.returncode != 0
    assert "posts/fullgraph.md: would be written to" in done.stderr and "outside site_dir" in done.stderr
    assert not (tmp_path / "outside").exists() and not (root.parent.parent / "outside").exists()


def test_a_list_valued_description_is_a_finding_naming_the_post_and_the_build_goes_on(tmp_path: Path) -> None:
    root = site(tmp_path)
    post = root / POST
    post.write_text(post.read_text(encoding="utf-8").replace(f"description: {DESCRIPTION}",
                                                             "description: [a, b]"), encoding="utf-8")
    done = build(root)
    assert "front-matter-value-invalid: 1 warning" in done.stderr and "Traceback" not in done.stderr


def test_a_gbk_post_is_an_error_naming_its_path(tmp_path: Path) -> None:
    text = (FIXTURE / POST).read_text(encoding="utf-8")
    done = build(site(tmp_path, body=text.encode("gbk", errors="replace")))
    assert done.returncode != 0
    assert "fullgraph.md:" in done.stderr and "not UTF-8 text" in done.stderr
    assert "Traceback" not in done.stderr


def test_front_matter_that_is_a_list_is_an_error_naming_the_post(tmp_path: Path) -> None:
    done = build(site(tmp_path, body=b"---\n- a\n- b\n---\n\n# T\n\ntext\n"))
    assert done.returncode != 0
    assert "fullgraph.md:1: the front matter is a list" in done.stderr
    assert "Traceback" not in done.stderr


def test_mkdocs_serve_starts_on_a_fresh_blog_without_results(tmp_path: Path) -> None:
    """A fresh blog in auto mode: a snippets folder, posts that embed nothing yet, so nothing runs and no
    results folder exists when the preview starts watching it."""
    root = tmp_path / "fresh"
    shutil.copytree(DATA / "engine" / "blog", root,
                    ignore=shutil.ignore_patterns("_results", "site"))
    (root / "mkdocs.yml").write_text((root / "mkdocs.yml").read_text().replace("exec_mode: frozen",
                                                                               "exec_mode: auto"))
    for post in (root / "posts").rglob("*.md"):
        lines = post.read_text().splitlines(keepends=True)
        post.write_text("".join(line for line in lines if "<%" not in line))
    argv = [sys.executable, "-m", "mkdocs", "serve", "-a", "127.0.0.1:0"]
    env = {k: v for k, v in os.environ.items() if k != "BLOG_EXEC_MODE"}
    server = subprocess.Popen(argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              env={**env, "NO_MKDOCS_2_WARNING": "1"})
    log = ""
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and server.poll() is None:
            line = server.stderr.readline()
            log += line
            if "Serving on" in line:
                break
        assert server.poll() is None and "Serving on" in log, log
    finally:
        server.terminate()
        server.communicate(timeout=30)
