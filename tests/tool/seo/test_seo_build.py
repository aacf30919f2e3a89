"""End to end: `mkdocs build --strict` of a small site with Material's blog and our `seo` plugin."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import lxml.html
import pytest
import xmlschema
from mkdocs.config import load_config
from paths import DATA
from PIL import Image

from perfblog.seo.theme import COPY_SCRIPT, _copy_after_load

pytestmark = pytest.mark.mkdocs

FIXTURES = DATA / "seo"
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
    (image,) = doc.xpath("//meta[@property='og:image']/@content")
    assert image.startswith("https://blog.example.com/notes/_seo/cards/torch-compile-fullgraph-")
    with Image.open(built / image.removeprefix("https://blog.example.com/notes/")) as card:
        assert (card.format, card.size) == ("PNG", (1200, 630))
    assert doc.xpath("//meta[@property='og:image:width']/@content") == ["1200"]
    assert doc.xpath("//meta[@name='twitter:card']/@content") == ["summary_large_image"]
    assert doc.xpath("//meta[@name='baidu-site-verification']/@content") == ["codeva-TEST123"]
    assert doc.xpath("//meta[@name='google-site-verification']/@content") == ["g-TEST456"]
    assert "no-transform" in doc.xpath("//meta[@http-equiv='Cache-Control']/@content")
    data, crumbs = (json.loads(s) for s in doc.xpath("//script[@type='application/ld+json']/text()"))
    assert data["@type"] == "BlogPosting"
    assert data["headline"] == "torch.compile 的 fullgraph 模式与图断裂"
    assert data["datePublished"].startswith("2024-05-02")
    assert data["dateModified"].startswith("2024-06-10")
    assert data["author"] == {"@type": "Person", "name": "测试作者", "url": "https://blog.example.com/notes/"}
    assert data["image"] == [image]
    assert crumbs["@type"] == "BreadcrumbList"
    assert [(i["position"], i["item"]) for i in crumbs["itemListElement"]] == [
        (1, "https://blog.example.com/notes/"), (2, "https://blog.example.com/notes/torch-compile-fullgraph/")
    ]


def test_home_page_names_the_site_in_website_jsonld_and_its_title_keeps_the_slogan(built):
    doc = _doc(built, "index.html")
    assert doc.findtext(".//title") == "编译笔记 - 测过才算数"
    (data,) = (json.loads(s) for s in doc.xpath("//script[@type='application/ld+json']/text()"))
    assert data["@type"] == "WebSite"
    assert data["name"] == "编译笔记"
    assert (data["url"], data["inLanguage"]) == ("https://blog.example.com/notes/", "zh-CN")


def test_json_ld_date_modified_is_the_sitemaps_lastmod(built):
    sitemap = (built / "sitemap.xml").read_text()
    lastmods = dict(re.findall(r"<loc>([^<]+)</loc><lastmod>([^<]+)</lastmod>", sitemap))
    for page in ("torch-compile-fullgraph/index.html", "dynamic-shapes-recompile/index.html"):
        doc = _doc(built, page)
        data = json.loads(doc.xpath("//script[@type='application/ld+json']/text()")[0])
        modified = datetime.fromisoformat(data["dateModified"])
        assert modified == datetime.fromisoformat(lastmods[data["url"]].replace("Z", "+00:00"))


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


def test_date_archives_say_noindex_follow_and_leave_the_sitemap(built):
    for archive in ("archive/2024/index.html", "archive/2024/page/2/index.html"):
        assert _doc(built, archive).xpath("//meta[@name='robots']/@content") == ["noindex, follow"]
    assert "archive/2024" not in (built / "sitemap.xml").read_text()
    assert not _doc(built, "index.html").xpath("//meta[@name='robots']")


def test_404_page_is_noindex(built):
    assert _doc(built, "404.html").xpath("//meta[@name='robots']/@content") == ["noindex"]


def test_built_site_passes_the_audit(built):
    from perfblog.seo.audit import audit_site

    assert [f for f in audit_site(built).findings if f.severity != "info"] == []


def test_the_audit_reads_material_s_home_intro_and_headings_without_permalink_marks(built):
    from perfblog.seo.facts import read_page

    facts = read_page((built / "index.html").read_bytes(), "index.html")
    assert facts.h1 == ["编译笔记"]  # Material's heading carries a ¶ permalink
    intro = "这里的每篇文章都用真实运行的代码片段讲 torch.compile 的性能：整图编译、图断裂与 CUDA Graphs。"
    assert facts.intro == intro  # in Material's <header class="md-typeset">, inline code as text
    assert "¶" not in facts.body


def test_stuffed_post_fails_the_strict_build(tmp_path):
    shutil.copytree(FIXTURES / "site", tmp_path, dirs_exist_ok=True)
    post = tmp_path / POST
    post.write_text(
        post.read_text(encoding="utf-8") + "\n" + "torch.compile 真快。" * 40 + "\n", encoding="utf-8"
    )
    result = _build(tmp_path)
    assert result.returncode != 0
    assert "keyword-stuffing" in result.stderr


def test_post_without_description_builds_with_a_fallback_said_in_one_line_per_rule(tmp_path):
    shutil.copytree(FIXTURES / "site", tmp_path, dirs_exist_ok=True)
    post = tmp_path / POST
    post.write_text(post.read_text(encoding="utf-8").replace("description:", "summary:", 1), encoding="utf-8")
    result = _build(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "seo: description-generated: 1 warning" in result.stderr


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


def test_each_post_ends_with_a_block_of_its_related_published_posts(built):
    blocks = {}
    for page in ("torch-compile-fullgraph/index.html", "dynamic-shapes-recompile/index.html"):
        (block,) = _doc(built, page).xpath("//article//nav[@class='blog-related']")
        assert block.xpath("./h2/text()") == ["相关文章"]
        blocks[page] = [(a.get("href"), a.text_content()) for a in block.xpath(".//a")]
    assert blocks == {
        "torch-compile-fullgraph/index.html": [("../dynamic-shapes-recompile/", "动态形状与重新编译")],
        "dynamic-shapes-recompile/index.html": [
            ("../torch-compile-fullgraph/", "torch.compile 的 fullgraph 模式与图断裂")
        ],
    }  # the draft is in neither


def test_a_pin_naming_no_post_fails_the_build_naming_the_file_and_line(tmp_path):
    shutil.copytree(FIXTURES / "site", tmp_path, dirs_exist_ok=True)
    post = tmp_path / POST
    post.write_text(post.read_text(encoding="utf-8").replace("---\n", "---\nrelated:\n  pin: [gone.md]\n", 1),
                    encoding="utf-8")
    result = _build(tmp_path)
    assert result.returncode != 0
    message = "posts/fullgraph.md:2: `related` names posts/gone.md, which is not a post of this site"
    assert message in result.stderr


def test_material_google_fonts_are_off_so_no_page_waits_for_another_host(built):
    for page in built.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in html and "fonts.gstatic.com" not in html, page


@pytest.mark.parametrize(("after_load", "features", "script"), [
    ("true", ["navigation.indexes"], True), (None, ["content.code.copy", "navigation.indexes"], False),
])
def test_materials_copy_buttons_come_from_the_packages_script_after_load_when_asked_for(
        tmp_path, after_load, features, script):
    root = tmp_path / "blog"
    shutil.copytree(FIXTURES / "site", root)
    config = root / "mkdocs.yml"
    text = config.read_text(encoding="utf-8").replace(
        "  language: zh\n", "  language: zh\n  features: [content.code.copy, navigation.indexes]\n", 1)
    if after_load:
        text += f"      seo_copy_buttons_after_load: {after_load}\n"
    config.write_text(text, encoding="utf-8")
    assert _build(root).returncode == 0
    page = (root / "site" / "torch-compile-fullgraph" / "index.html").read_text(encoding="utf-8")
    (shown,) = re.findall(r'<script id="__config" type="application/json">(.*?)</script>', page, re.S)
    assert json.loads(shown)["features"] == features
    assert ('src="../_seo/copy.js"' in page) is script
    assert (root / "site" / "_seo" / "copy.js").is_file() is script


def test_a_config_set_up_twice_keeps_one_copy_script(tmp_path):
    config_file = tmp_path / "mkdocs.yml"
    config_file.write_text("site_name: x\ntheme: {name: material, features: [content.code.copy]}\n",
                           encoding="utf-8")
    (tmp_path / "docs").mkdir()
    config = load_config(str(config_file))
    assert _copy_after_load(config) and _copy_after_load(config)  # as `serve` may ask on each rebuild
    assert [str(s) for s in config.extra_javascript] == [COPY_SCRIPT]
    assert "content.code.copy" not in config.theme["features"]
