"""Related posts: ranked by shared keywords, tags, categories and text; steered in front matter."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace

import lxml.html
import pytest

from perfblog.seo.errors import ConfigError
from perfblog.seo.related import (
    BLOCK_CLASS,
    Post,
    Weights,
    Where,
    block_html,
    check_steering,
    collect,
    labels,
    prose,
    rank,
    steering,
)

COMPILE = ("torch.compile 把模型编译成计算图，图断裂会让编译器退回 Python 执行，"
           "整图编译用 fullgraph 找出每一处图断裂，再用 torch.where 或 torch.cond 改写依赖数值的分支。")
GRAPHS = ("CUDA Graphs 把一串内核启动录制下来整体重放，省掉每次启动的开销；"
          "录制要求形状固定、没有主机同步，所以它需要一整张计算图。")
MEMORY = ("显存分析：用 memory snapshot 找出峰值显存从哪里来，"
          "激活检查点用重计算换显存，优化器状态也占很多显存。")
KITCHEN = "今天做红烧肉：五花肉切块焯水，冰糖炒出糖色，加酱油和黄酒小火慢炖一个半小时，最后大火收汁。"


def post(key: str, text: str = "", *, date: str = "2024-01-01", language: str = "zh-CN", **kw) -> Post:
    return Post(key=f"posts/{key}.md", url=f"{key}/", title=f"《{key}》", language=language, date=date,
                text=text, **kw)


def listed(blocks, key: str) -> list[str]:
    return [link.url.rstrip("/") for link in blocks[f"posts/{key}.md"]]


def test_text_similarity_ranks_the_post_on_the_same_subject_first():
    posts = [post("a", COMPILE), post("b", COMPILE + GRAPHS), post("c", MEMORY), post("d", KITCHEN)]
    assert listed(rank(posts), "a")[0] == "b"


def test_a_shared_keyword_outweighs_a_shared_tag_and_a_tag_a_category():
    k, t, c = frozenset({"图断裂"}), frozenset({"fullgraph"}), frozenset({"torch.compile"})
    posts = [post("a", keywords=k, tags=t, categories=c), post("kw", keywords=k), post("tag", tags=t),
             post("cat", categories=c), post("none")]
    assert listed(rank(posts), "a") == ["kw", "tag", "cat"]


def test_weights_are_what_the_scores_add_up():
    posts = [post("a", tags=frozenset({"x"})), post("b", keywords=frozenset({"y"})),
             post("c", tags=frozenset({"x"}), keywords=frozenset({"y"}))]
    assert listed(rank(posts), "c") == ["b", "a"]  # keyword 3 > tag 2
    assert listed(rank(posts, weights=Weights(keyword=1, tag=2)), "c") == ["a", "b"]


def test_a_block_lists_at_most_count_posts_and_fewer_when_fewer_are_related():
    shared = frozenset({"torch.compile"})
    posts = [post(f"p{i}", tags=shared, date=f"2024-01-{i + 1:02d}") for i in range(8)]
    posts.append(post("alone", KITCHEN))
    blocks = rank(posts)
    assert all(len(blocks[p.key]) == 5 for p in posts[:8])
    assert len(rank(posts, count=3)["posts/p0.md"]) == 3
    assert listed(blocks, "alone") == []  # shares no label and no word with any other post


def test_equal_scores_list_the_newest_post_first():
    shared = frozenset({"fullgraph"})
    posts = [post("old", tags=shared, date="2023-01-01"), post("new", tags=shared, date="2024-06-01"),
             post("mid", tags=shared, date="2024-01-01"), post("me", tags=shared, date="2022-01-01")]
    assert listed(rank(posts), "me") == ["new", "mid", "old"]


def test_the_blocks_do_not_depend_on_the_order_of_the_files():
    posts = [post(f"p{i}", text, tags=frozenset({str(i % 3)})) for i, text in
             enumerate([COMPILE, GRAPHS, MEMORY, KITCHEN, COMPILE + MEMORY, GRAPHS + KITCHEN] * 2)]
    expected = rank(posts)
    shuffled = posts[:]
    random.Random(7).shuffle(shuffled)
    assert rank(shuffled) == expected


def test_pins_come_first_in_the_authors_order_and_excludes_never_appear():
    posts = [post("a", COMPILE, pins=("posts/d.md", "posts/c.md"), excludes=frozenset({"posts/b.md"})),
             post("b", COMPILE), post("c", MEMORY), post("d", KITCHEN), post("e", COMPILE + GRAPHS)]
    assert listed(rank(posts), "a")[:3] == ["d", "c", "e"]
    assert "b" not in listed(rank(posts), "a")


def test_drafts_are_never_listed_not_even_when_pinned_but_get_a_block_to_preview():
    posts = [post("a", COMPILE, pins=("posts/draft.md",)), post("draft", COMPILE, draft=True),
             post("b", COMPILE + GRAPHS)]
    blocks = rank(posts)
    assert listed(blocks, "a") == ["b"]
    assert listed(blocks, "b") == ["a"]
    assert listed(blocks, "draft") == ["a", "b"] or listed(blocks, "draft") == ["b", "a"]


def test_only_posts_of_the_same_language_are_listed():
    posts = [post("zh", COMPILE, tags=frozenset({"t"})), post("zh-2", COMPILE, tags=frozenset({"t"})),
             post("en", "torch.compile fullgraph graph breaks", language="en", tags=frozenset({"t"})),
             post("en-2", "torch.compile graph breaks and CUDA Graphs", language="en", tags=frozenset({"t"}))]
    blocks = rank(posts)
    assert listed(blocks, "zh") == ["zh-2"]
    assert listed(blocks, "en") == ["en-2"]


def test_prose_leaves_out_code_charts_scripts_and_markup():
    content = ('<p>整图&amp;编译</p><pre><code>x = 1</code></pre><svg><text>7</text></svg>'
               '<script>var a;</script><p>图断裂</p>')
    assert prose(content).split() == ["整图&编译", "图断裂"]


def test_labels_accept_a_list_or_a_comma_separated_string_and_normalise_case():
    expected = {"fullgraph", "cuda graphs"}
    assert labels(["Fullgraph", " CUDA Graphs "]) == labels("fullgraph，cuda graphs") == expected
    assert labels(None) == frozenset()


def test_steering_resolves_paths_relative_to_the_post(tmp_path: Path):
    meta = {"related": {"pin": ["other.md", "../guide/intro.md"], "exclude": "old.md"}}
    pins, excludes = steering(meta, "posts/a.md", None)
    assert pins == ("posts/other.md", "guide/intro.md")
    assert excludes == {"posts/old.md"}


@pytest.mark.parametrize("value", [["a.md"], {"pin": "a.md", "hide": True}, {"pin": [1]}, {"exclude": [""]}])
def test_malformed_steering_names_the_file_and_line(tmp_path: Path, value):
    source = tmp_path / "a.md"
    source.write_text("---\ntitle: A\nrelated: x\n---\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^posts/a\.md:3: `related"):
        steering({"related": value}, "posts/a.md", source)


def test_the_block_is_a_list_of_ordinary_links_under_a_heading_in_the_posts_language():
    links = rank([post("a", COMPILE), post("b <&>", COMPILE)])["posts/a.md"]
    for language, heading in (("zh-CN", "相关文章"), ("en", "Related posts"), ("fr", "Related posts")):
        block = lxml.html.fragment_fromstring(block_html(links, language, lambda url: f"../{url}"))
        assert block.tag == "nav" and block.get("class") == BLOCK_CLASS
        assert block.xpath("./h2/text()") == [heading]
        assert [(a.get("href"), a.text) for a in block.xpath(".//li/a")] == [("../b <&>/", "《b <&>》")]


def test_a_title_mkdocs_took_from_a_heading_is_listed_as_its_text(tmp_path: Path):
    def page(key: str, title: str) -> SimpleNamespace:
        source = SimpleNamespace(src_uri=f"posts/{key}.md", abs_src_path=None)
        return SimpleNamespace(meta={"date": "2024-01-01"}, content=f"<p>{COMPILE}</p>", title=title,
                               url=f"{key}/", file=source)

    posts = collect([page("a", "A &amp; B &lt;C&gt;"), page("b", "B")], "zh-CN", tmp_path)
    assert posts[0].title == "A & B <C>"  # MkDocs' title from `# A & B <C>` is HTML
    block = lxml.html.fragment_fromstring(block_html(rank(posts)["posts/b.md"], "zh-CN", str))
    assert block.xpath(".//li/a/text()") == ["A & B <C>"]


@pytest.mark.parametrize(("pins", "excludes", "message"), [
    (("posts/gone.md",), frozenset(), "names posts/gone.md, which is not a post of this site"),
    ((), frozenset({"posts/gone.md"}), "names posts/gone.md, which is not a post of this site"),
    (("posts/en.md",), frozenset(), "names posts/en.md, a en post; this one is zh-CN"),
    (("posts/a.md",), frozenset(), "names the post itself"),
])
def test_a_pin_or_exclude_must_name_a_post_and_a_pin_one_of_the_same_language(tmp_path: Path, pins, excludes,
                                                                                message):
    (tmp_path / "posts").mkdir()
    source = tmp_path / "posts" / "a.md"
    source.write_text("---\ndate: 2024-01-01\nrelated:\n  pin: []\n---\n", encoding="utf-8")
    posts = [post("a", pins=pins, excludes=excludes), post("en", language="en")]
    with pytest.raises(ConfigError, match=rf"^posts/a\.md:3: .*{message}"):
        check_steering(posts, tmp_path, Where({"posts/a.md": source}))


def test_naming_a_file_that_is_not_built_is_no_error(tmp_path: Path):
    (tmp_path / "posts").mkdir()
    (tmp_path / "posts" / "draft.md").write_text("---\ndraft: true\n---\n", encoding="utf-8")
    check_steering([post("a", pins=("posts/draft.md",))], tmp_path, Where({}))
