"""The author's loop without surprises: what an author meets between `blog new` and a published post.

Each item of the loop has its test here or names where it is: placeholders anywhere fail the build,
drafts left out are named, snippets are named and renamed, embed errors point at their line, one
provenance line, `git_dirty` only for the snippet's own files, `blog run`'s progress.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import lxml.html
import pytest
import seo_pages
from paths import DATA, ROOT
from rich.console import Console

from perfblog.cli import main
from perfblog.generator.commands import _run_due
from perfblog.generator.errors import EmbedError
from perfblog.generator.render.render import Renderer
from perfblog.generator.run.engine import Engine, Settings
from perfblog.generator.run.runner import git_state
from perfblog.generator.source import snippet as snippet_module
from perfblog.seo import panel
from perfblog.seo.audit import audit_site
from perfblog.seo.registry import Scope
from perfblog.seo.report import render
from perfblog.seo.rules import RULES

REPO = ROOT
HAN = re.compile(r"[\u4e00-\u9fff]")
FIXTURES = DATA


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed blog: a snippet importing a helper, another snippet, a post."""
    (tmp_path / "snippets").mkdir()
    (tmp_path / "posts").mkdir()
    (tmp_path / "snippets/_helper.py").write_text("N = 3\n", encoding="utf-8")
    (tmp_path / "snippets/uses_helper.py").write_text("# %%\nfrom _helper import N\nprint(N)\n",
                                                      encoding="utf-8")
    (tmp_path / "snippets/other.py").write_text("# %%\nprint(1)\n", encoding="utf-8")
    (tmp_path / "posts/post.md").write_text("# post\n", encoding="utf-8")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "blog")
    return tmp_path


def dirty(repo: Path) -> bool | None:
    snip = snippet_module.load(repo / "snippets/uses_helper.py", repo / "snippets")
    return git_state(snip)["git_dirty"]


def test_git_dirty_is_false_when_only_other_files_changed(repo: Path) -> None:
    (repo / "posts/post.md").write_text("# post, edited\n", encoding="utf-8")
    (repo / "snippets/other.py").write_text("# %%\nprint(2)\n", encoding="utf-8")
    (repo / "notes.txt").write_text("untracked\n", encoding="utf-8")
    assert dirty(repo) is False


def test_git_dirty_is_true_when_the_snippet_or_a_module_it_imports_changed(repo: Path) -> None:
    (repo / "snippets/_helper.py").write_text("N = 4\n", encoding="utf-8")
    assert dirty(repo) is True
    git(repo, "commit", "-qam", "helper")
    assert dirty(repo) is False
    (repo / "snippets/uses_helper.py").write_text("# %%\nfrom _helper import N\nprint(N + 1)\n",
                                                  encoding="utf-8")
    assert dirty(repo) is True


def test_git_dirty_is_unknown_outside_a_repository(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text("# %%\nprint(1)\n", encoding="utf-8")
    assert git_state(snippet_module.load(tmp_path / "s.py", tmp_path)) == {"git_commit": None,
                                                                           "git_dirty": None}


@pytest.mark.kernel
def test_blog_run_shows_each_snippet_and_cell_with_its_elapsed_time(tmp_path: Path) -> None:
    (tmp_path / "timed.py").write_text('# %% name="quick"\nx = 1\n\n# %% name="slow"\nimport time\n'
                                       "time.sleep(0.6)\n", encoding="utf-8")
    engine = Engine(Settings(snippets_dir=tmp_path, results_dir=tmp_path / "_results", device="cpu"))
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120, color_system=None)
    with engine.store.lock():
        assert _run_due(engine, [engine.snippet("timed")], console) == 0
    shown = screen.getvalue()
    assert "snippets on cpu-" in shown and "  timed" in shown  # the snippet's bar, live
    assert re.search(r"cell 'slow'.*0:00:0\d", shown)  # the running cell with its clock
    assert re.search(r"ok   timed on cpu-\S+ in [\d.]+ s \(quick 0\.\d s, slow 0\.[6-9] s\)", shown)


