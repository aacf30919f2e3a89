"""`blog init` writes data, not code.

Its arguments are untrusted text: `--url` is checked, every value is a quoted scalar of mkdocs.yml that
is read back before MkDocs (whose loader runs ``!!python`` tags) loads it, the name is escaped in the
home page's Markdown and in the theme's HTML, and a failed init leaves nothing behind. The built site
is checked in Debian's chromium (`browser`): no element from the name in the DOM, no script ran.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import browser
import lxml.html
import markdown
import pytest

from perfblog.cli import main
from perfblog.cli.init import PARTS
from perfblog.core import init, project
from perfblog.core.errors import BlogError
from perfblog.core.escape import html_text
from perfblog.core.init import InitError, NewSite

#: Runs a command that leaves a file behind, if YAML in mkdocs.yml is ever constructed as Python.
SMUGGLED = '\nextra: !!python/object/apply:os.system ["touch {marker}"] #'
#: A name that is markup, breaks out of a double- and a single-quoted attribute, and is Markdown.
NAME = """"><img src=x onerror=alert(1)><script>alert(2)</script>' [a](https://evil.example/) {: #x} *b*"""


def init_blog(folder: Path, *args: str) -> int:
    return main(["init", str(folder), *args])


def one_line_error(capsys: pytest.CaptureFixture) -> str:
    err = capsys.readouterr().err
    assert err.startswith("blog: error: ") and err.count("\n") == 1, err
    return err


