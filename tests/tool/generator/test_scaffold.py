"""`blog new`: a draft post with a pinyin slug, placeholders, and optionally a paired snippet."""

from __future__ import annotations

import datetime as dt
import textwrap
from pathlib import Path

import jupytext
import pytest
import yaml
from mkdocs.commands.build import build
from mkdocs.config import load_config

from perfblog.cli import main
from perfblog.core.conventions import PLACEHOLDER
from perfblog.seo.audit import audit_site


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    config = ("site_name: t\ndocs_dir: posts\ntheme: {name: material, language: zh}\n"
              "plugins:\n  - blog: {blog_dir: .}\n")
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    (tmp_path / "posts").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def front_matter(path: Path) -> dict:
    _, head, _ = path.read_text(encoding="utf-8").split("---\n", 2)
    return yaml.safe_load(head)


def test_new_post_is_a_dated_draft_under_its_pinyin_slug(site: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["new", "torch.compile 整图编译"]) == 0
    post = site / "posts/posts/torch-compile-zheng-tu-bian-yi.md"
    meta = front_matter(post)
    assert meta["draft"] is True
    assert meta["slug"] == "torch-compile-zheng-tu-bian-yi"
    assert meta["date"] == dt.date.today()
    assert "# torch.compile 整图编译\n" in post.read_text(encoding="utf-8")
    assert "posts/posts/torch-compile-zheng-tu-bian-yi.md" in capsys.readouterr().out


def test_description_and_keywords_start_as_placeholders(site: Path) -> None:
    main(["new", "图断裂"])
    meta = front_matter(site / "posts/posts/tu-duan-lie.md")
    assert meta["description"] == PLACEHOLDER
    assert meta["keywords"] == [PLACEHOLDER]


def test_without_snippet_the_post_embeds_nothing_and_no_snippet_is_written(site: Path) -> None:
    main(["new", "图断裂"])
    assert "<%" not in (site / "posts/posts/tu-duan-lie.md").read_text(encoding="utf-8")
    assert not (site / "snippets").exists()


def test_snippet_flag_writes_a_jupytext_snippet_whose_main_cell_the_post_embeds(site: Path) -> None:
    assert main(["new", "动态形状", "--snippet"]) == 0
    post = (site / "posts/posts/dong-tai-xing-zhuang.md").read_text(encoding="utf-8")
    assert '<%= code("dong-tai-xing-zhuang", "main") %>' in post
    assert '<%= output("dong-tai-xing-zhuang", "main") %>' in post
    notebook = jupytext.read(site / "snippets/dong-tai-xing-zhuang.py")
    names = [cell.metadata.get("name") for cell in notebook.cells if cell.cell_type == "code"]
    assert names == ["main"]


def test_slug_option_overrides_the_pinyin_slug(site: Path) -> None:
    assert main(["new", "整图编译", "--slug", "fullgraph", "--snippet"]) == 0
    assert front_matter(site / "posts/posts/fullgraph.md")["slug"] == "fullgraph"
    assert (site / "snippets/fullgraph.py").is_file()


def test_an_existing_post_is_never_overwritten(site: Path, capsys: pytest.CaptureFixture) -> None:
    main(["new", "图断裂"])
    post = site / "posts/posts/tu-duan-lie.md"
    post.write_text("my words", encoding="utf-8")
    assert main(["new", "图断裂"]) == 2
    assert post.read_text(encoding="utf-8") == "my words"
    assert "posts/posts/tu-duan-lie.md already exists" in capsys.readouterr().err


def test_an_existing_snippet_stops_the_scaffold_before_the_post_is_written(site: Path) -> None:
    (site / "snippets").mkdir()
    (site / "snippets/tu-duan-lie.py").write_text("# mine\n", encoding="utf-8")
    assert main(["new", "图断裂", "--snippet"]) == 2
    assert not (site / "posts/posts/tu-duan-lie.md").exists()
    assert (site / "snippets/tu-duan-lie.py").read_text(encoding="utf-8") == "# mine\n"


def test_a_slug_that_is_not_lower_case_ascii_words_is_bad_input(
    site: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["new", "图断裂", "--slug", "图/断裂"]) == 2
    assert "slug" in capsys.readouterr().err


def test_outside_a_site_root_the_scaffold_refuses_with_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "图断裂"]) == 2
    assert "mkdocs.yml not found" in capsys.readouterr().err


@pytest.mark.mkdocs
def test_the_audit_flags_the_placeholders_until_the_author_fills_them(site: Path) -> None:
    (site / "mkdocs.yml").write_text(textwrap.dedent("""\
        site_name: 测试
        site_url: https://example.com/
        docs_dir: posts
        theme: {name: material, language: zh}
        plugins:
          - blog: {blog_dir: ., post_url_format: "{slug}"}
          - seo: {seo_audit: false}
        """), encoding="utf-8")
    (site / "posts/index.md").write_text("# 测试\n", encoding="utf-8")
    main(["new", "torch.compile 整图编译"])
    post = site / "posts/posts/torch-compile-zheng-tu-bian-yi.md"

    def flagged() -> set[str]:
        build(load_config(str(site / "mkdocs.yml")))
        report = audit_site(site / "site")
        return {f.rule for f in report.findings if f.page == "torch-compile-zheng-tu-bian-yi/index.html"}

    post.write_text(post.read_text(encoding="utf-8").replace("draft: true", "draft: false"), encoding="utf-8")
    assert {"placeholder-unfilled", "description-too-short", "keyword-missing-title"} <= flagged()

    filled = post.read_text(encoding="utf-8").replace(
        f"description: {PLACEHOLDER}",
        "description: torch.compile 整图编译何时值得：用 fullgraph=True 找出图断裂，比较编译前后的耗时。",
    ).replace(f"  - {PLACEHOLDER}", "  - 整图编译")
    post.write_text(filled, encoding="utf-8")
    assert {"placeholder-unfilled"} <= flagged()  # the heading and the opening still hold it

    filled = filled.replace(f"## {PLACEHOLDER}", "## 整图编译与图断裂").replace(
        f"{PLACEHOLDER}：第一段说清本文回答什么问题，并自然地写进焦点关键词（keywords 的第一项）。",
        "整图编译要求一个函数整个被捕获成一张图：本文说明它何时值得。")
    post.write_text(filled, encoding="utf-8")
    assert not {"placeholder-unfilled", "description-too-short", "keyword-missing-title",
                "keyword-missing-description"} & flagged()


def test_an_english_site_gets_english_placeholders_and_words(site: Path) -> None:
    (site / "mkdocs.yml").write_text("site_name: t\ndocs_dir: posts\ntheme: {name: material, language: en}\n"
                                     "plugins:\n  - blog: {blog_dir: .}\n", encoding="utf-8")
    assert main(["new", "Why a dot product beats a loop", "--snippet", "dot"]) == 0
    text = (site / "posts/posts/why-a-dot-product-beats-a-loop.md").read_text(encoding="utf-8")
    assert front_matter(site / "posts/posts/why-a-dot-product-beats-a-loop.md")["description"] == "TO FILL IN"
    assert "TO FILL IN: the first paragraph says what question the post answers" in text
    assert "## TO FILL IN" in text and 'the cell "main" of snippets/dot.py' in text
    assert PLACEHOLDER not in text