def render_error(markdown: str, line_offset: int = 4) -> str:
    """The message a post's embed error gives (the post's Markdown starts after its front matter)."""
    renderer = Renderer(lambda stem, post: (_ for _ in ()).throw(EmbedError(f"unknown snippet {stem}")))
    with pytest.raises(EmbedError) as caught:
        renderer.render(markdown, "posts/p.md", line_offset)
    return str(caught.value)


@pytest.mark.parametrize("tag", ['<%= code("demo", "main")', '<% set x = 1'])
@pytest.mark.parametrize("after", ['<%= value("demo", "x") %>', "the end"])
def test_an_unclosed_tag_is_reported_on_its_own_line(tag: str, after: str) -> None:
    page = f"# title\n\ntext\n{tag}\n\nmore text\n{after}\nend\n"
    assert render_error(page) == f"posts/p.md:8: the tag {tag!r} is not closed: end it with %>"


def test_an_unclosed_comment_is_reported_on_its_own_line() -> None:
    assert render_error("# title\n\n<%# a note\nmore text\n") == \
        "posts/p.md:7: the tag '<%# a note' is not closed: end it with %>"


def test_an_unknown_function_is_named_with_a_guess_and_what_exists() -> None:
    message = render_error('# t\n\n<%= cod("demo", "main") %>\n')
    assert message == ("posts/p.md:7: 'cod' is not an embed function (did you mean 'code'?); posts may call "
                       "only code, output, table, chart, value, verdict, provenance, has_result, verdict_of "
                       "and range")


def test_an_unknown_name_lists_what_a_post_may_use() -> None:
    message = render_error("# t\n\n\n<%= vlaue %>\n")
    assert message.startswith("posts/p.md:8: 'vlaue' is undefined (did you mean 'value'?); posts may use "
                              "code, output, table, chart, value, verdict, provenance, has_result, "
                              "verdict_of and range")


