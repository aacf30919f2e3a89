"""What the plugin derives from one MkDocs page: drafts, generated descriptions, required fields."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from perfblog.seo import pages
from perfblog.seo.errors import ConfigError

SITE = pages.Site(
    url="https://blog.example.com/",
    name="编译笔记",
    description="用真实运行的代码讲 torch.compile 整图编译、图断裂与 CUDA Graphs 的性能。",
    author="作者",
    lang="zh-CN",
    repo=Path("/nonexistent"),
    snippets_dir=Path("/nonexistent/snippets"),
    results_dir=Path("/nonexistent/snippets/_results"),
)


def _page(tmp_path: Path, meta: dict, url: str = "post/", content: str = "<p>正文</p>", **extra):
    source = tmp_path / "post.md"
    source.write_text("---\n---\n正文\n", encoding="utf-8")
    return SimpleNamespace(
        meta=meta, title="标题 &amp; <code>fullgraph</code>", url=url, is_homepage=False, content=content,
        canonical_url=SITE.url + url, file=SimpleNamespace(src_uri="posts/post.md", abs_src_path=str(source)),
        **extra,
    )  # fmt: skip


def test_draft_is_noindex_and_dated_from_front_matter(tmp_path):
    meta = {"date": "2024-05-02", "draft": True, "description": "草稿描述", "keywords": "甲，乙"}
    record = pages.describe(_page(tmp_path, meta), SITE)
    head = record.head
    assert head.noindex
    assert head.og_type == "article" and record.is_post
    assert head.keywords == ("甲", "乙")
    assert head.published.isoformat() == "2024-05-02T00:00:00+00:00"


def test_heading_markup_in_the_title_is_plain_text_in_the_head(tmp_path):
    head = pages.describe(_page(tmp_path, {"date": "2024-05-02", "description": "描述"}), SITE).head
    assert head.headline == "标题 & fullgraph"
    assert head.title == "标题 & fullgraph - 编译笔记"


def test_post_without_description_is_an_error_naming_the_file(tmp_path):
    with pytest.raises(ConfigError, match=r"posts/post\.md: a post needs `description`"):
        pages.describe(_page(tmp_path, {"date": "2024-05-02"}), SITE)


def test_plain_page_without_description_gets_one_from_its_text(tmp_path):
    text = (
        "<h1>关于</h1><p>" + "这个博客记录 PyTorch 性能优化的实验，" * 3 + "</p><pre><code>x = 1</code></pre>"
    )
    record = pages.describe(_page(tmp_path, {}, url="about/", content=text), SITE)
    head = record.head
    assert head.description.startswith("这个博客记录 PyTorch 性能优化的实验")
    assert "x = 1" not in head.description and "关于" not in head.description
    assert head.og_type == "website" and not record.is_post and not head.noindex


def test_long_generated_description_is_cut_to_what_engines_show(tmp_path):
    posts = [
        SimpleNamespace(title=f"第 {i} 篇关于 torch.compile 的很长的文章标题", url=f"p{i}/")
        for i in range(20)
    ]
    record = pages.describe(_page(tmp_path, {}, url="archive/2024/", posts=posts), SITE)
    head = record.head
    assert head.description.endswith("…")
    assert pages.text.display_width(head.description) <= pages.DESCRIPTION_MAX_WIDTH
    assert record.post_urls[0] == "https://blog.example.com/p0/"


def test_front_matter_and_default_images_are_relative_to_the_site_root_not_the_page(tmp_path):
    post = {"date": "2024-05-02", "description": "描述", "image": "img/cover.png"}
    assert pages.describe(_page(tmp_path, post), SITE).head.image == "https://blog.example.com/img/cover.png"

    site = pages.Site(**{**vars(SITE), "default_image": "img/default.png"})
    plain = {"date": "2024-05-02", "description": "描述"}
    assert pages.describe(_page(tmp_path, plain), site).head.image == "https://blog.example.com/img/default.png"

    in_content = _page(tmp_path, plain, content='<p><img src="chart.svg" alt="图"></p>')
    assert pages.describe(in_content, site).head.image == "https://blog.example.com/post/chart.svg"
