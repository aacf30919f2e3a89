"""`blog export` escapes what is not the author's Markdown.

A result file's provenance (device, CPU, torch version) is edited with its digest recomputed, as anyone
who edits a result file can, and the post's title is made to close the origin line's link text. Each
export is rendered as CommonMark with raw HTML on (markdown-it, as the platforms' editors do): the
payloads show as written and make no element and no link. `blog export` names one post, never a pattern.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest
from markdown_it import MarkdownIt
from paths import DATA

from perfblog.cli import main
from perfblog.generator.export import TARGETS
from perfblog.generator.store import schema

pytestmark = pytest.mark.mkdocs

FIXTURE = DATA / "export"
URL = "https://blog.example.com/notes/dao-chu-shi-ce/"
CPU = '<img src=x onerror="alert(1)"> AMD EPYC'
TORCH = "2.13.0 <script>alert(2)</script> [x](https://evil.example/) *y* _z_ `w`"
TITLE = "x](https://evil.example/) 导出实测 [y"
#: A verdict's labels as a result records them: a `code` span, markup, a line that starts an HTML block.
CANDIDATE = "`compiled` <img src=x onerror=alert(3)> [z](https://evil.example/)"
BASELINE = "`eager\n<script>alert(4)</script>`"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The export fixture with a hostile provenance (a valid digest) and title, built once."""
    root = tmp_path_factory.mktemp("hostile-export")
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("golden", "site"))
    stored = root / "snippets" / "_results" / "timing" / "cpu-x86_64.json"
    document = schema.migrate(json.loads(stored.read_text(encoding="utf-8")))
    document["provenance"].update(cpu=CPU, torch=TORCH)
    document["verdicts"]["hostile"] = {
        "kind": "verdict", "name": "hostile", "candidate": CANDIDATE, "baseline": BASELINE, "ratio": 3.1,
        "low": 2.9, "high": 3.3, "confidence": 0.95, "delta": 0.05, "blocks": 20, "verdict": "faster",
        "expected": None, "noise": [], "device": "cpu", "line": 3, "cell": "record"}
    document["digest"] = schema.digest(document)
    stored.write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")
    post = root / "posts" / "posts" / "measured.md"
    text = post.read_text(encoding="utf-8")
    text = text.replace("title: 导出实测：表格、代码与数值", f"title: '{TITLE}'")
    post.write_text(f'{text}\n结论：<%= verdict("timing", "hostile") %>。\n', encoding="utf-8")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-f", str(root / "mkdocs.yml")],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert built.returncode == 0, built.stderr
    return root


def exported(site: Path, tmp_path: Path, target: str) -> str:
    out = tmp_path / f"{target}.md"
    assert main(["export", "-f", str(site / "mkdocs.yml"), "measured", "--to", target, "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def rendered(markdown: str) -> lxml.html.HtmlElement:
    """The export as a platform shows it: CommonMark with tables and raw HTML; front matter is not shown."""
    if markdown.startswith("---\n"):
        markdown = markdown.split("\n---\n", 1)[1]
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    return lxml.html.fragment_fromstring(html, create_parent="div")


@pytest.mark.parametrize("target", list(TARGETS))
def test_provenance_from_a_result_file_is_text_in_every_export(
        site: Path, tmp_path: Path, target: str) -> None:
    page = rendered(exported(site, tmp_path, target))
    assert not page.xpath("//script | //img[@onerror] | //img[@src='x'] | //a[contains(@href, 'evil')]")
    footers = [em.text_content() for em in page.xpath("//em") if "timing · " in em.text_content()]
    assert footers and all(f"CPU {CPU}" in footer and f"torch {TORCH}" in footer for footer in footers)


@pytest.mark.parametrize("target", ["juejin", "markdown"])
def test_a_title_cannot_move_the_origin_link(site: Path, tmp_path: Path, target: str) -> None:
    page = rendered(exported(site, tmp_path, target))
    (origin,) = [a for a in page.xpath("//a") if "原文链接" in a.getparent().text_content()]
    assert origin.get("href") == URL and origin.text_content() == TITLE


@pytest.mark.parametrize("pattern", ["*", "**", "meas*", "measure?", "[m]easured", "posts/*.md"])
def test_a_glob_pattern_is_refused_in_one_line_and_nothing_is_written(
        site: Path, pattern: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["export", "-f", str(site / "mkdocs.yml"), pattern, "--to", "csdn"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("blog: error: POST ") and err.count("\n") == 1, err
    assert not (site / ".blog" / "export").exists()


def test_verdict_labels_a_result_recorded_are_code_and_text(site: Path, tmp_path: Path) -> None:
    page = rendered(exported(site, tmp_path, "markdown"))
    (clause,) = [p for p in page.xpath("//p") if p.text_content().startswith("结论：")]
    codes = [code.text_content() for code in clause.xpath("code")]
    assert codes == ["compiled", "eager <script>alert(4)</script>"]
    assert "<img src=x onerror=alert(3)> [z](https://evil.example/)" in clause.text_content()
    assert not page.xpath("//script | //img[@onerror] | //a[contains(@href, 'evil')]")
