"""The reference in docs/ stays true to the code and out of the published blog; the README stays short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mkdocs.config import base
from mkdocs.config import config_options as c
from paths import ROOT

from perfblog.cli import docs
from perfblog.core import project
from perfblog.core.errors import BlogError

DOCS = ROOT / "docs"
CONFIGURATION = DOCS / "configuration.md"
#: The pages whose relative links must resolve: the README, ARCHITECTURE.md and the reference.
PAGES = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted(DOCS.glob("*.md"))]

FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)


class Example(base.Config):
    path = c.Type(str, default="out")
    """Where it goes | relative to mkdocs.yml."""
    mode = c.Choice(("fast", "slow"), default="fast")
    """How."""
    limit = c.Type((int, float), default=0)
    """Seconds;
    0: none."""
    enabled = c.Type(bool, default=True)
    """Whether."""
    name = c.Optional(c.Type(str))
    """Who."""


class Undocumented(base.Config):
    path = c.Type(str, default="out")


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in HEADING.findall(text)}


def relative_links(page: Path) -> list[str]:
    """Link targets outside code that are not URLs."""
    text = CODE_SPAN.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def test_the_option_tables_in_the_docs_are_the_ones_the_config_classes_generate() -> None:
    page = CONFIGURATION.read_text(encoding="utf-8")
    assert "<!-- options: perfblog.generator.config.SnippetsConfig -->" in page
    assert "<!-- options: perfblog.seo.config.SeoConfig -->" in page
    assert docs.render(page) == page, "run `make docs` (python -m perfblog.cli.docs docs/configuration.md)"


def test_a_table_gives_each_option_its_default_accepted_values_and_docstring() -> None:
    assert docs.options_table(Example).splitlines() == [
        "| option | default | accepts | what it does |",
        "|---|---|---|---|",
        "| `path` | `out` | text | Where it goes \\| relative to mkdocs.yml. |",
        "| `mode` | `fast` | `fast` \\| `slow` | How. |",
        "| `limit` | `0` | number | Seconds; 0: none. |",
        "| `enabled` | `true` | `true` \\| `false` | Whether. |",
        "| `name` | (none) | text | Who. |",
    ]


def test_an_option_without_a_docstring_cannot_be_documented() -> None:
    with pytest.raises(BlogError, match=r"Undocumented\.path: the option has no docstring"):
        docs.options_table(Undocumented)


def test_the_check_names_a_stale_page_and_exits_1_and_the_rewrite_mends_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "options.md"
    page.write_text(f"# x\n\n<!-- options: {__name__}.Example -->\n| old |\n<!-- /options -->\n")
    assert docs.main(["--check", str(page)]) == 1
    assert "options.md: stale" in capsys.readouterr().out
    assert docs.main([str(page)]) == 0
    assert docs.main(["--check", str(page)]) == 0
    assert "| `mode` | `fast` |" in page.read_text()


def test_a_page_without_a_table_or_naming_no_config_class_is_bad_input(tmp_path: Path) -> None:
    page = tmp_path / "options.md"
    page.write_text("# nothing generated here\n")
    assert docs.main(["--check", str(page)]) == 2
    page.write_text("<!-- options: pathlib.Path -->\n<!-- /options -->\n")
    assert docs.main(["--check", str(page)]) == 2


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve_to_a_file_and_heading(page: Path) -> None:
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        missing_heading = bool(anchor) and linked.suffix == ".md" and anchor not in anchors(linked)
        if not linked.exists() or missing_heading:
            broken.append(target)
    assert not broken, f"{page.name}: broken links {broken}"


def test_the_published_blog_neither_builds_nor_links_the_docs() -> None:
    layout = project.load(ROOT / "mkdocs.yml").layout
    assert layout.docs_dir == ROOT / "posts"
    assert not DOCS.resolve().is_relative_to(layout.docs_dir)
    into_docs = [
        (post.relative_to(ROOT).as_posix(), target)
        for post in layout.docs_dir.rglob("*.md")
        for target in relative_links(post)
        if (post.parent / target.partition("#")[0]).resolve().is_relative_to(DOCS.resolve())
    ]
    assert not into_docs


def test_the_readme_is_short_and_points_to_the_reference() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert {"docs/authoring.md", "docs/snippets.md", "docs/seo-rules.md", "ARCHITECTURE.md"} <= set(
        relative_links(ROOT / "README.md")
    )


def test_the_docs_index_links_every_reference_page() -> None:
    linked = set(relative_links(DOCS / "README.md"))
    pages = {page.name for page in DOCS.glob("*.md")} - {"README.md"}
    assert pages <= linked, f"add {sorted(pages - linked)} to docs/README.md"