@pytest.fixture
def blog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small site (the engine fixture's mkdocs.yml) holding a copy of a real snippet and its results."""
    root = tmp_path / "blog"
    (root / "posts/posts").mkdir(parents=True)
    shutil.copy(FIXTURES / "engine/blog/mkdocs.yml", root / "mkdocs.yml")
    (root / "snippets").mkdir()
    shutil.copy(REPO / "snippets/rich_outputs.py", root / "snippets/rich_outputs.py")
    shutil.copytree(REPO / "snippets/_results/rich_outputs", root / "snippets/_results/rich_outputs")
    monkeypatch.chdir(root)
    return root


def test_blog_new_snippet_name_chooses_the_snippets_name(blog: Path) -> None:
    assert main(["new", "向量点积为什么比循环快", "--snippet", "vec_dot"]) == 0
    post = (blog / "posts/posts/xiang-liang-dian-ji-wei-shen-me-bi-xun-huan-kuai.md").read_text("utf-8")
    assert (blog / "snippets/vec_dot.py").is_file()
    assert '<%= code("vec_dot", "main") %>' in post and '<%= output("vec_dot", "main") %>' in post


def test_blog_new_refuses_a_snippet_name_that_is_no_file_stem(blog: Path, capsys: pytest.CaptureFixture
                                                               ) -> None:
    assert main(["new", "标题", "--snippet", "../evil"]) == 2
    assert "snippet name '../evil'" in capsys.readouterr().err
    assert not (blog / "posts/posts/biao-ti.md").exists()


def test_blog_mv_renames_the_snippet_its_results_and_the_embeds_that_name_it(blog: Path) -> None:
    post = blog / "posts/posts/p.md"
    post.write_text('# p\n\n<%# from snippets/rich_outputs.py %>\n<%= code("rich_outputs", "figure") %>\n'
                    "<%= output('rich_outputs', 'figure') %>\n`rich_outputs` in prose stays.\n", "utf-8")
    assert main(["mv", "rich_outputs", "tensor_memory"]) == 0
    assert not (blog / "snippets/rich_outputs.py").exists() and (blog / "snippets/tensor_memory.py").is_file()
    assert post.read_text(encoding="utf-8") == (
        '# p\n\n<%# from snippets/tensor_memory.py %>\n<%= code("tensor_memory", "figure") %>\n'
        "<%= output('tensor_memory', 'figure') %>\n`rich_outputs` in prose stays.\n")
    results = blog / "snippets/_results/tensor_memory"
    assert not (blog / "snippets/_results/rich_outputs").exists()
    assert any((results / "cpu-x86_64-files").iterdir())  # the images came along
    engine = Engine(Settings(snippets_dir=blog / "snippets", results_dir=blog / "snippets/_results",
                             device="cpu"))
    shown = engine.shown(engine.snippet("tensor_memory"))
    assert (shown.state, shown.result.snippet) == ("fresh", "tensor_memory")  # no re-run needed


def test_blog_mv_refuses_a_taken_name_before_changing_anything(blog: Path, capsys: pytest.CaptureFixture
                                                               ) -> None:
    (blog / "snippets/taken.py").write_text("# %%\nx = 1\n", encoding="utf-8")
    assert main(["mv", "rich_outputs", "taken"]) == 2
    assert "snippets/taken.py already exists" in capsys.readouterr().err
    assert (blog / "snippets/rich_outputs.py").is_file()
    assert (blog / "snippets/_results/rich_outputs").is_dir()


def test_the_panel_speaks_the_pages_language_with_leftover_placeholders_first() -> None:
    chinese = seo_pages.page("placeholder-unfilled")
    english = chinese.replace('<html lang="zh-CN">', '<html lang="en">', 1)
    for html, heading, said, draft in (
            (chinese, "待填写", "里还留着占位文字「待填写」", "草稿"),
            (english, "placeholders", "placeholder '待填写' left in the", "Draft")):
        out = lxml.html.document_fromstring(panel.decorate(html, "p.html", draft=True, post=True))
        first = out.xpath("//aside[@class='blog-seo-panel']//tr")[0]
        assert (first.get("data-topic"), first.get("data-state")) == ("placeholder", "error")
        assert first.findtext("th") == heading
        assert said in first.xpath("string(.//li)")
        assert out.xpath("string(//div[@data-blog-draft]/strong)") == draft


def test_the_panels_search_preview_shows_the_page_at_the_sites_own_address() -> None:
    served = seo_pages.page("clean").replace("https://example.org/", "http://127.0.0.1:8000/notes/")
    out = lxml.html.document_fromstring(panel.decorate(
        served, "p.html", draft=False, post=True, site_url="https://blog.example.org/notes/",
        server_url="http://127.0.0.1:8000/notes/"))
    assert out.xpath("string(//div[@class='blog-seo-serp-url'])").startswith("https://blog.example.org/notes/")


def test_every_audit_finding_is_said_in_chinese_and_in_english(tmp_path: Path) -> None:
    report = audit_site(seo_pages.write_site(tmp_path))
    # robots.txt and sitemaps, and the sources (front matter, mkdocs.yml) the build reads: elsewhere
    per_page = {rule.id for rule in RULES if rule.scope not in (Scope.SITE, Scope.SOURCE)}
    assert {f.rule for f in report.findings} >= per_page  # every page rule's messages, once at least
    for finding in report.findings:
        assert finding.text("zh-CN") == finding.zh and finding.text("en") == finding.message
        assert HAN.search(finding.zh), finding
        assert finding.message[0].isascii() and finding.message != finding.zh, finding


def test_the_audit_report_puts_placeholders_first_in_the_sites_language(tmp_path: Path) -> None:
    report = audit_site(seo_pages.write_site(tmp_path))
    screen = io.StringIO()
    render(report, Console(file=screen, width=400, color_system=None))
    lines = screen.getvalue().splitlines()
    row = next(i for i, line in enumerate(lines) if "placeholder-unfilled/" in line)  # the broken page's row
    assert "error · placeholder-unfilled · 描述里还留着占" in lines[row]  # its first finding, in Chinese