def test_a_url_that_smuggles_yaml_is_refused_and_nothing_is_created(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    marker = tmp_path / "pwned"
    url = "https://x.example/" + SMUGGLED.format(marker=marker)
    assert init_blog(tmp_path / "blog", "--name", "x", "--url", url) == 2
    assert "--url 'https://x.example/\\nextra:" in one_line_error(capsys)
    assert not marker.exists()
    assert list(tmp_path.iterdir()) == []  # neither the folder nor a temporary one


@pytest.mark.parametrize("url", [
    "https://user:secret@x.example/", "https://token@x.example/", "https://x.example/#top",
    "https://x.example/?utm=1", "https://x.example/a b", "https://x.example/\tb", "https://x.example/\x1b[0m",
    'https://x.example/"onmouseover=', "https://x.example\\@evil.example/", "ftp://x.example/",
    "javascript:alert(1)", "https:///path", "http://[::1", "https://x.example:port/", "x.example",
    "https://x.example/\u2028",
])  # fmt: skip
def test_a_url_that_is_not_a_plain_http_address_of_a_host_is_one_line_and_no_folder(
        url: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert init_blog(tmp_path / "blog", "--name", "x", "--url", url) == 2
    assert "--url " in one_line_error(capsys)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("given", "site_url"), [
    ("https://notes.example.cn", "https://notes.example.cn/"),
    ("http://localhost:8000/blog/", "http://localhost:8000/blog/"),
    ("https://博客.example/笔记", "https://博客.example/笔记/"),
])  # fmt: skip
def test_a_plain_address_is_kept_with_one_trailing_slash(given: str, site_url: str, tmp_path: Path) -> None:
    assert init_blog(tmp_path / "blog", "--name", "x", "--url", given) == 0
    assert project.load(tmp_path / "blog" / "mkdocs.yml").config.site_url == site_url


def test_the_name_is_one_quoted_value_of_mkdocs_yml_and_text_on_the_home_page(tmp_path: Path) -> None:
    blog = tmp_path / "blog"
    assert init_blog(blog, "--name", NAME, "--url", "https://x.example/") == 0
    assert project.load(blog / "mkdocs.yml").config.site_name == NAME  # MkDocs' own loader reads it whole
    home = (blog / "posts" / "index.md").read_text(encoding="utf-8")
    html = markdown.markdown(home, extensions=["attr_list", "md_in_html", "tables"])
    page = lxml.html.fragment_fromstring(html, create_parent="div")
    assert not page.xpath("//img | //script | //a | //em | //*[@id]")  # nothing but text
    assert page.xpath("//h1")[0].text_content() == NAME
    assert NAME in page.xpath("//p")[0].text_content()


def test_the_first_post_holds_nothing_of_the_arguments(tmp_path: Path) -> None:
    assert init_blog(tmp_path / "blog", "--name", NAME, "--url", "https://x.example/") == 0
    for written in (tmp_path / "blog").rglob("*"):
        if written.is_file() and written.name not in ("mkdocs.yml", "index.md"):
            assert "evil.example" not in written.read_text(encoding="utf-8"), written


@pytest.mark.parametrize("name", ["a\nb", "a\x00b", "a\x1b[31mb", "a\u2029b", "\ud800", "   "])
def test_a_name_that_is_not_one_line_of_text_is_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(InitError, match="--name"):
        init.create(tmp_path / "blog", NewSite(name=name, url="https://x.example/", language="zh"))
    assert list(tmp_path.iterdir()) == []


def test_a_config_that_would_not_read_back_as_meant_is_never_loaded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The read-back is the second line: were quoting ever wrong, MkDocs' loader would not see the file."""
    marker = tmp_path / "pwned"
    monkeypatch.setattr(init, "_quoted", lambda value: value + SMUGGLED.format(marker=marker)
                        if value == "x" else f'"{value}"')
    with pytest.raises(InitError, match=r"mkdocs\.yml does not read back as written"):
        init.create(tmp_path / "blog", NewSite(name="x", url="https://x.example/", language="zh"))
    assert not marker.exists()
    assert list(tmp_path.iterdir()) == []


def _failing(layout: project.Layout, site: NewSite) -> list[Path]:
    (layout.root / "half.txt").write_text("written before the failure\n", encoding="utf-8")
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize("exists", [False, True])
def test_a_failed_init_leaves_nothing_and_a_retry_works(exists: bool, tmp_path: Path) -> None:
    blog = tmp_path / "parent" / "blog"
    if exists:
        blog.mkdir(parents=True)
    site = NewSite(name="笔记", url="https://x.example/", language="zh")
    with pytest.raises(BlogError, match="No space left on device"):
        init.create(blog, site, (*PARTS, _failing))
    if exists:
        assert list(blog.iterdir()) == [] and list(blog.parent.iterdir()) == [blog]
    else:
        assert list(tmp_path.iterdir()) == []  # the parent made for it is gone too
    written = init.create(blog, site, PARTS)
    assert (blog / "mkdocs.yml") in written and (blog / "indexnow.key").is_file()
    assert not (blog / "half.txt").exists() and not any(p.name.startswith(".") and p.is_dir()
                                                        and p.name != ".github" for p in blog.iterdir())


def test_init_in_the_empty_current_folder_keeps_that_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    inode = here.stat().st_ino
    assert init_blog(Path("."), "--name", "x") == 0
    assert here.stat().st_ino == inode and (here / "mkdocs.yml").is_file()
    assert list(tmp_path.iterdir()) == [here]  # nothing beside it either


def test_the_html_escape_changes_no_plain_name_and_is_done_once() -> None:
    assert html_text("PyTorch 性能笔记") == "PyTorch 性能笔记"  # pages of such a site stay byte for byte
    once = html_text('a "<b>" & c')
    assert once == "a &#34;&lt;b&gt;&#34; &amp; c" and html_text(once) == once


# --- the built site in a browser ------------------------------------------------------------------------

POST = """\
---
date: 2026-11-01
slug: hello
description: 一篇用来检查站点名称转义的文章：站点名称里的标记在每个页面上都只是文字，不会成为元素或脚本。
---

# 你好

站点名称里的标记在这个页面上只是文字。
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A blog made by `blog init --name NAME` with one published post, built and served on 127.0.0.1."""
    blog = tmp_path_factory.mktemp("hostile-name") / "blog"
    assert init_blog(blog, "--name", NAME, "--url", "https://x.example/") == 0
    (blog / "posts" / "posts" / "hello.md").write_text(POST, encoding="utf-8")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-f", str(blog / "mkdocs.yml")],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "BLOG_EXEC_MODE": "frozen"})
    assert built.returncode == 0, built.stderr
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              cwd=blog / "site", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url, timeout=5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.mkdocs
@pytest.mark.browser
def test_in_a_browser_the_name_is_text_on_the_home_page_and_a_post(served: str) -> None:
    with browser.page() as (view, dialogs):
        for path in ("", "hello/"):
            view.goto(served + path, wait_until="load", timeout=60_000)
            assert view.evaluate("""() => document.querySelectorAll(
                'img[src="x"], [onerror], a[href^="https://evil.example"]').length""") == 0, path
            assert view.evaluate("""() => [...document.scripts].filter(s => s.text.includes('alert(')
                && s.type !== 'application/ld+json').length""") == 0, path  # JSON-LD is data, never run
            logo = view.locator("header a.md-logo")
            assert logo.get_attribute("aria-label") == NAME and logo.get_attribute("title") == NAME
            assert view.locator(".md-header__topic .md-ellipsis").first.inner_text() == NAME
            assert NAME in view.title()
        view.wait_for_timeout(300)  # an onerror would have fired by now
        assert dialogs == []
