"""Every URL the seo plugin writes resolves, whatever the path's script.

A site whose pages have Chinese paths, spaces, `+` and parentheses, under a `site_url` with a subpath, is
built with `use_directory_urls` true and false and served over HTTP from 127.0.0.1 as a static host
serves it (the subpath taken off). Each URL the plugin wrote (og:image, canonical, hreflang, sitemap
`<loc>` and its alternates, feed links) is fetched and must be the file it names; the audit finds no
page linked from the home page unreachable or orphaned. The same check runs on a copy of a real Chinese
blog (tests/data/blogs/wcowin: Chinese post slugs, a subpath).
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urlsplit
from urllib.request import urlopen

import blogs
import lxml.etree
import lxml.html
import pytest

from perfblog.seo import feed, sitemap
from perfblog.seo.audit import audit_site

pytestmark = pytest.mark.mkdocs

SITE_URL = "https://blog.example.com/notes/"
CONFIG = """\
site_name: 中文路径测试
site_url: {site_url}
site_description: 一个页面路径全是中文、空格、加号和括号的站点，用来检查每个写出的网址都能打开。
use_directory_urls: {directory_urls}
theme: {{name: material, language: zh}}
plugins:
  - search
  - blog:
      blog_dir: 博客
      post_url_format: "{{slug}}"
      post_slugify: !!python/object/apply:pymdownx.slugs.slugify {{kwds: {{case: lower}}}}
  - seo
"""
POST = """\
---
date: 2024-0{n}-01
description: 第 {n} 篇文章，用来检查中文路径的社交卡片、规范链接、站点地图和订阅源都指向真实的文件。
---

# 编译笔记 第{n}篇

