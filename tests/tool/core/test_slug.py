"""ASCII pinyin slugs: short, stable, readable, and usable as Material's `post_slugify`."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config

from perfblog.core.slug import MAX_LENGTH, slugify


def test_chinese_title_becomes_toneless_pinyin_one_syllable_a_word() -> None:
    assert slugify("整图编译") == "zheng-tu-bian-yi"


def test_ascii_words_keep_their_letters_and_dots_become_separators() -> None:
    slug = slugify("torch.compile 整图编译：fullgraph=True")
    assert slug == "torch-compile-zheng-tu-bian-yi-fullgraph-true"


def test_slug_is_lower_case_ascii_without_doubled_or_dangling_separators() -> None:
    slug = slugify("  《PyTorch 2.13》——CUDA Graphs 与 Triton！ ")
    assert slug == "pytorch-2-13-cuda-graphs-yu-triton"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug)


def test_umlaut_pinyin_and_accents_and_full_width_letters_are_spelled_in_ascii() -> None:
    assert slugify("绿色") == "lv-se"
    assert slugify("ＡＢＣ Café") == "abc-cafe"


def test_long_title_is_cut_at_a_word_boundary_within_the_limit() -> None:
    title = "为什么百度迟迟不收录我写的关于 torch.compile 整图编译与 CUDA Graphs 的长篇技术文章"
    slug = slugify(title)
    assert len(slug) <= MAX_LENGTH
    assert slugify(title, max_length=None).startswith(slug + "-")


def test_same_title_gives_the_same_slug_every_time() -> None:
    title = "动态形状下的图断裂"
    assert slugify(title) == slugify(title) == "dong-tai-xing-zhuang-xia-de-tu-duan-lie"


def test_technical_words_get_their_technical_reading() -> None:
    assert slugify("动态形状下的重编译") == "dong-tai-xing-zhuang-xia-de-chong-bian-yi"
    assert slugify("重计算与长尾延迟") == "chong-ji-suan-yu-chang-wei-yan-chi"


def test_keyphrase_slug_is_a_substring_of_the_title_slug_that_contains_it() -> None:
    assert slugify("图断裂") in slugify("用 torch.compile 排查图断裂")


def test_title_with_nothing_to_spell_gets_a_stable_non_empty_slug() -> None:
    assert slugify("？！……") == slugify("？！……")
    assert re.fullmatch(r"post-[0-9a-f]{8}", slugify("？！……"))


def test_separator_argument_is_honoured_as_material_passes_it() -> None:
    assert slugify("整图编译", "_") == "zheng_tu_bian_yi"


@pytest.mark.mkdocs
def test_material_blog_builds_a_chinese_post_under_its_pinyin_url(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "posts").mkdir(parents=True)
    (docs / "index.md").write_text("# 博客\n", encoding="utf-8")
    (docs / "posts" / "a.md").write_text(
        "---\ndate: 2026-11-01\n---\n\n# torch.compile 的图断裂\n\n正文。\n", encoding="utf-8"
    )
    (tmp_path / "mkdocs.yml").write_text(textwrap.dedent("""\
        site_name: t
        site_url: https://example.com/
        docs_dir: docs
        site_dir: site
        theme: {name: material, language: zh}
        plugins:
          - blog:
              blog_dir: .
              post_url_format: "{slug}"
              post_slugify: !!python/name:perfblog.core.slug.slugify
        """), encoding="utf-8")
    build(load_config(str(tmp_path / "mkdocs.yml")))
    assert (tmp_path / "site" / "torch-compile-de-tu-duan-lie" / "index.html").is_file()
