"""End to end: `mkdocs build --strict` of a small site with Material's blog and our `seo` plugin."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest
import xmlschema

pytestmark = pytest.mark.mkdocs

FIXTURES = Path(__file__).parent / "fixtures" / "seo"
MKDOCS = [
    sys.executable,
    "-m",
    "mkdocs",
    "build",
    "--strict",
]  # --quiet would hide the warnings strict counts
POST = "docs/posts/fullgraph.md"


def _build(site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*MKDOCS, "-f", str(site / "mkdocs.yml"), "-d", str(site / "site")],
        capture_output=True, text=True, timeout=120, env={"NO_MKDOCS_2_WARNING": "1", "PATH": ""},
    )  # fmt: skip


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("blog")
    shutil.copytree(FIXTURES / "site", root, dirs_exist_ok=True)
    result = _build(root)
    assert result.returncode == 0, result.stderr
    return root / "site"


def _doc(built: Path, page: str):
    return lxml.html.document_fromstring((built / page).read_bytes())


def test_post_head_has_one_complete_set_of_tags(built):
    doc = _doc(built, "torch-compile-fullgraph/index.html")
    assert doc.get("lang") == "zh-CN"
    assert doc.xpath("//title/text()") == ["torch.compile 的 fullgraph 模式与图断裂 - 编译笔记"]
    assert len(doc.xpath("//meta[@name='description']")) == 1
    assert doc.xpath("//meta[@name='keywords']/@content") == ["torch.compile, 图断裂, fullgraph"]
    assert doc.xpath("//link[@rel='canonical']/@href") == [
        "https://blog.example.com/notes/torch-compile-fullgraph/"
    ]
    assert doc.xpath("//meta[@property='og:type']/@content") == ["article"]
    assert doc.xpath("//meta[@property='og:image']/@content") == ["https://blog.example.com/notes/chart.svg"]
    assert doc.xpath("//meta[@name='twitter:card']/@content") == ["summary_large_image"]
    assert doc.xpath("//meta[@name='baidu-site-verification']/@content") == ["codeva-TEST123"]
    assert doc.xpath("//meta[@name='google-site-verification']/@content") == ["g-TEST456"]
    assert "no-transform" in doc.xpath("//meta[@http-equiv='Cache-Control']/@content")
    data = json.loads(doc.xpath("//script[@type='application/ld+json']/text()")[0])
    assert data["@type"] == "BlogPosting"
    assert data["headline"] == "torch.compile 的 fullgraph 模式与图断裂"
    assert data["datePublished"].startswith("2024-05-02")
    assert data["dateModified"].startswith("2024-06-10")
    assert data["author"]["name"] == "测试作者"


def test_archive_page_gets_a_generated_description_and_no_keywords(built):
    doc = _doc(built, "archive/2024/index.html")
    (description,) = doc.xpath("//meta[@name='description']/@content")
    assert "torch.compile 的 fullgraph 模式与图断裂" in description
    assert not doc.xpath("//meta[@name='keywords']")
    assert doc.xpath("//meta[@property='og:type']/@content") == ["website"]


def test_sitemap_replaces_mkdocs_one_with_true_lastmod_and_no_draft(built):
    xmlschema.XMLSchema(FIXTURES / "sitemap.xsd").validate(str(built / "sitemap.xml"))
    text = (built / "sitemap.xml").read_text()
    assert (
        "<loc>https://blog.example.com/notes/torch-compile-fullgraph/</loc><lastmod>2024-06-10T00:00:00Z"
        in text
    )
    assert "unfinished-draft" not in text and "404" not in text
    assert (built / "sitemap.txt").read_text().splitlines()[0] == "https://blog.example.com/notes/"
    assert (built / "sitemap.xml.gz").is_file()
    assert "Sitemap: https://blog.example.com/notes/sitemap.xml" in (built / "robots.txt").read_text()
    assert "torch-compile-fullgraph" in (built / "feed.xml").read_text()
    assert "unfinished-draft" not in (built / "feed.xml").read_text()


def test_404_page_is_noindex(built):
    assert _doc(built, "404.html").xpath("//meta[@name='robots']/@content") == ["noindex"]


def test_built_site_passes_the_audit(built):
    from perfblog.seo.audit import audit_site

    assert [f for f in audit_site(built).findings if f.severity != "info"] == []


def test_stuffed_post_fails_the_strict_build(tmp_path):
    shutil.copytree(FIXTURES / "site", tmp_path, dirs_exist_ok=True)
    post = tmp_path / POST
    post.write_text(
        post.read_text(encoding="utf-8") + "\n" + "torch.compile 真快。" * 40 + "\n", encoding="utf-8"
    )
    result = _build(tmp_path)
    assert result.returncode != 0
    assert "keyword-density-high" in result.stderr


def test_post_without_description_fails_naming_the_file(tmp_path):
    shutil.copytree(FIXTURES / "site", tmp_path, dirs_exist_ok=True)
    post = tmp_path / POST
    post.write_text(post.read_text(encoding="utf-8").replace("description:", "summary:", 1), encoding="utf-8")
    result = _build(tmp_path)
    assert result.returncode != 0
    assert "posts/fullgraph.md" in result.stderr and "description" in result.stderr


def test_paginated_views_get_their_own_title_and_description(built):
    heads = {}
    for page in sorted(built.rglob("index.html")):
        doc = _doc(built, page.relative_to(built).as_posix())
        heads[page.relative_to(built).as_posix()] = (
            doc.findtext(".//title"),
            doc.xpath("//meta[@name='description']/@content")[0],
        )
    assert heads["page/2/index.html"][0] == "编译笔记（第 2 页）"
    assert heads["archive/2024/page/2/index.html"][0] == "2024（第 2 页） - 编译笔记"
    titles = [title for title, _ in heads.values()]
    descriptions = [description for _, description in heads.values()]
    assert len(set(titles)) == len(titles) == 6
    assert len(set(descriptions)) == len(descriptions)