正文：torch.compile 的整图编译，看看 {n} 号文章的链接能不能打开。{links}
"""
PAGES = {
    "index.md": "# 首页\n\n欢迎。[加号页](<笔记/a+b (1).md>)、[空格页](<笔记/中文 空格.md>)、"
                "[博客](博客/index.md)、[第一篇](博客/posts/one.md)、[第二篇](博客/posts/two.md)。\n",
    "笔记/a+b (1).md": "# 加号与括号\n\n一个路径里有加号、空格和括号的页面。[回到首页](../index.md)\n",
    "笔记/中文 空格.md": "# 中文与空格\n\n一个路径里有中文和空格的页面。[加号页](<a+b (1).md>)\n",
    "en/a+b (1).md": "---\nlang: en\ntranslation_of: ../笔记/a+b (1).md\n---\n\n# Plus and parentheses\n\n"
                     "The English version of a page whose path has a plus sign and parentheses.\n",
    "博客/index.md": "# 博客\n",
    "博客/posts/one.md": POST.format(n=1, links=" 下一篇见[第二篇](two.md)。"),
    "博客/posts/two.md": POST.format(n=2, links=" 上一篇是[第一篇](one.md)。"),
}


def _write_site(root: Path, directory_urls: bool) -> Path:
    config = CONFIG.format(site_url=SITE_URL, directory_urls=str(directory_urls).lower())
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    for name, text in PAGES.items():
        path = root / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _build(root: Path) -> Path:
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q"], cwd=root, capture_output=True,
                            text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr
    return root / "site"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def serve() -> Iterator:
    """serve(site_dir) -> the http://127.0.0.1:PORT/ address serving it; servers stop after the module."""
    servers = []

    def start(site: Path) -> str:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                 functools.partial(_Quiet, directory=str(site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def written_urls(site: Path) -> dict[str, set[str]]:
    """Each URL the plugin wrote into the built site, by what wrote it."""
    found: dict[str, set[str]] = {"og:image": set(), "canonical": set(), "hreflang": set(), "sitemap": set(),
                                  "feed": set()}
    for page in site.rglob("*.html"):
        if page.name == "404.html" or page.is_relative_to(site / "_seo"):
            continue
        data = page.read_bytes()
        if not data.lstrip()[:15].lower().startswith(b"<!doctype html"):  # a fragment the blog copies as
            continue  # it is (wcowin's overrides/partials/meta.html), no page MkDocs built
        head = lxml.html.document_fromstring(data).head
        found["og:image"].update(head.xpath("meta[@property='og:image']/@content"))
        found["canonical"].update(head.xpath("link[@rel='canonical']/@href"))
        found["hreflang"].update(head.xpath("link[@rel='alternate'][@hreflang]/@href"))
    found["sitemap"].update(sitemap.locs(site))
    found["sitemap"].update(lxml.etree.parse(site / "sitemap.xml").xpath(
        "//x:link/@href", namespaces={"x": sitemap.XHTML}))
    if (site / feed.FEED_NAME).is_file():
        found["feed"].update(lxml.etree.parse(site / feed.FEED_NAME).xpath(
            "//a:link/@href", namespaces={"a": feed.ATOM}))
    return found


def unresolved(site: Path, site_url: str, address: str) -> list[str]:
    """The written URLs that do not resolve over HTTP to the file they name (with why)."""
    failures = []
    for kind, urls in written_urls(site).items():
        for url in sorted(urls):
            if not url.isascii() or not url.startswith(site_url):
                failures.append(f"{kind} {url}: not an ASCII URL of the site")
                continue
            try:
                with urlopen(address + url[len(site_url):], timeout=10) as response:
                    body, kind_of = response.read(), response.headers.get_content_type()
            except HTTPError as exc:
                failures.append(f"{kind} {url}: HTTP {exc.code}")
                continue
            if kind_of == "text/html":  # the page it names (`x/` may name `x/index.html`), no other
                served = lxml.html.document_fromstring(body).head.xpath("link[@rel='canonical']/@href")
                if served not in ([url], [url + "index.html"] if url.endswith("/") else [url]):
                    failures.append(f"{kind} {url}: serves the page whose canonical is {served}")
            elif kind == "og:image" and not body.startswith(b"\x89PNG"):
                failures.append(f"{kind} {url}: {kind_of}, not a PNG")
    return failures


@pytest.fixture(scope="module", params=[True, False], ids=["directory-urls", "file-urls"])
def chinese_site(request, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("chinese")
    return _build(_write_site(root, request.param))


def test_every_written_url_of_a_site_with_chinese_spaced_and_plus_paths_resolves(chinese_site, serve):
    urls = written_urls(chinese_site)
    assert all(urls.values()), urls  # each kind was written: the check below is not empty
    assert any("%E7%AC%94%E8%AE%B0/a%2Bb%20%281%29" in url for url in urls["canonical"])
    assert unresolved(chinese_site, SITE_URL, serve(chinese_site)) == []


def test_card_file_names_are_short_and_ascii(chinese_site):
    names = [path.name for path in (chinese_site / "_seo" / "cards").iterdir()]
    assert names and all(name.isascii() and "%" not in name and len(name) <= 64 for name in names)


def test_pages_the_home_page_links_are_neither_unreachable_nor_orphans(chinese_site):
    """Percent-encoded links meet files with Chinese names (kgarden: 255 false link-depth-deep of 255)."""
    graph = [f for f in audit_site(chinese_site).findings if f.rule in ("link-depth-deep", "orphan-post")]
    assert graph == []


@pytest.mark.blogs
def test_every_written_url_of_a_real_chinese_blog_with_a_subpath_resolves(tmp_path, serve):
    """wcowin: materialx's Material, Chinese post slugs, site_url https://wcowin.work/Mkdocs-Wcowin/."""
    root = blogs.copy("wcowin", tmp_path)
    result = blogs.build(root, "-q")
    assert result.returncode == 0, result.stderr
    site_url = next(line.split(":", 1)[1].strip() for line in (root / "mkdocs.yml").read_text(
        encoding="utf-8").splitlines() if line.startswith("site_url:"))
    site_url = site_url.rstrip("/") + "/"
    assert urlsplit(site_url).path != "/"  # a subpath, taken off when served
    assert any(not url.isascii() or "%" in url for url in written_urls(root / "site")["canonical"])
    assert unresolved(root / "site", site_url, serve(root / "site")) == []

