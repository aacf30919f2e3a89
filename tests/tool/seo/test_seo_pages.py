"""What the plugin derives from one MkDocs page: drafts, titles, generated descriptions, language,
images, required fields."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

from perfblog.seo import pages, prose, text
from perfblog.seo.meta import Author
from perfblog.seo.rules import TITLE_MAX_WIDTH

SITE = pages.Site(
    url="https://blog.example.com/",
    name="编译笔记",
    description="用真实运行的代码讲 torch.compile 整图编译、图断裂与 CUDA Graphs 的性能。",
    author=Author("作者", "https://blog.example.com/about/"),
    lang="zh-CN",
    repo=Path("/nonexistent"),
    snippets_dir=Path("/nonexistent/snippets"),
    results_dir=Path("/nonexistent/snippets/_results"),
    posts=("posts/*",),  # `seo_posts`: these pages are posts (without Material's blog plugin)
)


def _page(tmp_path: Path, meta: dict, url: str = "post/", content: str = "<p>正文</p>",
          title: str = "标题 &amp; <code>fullgraph</code>", is_homepage: bool = False, src_uri: str = "",
          **extra):
    """A rendered page; a dated one lies in the posts folder unless ``src_uri`` says where."""
    src_uri = src_uri or ("posts/post.md" if "date" in meta else "about.md")
    source = tmp_path / "post.md"
    source.write_text("---\n---\n正文\n", encoding="utf-8")
    return SimpleNamespace(
        meta=meta, title=title, url=url, is_homepage=is_homepage, content=content,
        canonical_url=SITE.url + url, file=SimpleNamespace(src_uri=src_uri, abs_src_path=str(source)),
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


def test_post_without_description_gets_its_first_paragraph_and_a_finding_naming_the_fallback(tmp_path):
    content = "<h1>标题</h1><p>第一段讲整图编译为什么快。</p><p>第二段不在描述里。</p>"
    record = pages.describe(_page(tmp_path, {"date": "2024-05-02"}, content=content), SITE)
    assert record.head.description == "第一段讲整图编译为什么快。"
    [finding] = record.findings
    assert (finding.page, finding.rule) == ("posts/post.md", "description-generated")
    assert finding.severity == "warning"
    assert "fallback" in finding.message and "第一段讲整图编译为什么快。" in finding.message


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
    assert head.description.startswith("编译笔记·标题 & fullgraph，共 20 篇：《第 0 篇")  # text: escaped once
    assert head.description.endswith("》等")  # whole titles only
    assert text.display_width(head.description) <= pages.DESCRIPTION_MAX_WIDTH
    assert record.post_urls[0] == "https://blog.example.com/p0/"


def test_front_matter_and_default_images_are_relative_to_the_site_root_not_the_page(tmp_path):
    post = {"date": "2024-05-02", "description": "描述", "image": "img/cover.png"}
    image = pages.describe(_page(tmp_path, post), SITE).head.image
    assert image.url == "https://blog.example.com/img/cover.png"

    site = pages.Site(**{**vars(SITE), "default_image": "img/default.png"})
    plain = {"date": "2024-05-02", "description": "描述"}
    default = pages.describe(_page(tmp_path, plain), site).head.image
    assert default.url == "https://blog.example.com/img/default.png"

    images = '<p><img src="chart.svg" alt="图"><img src="run.png" alt="图"></p>'
    first_raster = pages.describe(_page(tmp_path, plain, content=images), site).head.image
    assert first_raster.url == "https://blog.example.com/post/run.png"  # networks show no SVG


POST = {"date": "2024-05-02", "description": "描述"}


def test_inner_titles_keep_the_site_name_and_shorten_the_page_part_at_a_break(tmp_path):
    long = "torch.compile 整图编译实测：fullgraph、图断裂与 CUDA Graphs 以及更多更多的内容"
    head = pages.describe(_page(tmp_path, POST, title=long), SITE).head
    assert head.headline == long  # og:title and JSON-LD keep it whole
    assert head.title.endswith(" - 编译笔记")
    assert head.title == "torch.compile 整图编译实测：fullgraph - 编译笔记"  # cut at 、 not in a phrase
    assert text.display_width(head.title) <= TITLE_MAX_WIDTH


def test_a_title_without_breaks_is_cut_with_an_ellipsis_never_inside_a_word(tmp_path):
    long = "fullgraph" + "很长的标题" * 12
    head = pages.describe(_page(tmp_path, POST, title=long), SITE).head
    assert head.title.endswith("… - 编译笔记") and head.title.startswith("fullgraph很长的标题")
    assert text.display_width(head.title) <= TITLE_MAX_WIDTH


def test_home_title_is_site_name_and_slogan(tmp_path):
    site = pages.Site(**{**vars(SITE), "slogan": "测过才算数"})
    home = pages.describe(_page(tmp_path, {}, url="", is_homepage=True, title="首页"), site).head
    assert (home.title, home.headline, home.home) == ("编译笔记 - 测过才算数", "编译笔记", True)
    assert home.breadcrumbs == ()
    assert pages.describe(_page(tmp_path, {}, url="", is_homepage=True), SITE).head.title == "编译笔记"


def test_language_comes_from_front_matter_or_the_site_never_from_the_text(tmp_path):
    posts = [SimpleNamespace(title="fullgraph in torch.compile, measured: breaks and CUDA Graphs", url="en/")]
    view = pages.describe(_page(tmp_path, {}, url="category/x/", title="torch.compile", posts=posts), SITE)
    assert view.head.lang == "zh-CN"  # an English title listed on a Chinese page
    english = {"date": "2024-05-02", "description": "An English post", "lang": "en"}
    assert pages.describe(_page(tmp_path, english), SITE).head.lang == "en"


STRING_PAGE = (  # OI-wiki's string page, as Material renders it
    '<h1 id="string">string</h1><h2 id="what">string 是什么<a class="headerlink" href="#what">¶</a></h2>'
    "<p><code>std::string</code> 是在标准库 <code>&lt;string&gt;</code>（注意不是 C 语言中的 "
    "<code>&lt;string.h&gt;</code> 库）中提供的一个类，"
    "本质上是 <code>std::basic_string&lt;char&gt;</code> 的别称。"
    "它可以像数组一样按下标访问字符，也可以直接与另一个字符串拼接、比较和赋值，长度会随内容自动增长，"
    "不需要手动管理内存。</p><h2>为什么要使用 string</h2><p>在 C 语言里，字符串只是以空字符结尾的字符数组，"
    "很多操作都要自己小心处理边界。</p>"
    '<div class="highlight"><pre><code>std::string s = "x";</code></pre></div>'
)


def test_generated_description_keeps_inline_code_drops_headings_and_ends_a_sentence(tmp_path):
    page = _page(tmp_path, {}, url="string/", content=STRING_PAGE, title="string")
    description = pages.describe(page, SITE).head.description
    assert description.startswith("std::string 是在标准库 <string>（注意不是 C 语言中的 <string.h> 库）")
    assert "是什么" not in description and "为什么" not in description and 's = "x"' not in description
    assert description.endswith("。")
    assert 100 <= text.display_width(description) <= pages.DESCRIPTION_MAX_WIDTH


def test_a_description_without_a_sentence_end_is_cut_at_a_clause_boundary():
    clauses = "，".join(["这一句话很长而且没有句号"] * 20)
    cut = prose.summarise(clauses)
    assert cut.endswith("没有句号…") and text.display_width(cut) <= pages.DESCRIPTION_MAX_WIDTH


def test_the_home_page_is_described_by_site_description_not_by_its_text(tmp_path):
    banner = "<p>Sponsored: the fastest VPN in town, a banner that is not what this site is about.</p>"
    head = pages.describe(_page(tmp_path, {}, url="", content=banner, is_homepage=True), SITE).head
    assert head.description == SITE.description
    own = pages.describe(_page(tmp_path, {"description": "首页自己的描述"}, url="", is_homepage=True), SITE)
    assert own.head.description == "首页自己的描述"  # the home page's front matter still wins


def test_generated_heads_speak_the_pages_language(tmp_path):
    english = dataclasses.replace(SITE, lang="en")
    posts = [SimpleNamespace(title=f"Post {i}", url=f"p{i}/") for i in range(3)]
    view = pages.describe(_page(tmp_path, {}, url="page/2/", title="Index", posts=posts), english).head
    assert view.description.startswith("编译笔记·Index: 3 posts: “Post 0”, “Post 1”, “Post 2”")
    assert view.description.endswith(" (page 2)") and view.title.startswith("Index (page 2) - ")


def _long_page(code_lines: int) -> str:
    """A page as a real blog has them: a paragraph, then a code block of thousands of highlighted lines,
    then more prose."""
    spans = "".join(f'<span class="n">x{i}</span> <span class="o">=</span> <span class="mi">{i}</span>\n'
                    for i in range(code_lines))
    return ("<h1>笔记</h1>\n<p>开头一段：<code>torch.compile</code> 与图断裂，" + "说明文字，" * 20 + "</p>\n"
            f'<div class="highlight"><pre><code>{spans}</code></pre></div>\n'
            "<ul><li>之后的条目 &amp; 更多</li></ul><p>" + "结尾的文字。" * 50 + "</p>\n")


def test_the_opening_of_a_long_page_is_the_start_of_its_prose_read_from_a_part() -> None:
    """A generated description needs the first 160 units of a page's prose: read from as little of the
    HTML as holds them (a page of 20,000 code lines is not parsed whole), it is the same text."""
    for page in (_long_page(20_000), _long_page(3), "<pre>" + "x\n" * 40_000 + "</pre><p>只在最后。</p>", ""):
        whole = prose.plain(page)
        start = prose.opening(page, 176)
        assert whole.startswith(start) and (start == whole or text.display_width(start) > 176)
        assert prose.summarise(start) == prose.summarise(whole)
