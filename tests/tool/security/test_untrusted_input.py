"""A hostile result file or URL is one line naming the file, never a traceback.

A result file nested 100,000 deep (a RecursionError in ``json.loads``) or too large, and `http://[::1`
(an unclosed IPv6 bracket, on which urllib raises ValueError) in a link, a canonical, a front-matter
`image` or a built page the audit reads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from paths import DATA, ROOT

from perfblog.cli import main
from perfblog.generator.store import store
from perfblog.seo import pages

ENGINE = DATA / "engine" / "blog"
NESTED = "[" * 100_000 + "]" * 100_000


def _blog(tmp_path: Path, result: str) -> Path:
    root = tmp_path / "blog"
    shutil.copytree(ENGINE, root)
    stored = root / "snippets" / "_results" / "demo" / "cpu-x86_64.json"
    stored.parent.mkdir(parents=True)
    stored.write_text(result)
    return root


def test_a_result_file_nested_100000_deep_is_one_line_with_exit_2(tmp_path: Path, monkeypatch,
                                                                   capsys) -> None:
    monkeypatch.chdir(_blog(tmp_path, NESTED))
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert err == ("blog: error: snippets/_results/demo/cpu-x86_64.json: unreadable result file: "
                   "nested too deeply\n")


def test_a_result_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path: Path, monkeypatch,
                                                                           capsys) -> None:
    monkeypatch.chdir(_blog(tmp_path, "{}" + " " * 2000))
    monkeypatch.setattr(store, "MAX_RESULT_BYTES", 1000)
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert "cpu-x86_64.json: unreadable result file: 2002 bytes, more than the 1000 read" in err


def test_the_result_size_limit_leaves_room_above_every_committed_result() -> None:
    largest = max(p.stat().st_size for p in (ROOT / "snippets" / "_results").rglob("*.json"))
    assert largest * 100 < store.MAX_RESULT_BYTES


@pytest.mark.mkdocs
def test_a_result_file_nested_100000_deep_fails_the_build_naming_it(tmp_path: Path) -> None:
    root = _blog(tmp_path, NESTED)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-d", str(tmp_path / "site")], cwd=root,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 1
    assert "snippets/_results/demo/cpu-x86_64.json: unreadable result file: nested too deeply" in done.stderr
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr


# --- `http://[::1`: urllib's ValueError becomes a finding or one line naming the file ------------------

BAD = "http://[::1"
SEO_SITE = DATA / "seo" / "site"


def test_an_unparsable_url_in_a_built_page_is_a_finding_of_the_audit(tmp_path: Path, capsys) -> None:
    """A page copied from docs_dir as HTML (or a post's raw HTML): the canonical, an hreflang link, og:url,
    a link, an image and a stylesheet all say `http://[::1`; the audit reports them and goes on."""
    (tmp_path / "old.html").write_text(
        f'<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>旧页面</title>'
        f'<link rel="canonical" href="{BAD}/old/"><link rel="alternate" hreflang="en" href="{BAD}/en/">'
        f'<meta property="og:url" content="{BAD}"><link rel="stylesheet" href="{BAD}/s.css"></head>'
        f'<body><article><p>正文 <a href="{BAD}/x">旧地址</a> <img src="{BAD}/i.png" alt="图"></p></article>'
        f"</body></html>", encoding="utf-8")
    assert main(["seo", "audit", "--strict", "--format", "json", str(tmp_path)]) == 1
    report = json.loads(capsys.readouterr().out)
    found = {(f["rule"], f["message"]) for f in report["findings"]}
    assert ("canonical-not-absolute", f"canonical '{BAD}/old/' is not a URL") in found
    assert ("hreflang-invalid", f"an hreflang link names '{BAD}/en/', which is not a URL") in found
    assert ("link-empty-href", f"link '旧地址' has href '{BAD}/x', which is not a URL") in found


def test_an_unparsable_front_matter_image_is_left_out_with_one_finding_naming_the_post() -> None:
    page = SimpleNamespace(meta={"image": f"{BAD}/card.png"}, file=SimpleNamespace(src_uri="posts/p.md"),
                           content="")
    site = SimpleNamespace(url="https://blog.example.com/", default_image=None)
    found: list = []
    assert pages._image(page, site, "https://blog.example.com/p/", "P", None, found) is None
    assert [(f.page, f.rule, f.message) for f in found] == [
        ("posts/p.md", "front-matter-value-invalid",
         "`image` 'http://[::1/card.png' is not a URL or a path of the site; the head leaves it out")]


def test_an_unparsable_image_in_a_page_is_not_its_og_image() -> None:
    assert pages._first_image(f'<p><img src="{BAD}/a.png"><img src="/b.png"></p>') == "/b.png"


@pytest.mark.mkdocs
def test_an_unparsable_url_in_a_markdown_link_fails_the_build_naming_the_post(tmp_path: Path) -> None:
    """MkDocs splits every link's URL while converting the page (and urllib raises ValueError)."""
    root = tmp_path / "blog"
    shutil.copytree(SEO_SITE, root)
    post = root / "docs" / "posts" / "fullgraph.md"
    post.write_text(post.read_text(encoding="utf-8") + f"\n见 [本地]({BAD}) 一节。\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-d", str(tmp_path / "site")], cwd=root,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 1
    assert f"docs/posts/fullgraph.md: the link '{BAD}' is not a URL (Invalid IPv6 URL)" in done.stderr
    assert "Traceback" not in done.stderr
