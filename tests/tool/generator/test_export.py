"""`blog export`: a built post as Markdown for 掘金, 知乎, CSDN or plain Markdown, pinned by golden files.

The fixture site (tests/data/export/) is built once; each target's export of its post must equal
tests/data/export/golden/measured.<target>.md byte for byte. After a deliberate change, rewrite
them with ``PERFBLOG_UPDATE_GOLDEN=1 pytest tests/tool/generator/test_export.py`` and read the diff.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import lxml.html
import markdown
import pytest
from paths import DATA

from perfblog.cli import main
from perfblog.core.escape import markdown_text
from perfblog.generator.export import TARGETS

pytestmark = pytest.mark.mkdocs

FIXTURE = DATA / "export"
GOLDEN = FIXTURE / "golden"
URL = "https://blog.example.com/notes/dao-chu-shi-ce/"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export")
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("golden", "site"))
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr
    return root


def export(site: Path, *args: str) -> int:
    return main(["export", "-f", str(site / "mkdocs.yml"), *args])


@pytest.mark.parametrize("target", list(TARGETS))
def test_each_target_writes_its_golden_file(site: Path, tmp_path: Path, target: str) -> None:
    out = tmp_path / f"{target}.md"
    assert export(site, "measured", "--to", target, "-o", str(out)) == 0
    golden = GOLDEN / f"measured.{target}.md"
    if os.environ.get("PERFBLOG_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        shutil.copyfile(out, golden)
    assert out.read_text(encoding="utf-8") == golden.read_text(encoding="utf-8")


def test_the_same_post_results_and_site_give_the_same_bytes(site: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "1.md", tmp_path / "2.md"
    export(site, "measured", "--to", "zhihu", "-o", str(first))
    export(site, str(site / "posts" / "posts" / "measured.md"), "--to", "zhihu", "-o", str(second))
    assert first.read_bytes() == second.read_bytes()


def test_links_are_absolute_on_the_site_and_code_is_left_alone(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "juejin.md"
    export(site, "measured", "--to", "juejin", "-o", str(out))
    text = out.read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    targets = re.findall(r"\]\(([^)]+)\)", prose)
    assert targets and all(t.startswith("https://") for t in targets), targets
    assert "(https://blog.example.com/notes/ling-yi-pian/#bei-jing)" in text
    assert "(https://blog.example.com/notes/)" in text  # ../index.md
    assert f"({URL}#dai-ma-yu-shu-chu)" in text
    assert "# a link in code is left alone: [x](other.md)" in text
    assert text.startswith(f"> 原文链接：[导出实测：表格、代码与数值]({URL})\n")


def test_the_chart_is_the_png_the_build_drew(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "csdn.md"
    export(site, "measured", "--to", "csdn", "-o", str(out))
    (png,) = re.findall(r"!\[三种实现的耗时对比 &#91;µs&#93;\]\((\S+)\)", out.read_text(encoding="utf-8"))
    built = site / "site" / png.removeprefix("https://blog.example.com/notes/")
    assert built.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_draft_is_refused_naming_the_file_and_line(site: Path, capsys: pytest.CaptureFixture) -> None:
    assert export(site, "draft", "--to", "juejin", "-o", "-") == 2
    assert "posts/posts/draft.md:5: a draft is not exported" in capsys.readouterr().err


def test_a_post_changed_since_the_build_is_refused(site: Path, tmp_path: Path, capsys) -> None:
    changed = tmp_path / "site"
    shutil.copytree(site, changed)
    post = changed / "posts" / "posts" / "measured.md"
    post.write_text(post.read_text(encoding="utf-8") + "\n新加的一段。\n", encoding="utf-8")
    assert export(changed, "measured", "--to", "zhihu", "-o", "-") == 2
    assert "changed since the last build; run `mkdocs build`" in capsys.readouterr().err


def test_each_export_is_recorded_and_listed(site: Path, tmp_path: Path, capsys) -> None:
    export(site, "measured", "--to", "markdown", "-o", str(tmp_path / "out.md"))
    recorded = json.loads((site / ".blog" / "export-state.json").read_text(encoding="utf-8"))
    entry = recorded["posts"]["posts/posts/measured.md"]["markdown"]
    assert recorded["version"] == 1 and entry["url"] == URL and entry["file"] == str(tmp_path / "out.md")
    capsys.readouterr()
    assert export(site, "--list") == 0
    assert f"posts/posts/measured.md\tmarkdown\t{entry['at']}\t{URL}" in capsys.readouterr().out


@pytest.mark.parametrize(
    "written",
    ["<img src=x onerror=alert(1)>", "**bold** [a](javascript:alert(1)) `code`", "| a | b |", "1. first",
     "- item", "# heading", "https://example.com/x", "$x^2$ ~~gone~~ &amp; \\*"],
)
def test_exported_text_is_inert_in_markdown(written: str) -> None:
    html = markdown.markdown(f"{markdown_text(written)}\n", extensions=["tables"])
    assert re.fullmatch(r"<p>[^<>]*</p>", html), html  # one paragraph of text, no element made
    assert lxml.html.fragment_fromstring(html).text_content() == written


def test_exported_numbers_and_brackets_stay_as_written() -> None:
    assert markdown_text("812.500 (µs), -3.5%, 'a' \"b\" / c? @d") == "812.500 (µs), -3.5%, 'a' \"b\" / c? @d"


def test_any_page_is_found_by_stem_and_its_origin_link_reads_in_chinese(site: Path, tmp_path: Path,
                                                                        capsys) -> None:
    """A page outside the posts folder, with a Chinese path and a space: found by its stem; 原文链接
    shows the address as a reader reads it and links to the valid, percent-encoded URL."""
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    page = copy / "posts" / "笔记" / "可视化 笔记.md"
    page.parent.mkdir()
    page.write_text("# 可视化笔记\n\n一页不在文章目录里的笔记。\n", encoding="utf-8")
    command = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(copy / "mkdocs.yml")]
    assert subprocess.run(command, capture_output=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}).returncode == 0
    encoded = "https://blog.example.com/notes/" + quote("笔记/可视化 笔记/")
    shown = "https://blog.example.com/notes/笔记/可视化%20笔记/"
    out = tmp_path / "zhihu.md"
    capsys.readouterr()
    assert export(copy, "可视化 笔记", "--to", "zhihu", "-o", str(out)) == 0
    assert f"(原文链接 {shown})" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8").endswith(f"原文链接：[{markdown_text(shown)}]({encoded})\n")
    assert export(copy, "笔记/可视化 笔记.md", "--to", "zhihu", "-o", str(tmp_path / "by-path.md")) == 0
    assert (tmp_path / "by-path.md").read_bytes() == out.read_bytes()


def test_a_stem_several_pages_share_is_an_error_naming_them(site: Path, tmp_path: Path, capsys) -> None:
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    for folder in ("甲", "乙"):
        (copy / "posts" / folder).mkdir()
        (copy / "posts" / folder / "same.md").write_text("# 同名\n", encoding="utf-8")
    assert export(copy, "same", "--to", "zhihu", "-o", "-") == 2
    assert "2 pages have that stem (乙/same.md, 甲/same.md); give its path" in capsys.readouterr().err
