"""Snippets in every jupytext format: jupytext decides the cells, and no code line is ever lost silently.

The tutorials in tests/data/notebooks are PyTorch's own sphinx-gallery scripts (see NOTICE.md there);
the other formats are what `jupytext --to FORMAT` makes of them, written by jupytext in the test.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import pytest
from paths import DATA, ROOT

from perfblog.generator.errors import SnippetError
from perfblog.generator.source import snippet
from perfblog.generator.source.celltags import Tag

FIXTURES = DATA / "notebooks"
AUTOGRAD = FIXTURES / "autogradqs_tutorial.py"
TENSORS = FIXTURES / "tensorqs_tutorial.py"
#: jupytext format -> the file suffix it writes.
FORMATS = {"py:percent": ".py", "py:light": ".py", "py:sphinx": ".py", "md": ".md", "md:myst": ".md",
           "ipynb": ".ipynb"}


def convert(source: Path, fmt: str, folder: Path, stem: str = "tutorial") -> Path:
    """``source`` as `jupytext --to fmt` writes it."""
    target = folder / f"{stem}{FORMATS[fmt]}"
    jupytext.write(jupytext.read(source), target, fmt=fmt)
    return target


def code_sources(path: Path) -> list[str]:
    return [c.source.strip() for c in snippet.load(path, path.parent).code_cells]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_tutorial_has_the_same_code_cells_in_every_format(tmp_path: Path, fmt: str) -> None:
    expected = [c.source.strip() for c in jupytext.read(AUTOGRAD).cells if c.cell_type == "code"]
    assert len(expected) == 9
    assert code_sources(convert(AUTOGRAD, fmt, tmp_path)) == expected


def test_the_sphinx_gallery_original_is_read_as_sphinx_gallery(tmp_path: Path) -> None:
    target = tmp_path / "tutorial.py"
    target.write_text(AUTOGRAD.read_text(encoding="utf-8"), encoding="utf-8")
    cells = snippet.load(target, tmp_path).code_cells
    assert len(cells) == 9  # not one cell #1 holding the whole script
    assert cells[2].source.startswith('print(f"Gradient function for z')
    assert (cells[2].line, cells[2].first_line) == (67, 67)


@pytest.mark.parametrize(("fmt", "first"), [("py:percent", "tensor = torch.rand(3,4)"),
                                           ("md:myst", "data = [[1, 2],[3, 4]]")])
def test_code_that_jupytext_reads_as_markdown_is_an_error_naming_the_lines(tmp_path: Path, fmt: str,
                                                                            first: str) -> None:
    # "Attributes of a Tensor / ~~~~~~~~~~~~~~~~~": the RST underline opens a Markdown code fence that the
    # next equally long one closes, and the code cells in between become prose.
    path = convert(TENSORS, fmt, tmp_path)
    with pytest.raises(SnippetError) as caught:
        snippet.load(path, tmp_path)
    message = str(caught.value)
    line = int(message.split(":")[1])
    assert path.read_text(encoding="utf-8").splitlines()[line - 1] == first
    assert "jupytext reads them as part of the Markdown cell of lines" in message
    assert "opens a Markdown code block" in message


def test_a_heading_fixed_by_the_author_is_read_whole(tmp_path: Path) -> None:
    path = convert(TENSORS, "py:percent", tmp_path)
    text = path.read_text(encoding="utf-8").replace("# ~~~~~~~~~~~~~~~~~\n", "# -----------------\n")
    path.write_text(text, encoding="utf-8")
    assert "tensor = torch.rand(3,4)" in "\n".join(code_sources(path))


@pytest.mark.parametrize("text", [
    "# %% name=\"a\"\nx = 1\n\ny = (x +\n     1)\n# %% [markdown]\n# prose\nz = 3\n",
    "x = 1\n\n\n# %% [markdown]\n# prose\n\nprint(x)  # after a markdown cell, outside any code cell\n",
])
def test_every_code_line_belongs_to_a_code_cell(tmp_path: Path, text: str) -> None:
    path = tmp_path / "s.py"
    path.write_text("# %%\n" + text if not text.startswith("#") else text, encoding="utf-8")
    try:
        cells = snippet.load(path, tmp_path).code_cells
    except SnippetError as exc:
        assert "would never run" in str(exc) or "outside every code cell" in str(exc)
    else:  # jupytext put the trailing code into a code cell after all
        assert any("z = 3" in c.source or "print(x)" in c.source for c in cells)


def test_a_commented_cell_magic_is_not_a_cell_marker(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text('# %% name="timed"\n# %%time\nx = sum(range(10))\n\n# %% name="broken"\ny = 1\nz = (\n',
                    encoding="utf-8")
    with pytest.raises(SnippetError, match=r"s\.py:7: syntax error in cell 'broken'"):
        snippet.load(path, tmp_path)
    path.write_text('# %% name="timed"\n# %%time\nx = sum(range(10))\n\n# %% name="next"\ny = 1\n',
                    encoding="utf-8")
    timed, following = snippet.load(path, tmp_path).code_cells
    assert (timed.line, timed.first_line, timed.source) == (1, 2, "%%time\nx = sum(range(10))")
    assert (following.key, following.line) == ("next", 5)


def test_percent_cells_may_have_titles_and_jupytext_metadata(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text('# %% Setting up name="setup"\nx = 1\n\n# %% Plain title\ny = 2\n\n'
                    '# %% cell_marker="\\"\\"\\"" lines_to_next_cell=2 colab={"id": "x"}\nz = 3\n',
                    encoding="utf-8")
    assert [c.key for c in snippet.load(path, tmp_path).code_cells] == ["setup", "#2", "#3"]


def test_jupytext_percent_output_of_a_sphinx_gallery_script_is_accepted_as_is(tmp_path: Path) -> None:
    path = convert(AUTOGRAD, "py:percent", tmp_path)
    assert 'cell_marker' in path.read_text(encoding="utf-8") or '"""' in path.read_text(encoding="utf-8")
    assert len(snippet.load(path, tmp_path).code_cells) == 9


def test_standard_tags_set_flags_and_display_tags(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text('# %% tags=["raises-exception", "name:boom", "my-own-tag"]\n1 / 0\n\n'
                    '# %% name="quiet" tags=["remove-cell"]\nx = 1\n\n'
                    '# %% tags=["hide-input", "remove-stderr", "show-traceback"]\ny = 2\n', encoding="utf-8")
    boom, quiet, shown = snippet.load(path, tmp_path).code_cells
    assert (boom.key, boom.raises, boom.hide, boom.tags) == ("boom", True, False, ())
    assert (quiet.hide, quiet.raises) == (True, False)
    assert shown.tags == (Tag.REMOVE_STDERR, Tag.HIDE_INPUT, Tag.SHOW_TRACEBACK)


def test_a_raises_exception_tag_is_the_raises_option_for_the_key(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text('# %% name="a" raises=true\n1 / 0\n', encoding="utf-8")
    by_option = snippet.load(path, tmp_path).key
    path.write_text('# %% name="a" tags=["raises-exception"]\n1 / 0\n', encoding="utf-8")
    assert snippet.load(path, tmp_path).key == by_option


def test_display_tags_do_not_change_the_key(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text('# %% name="a"\nx = 1\n', encoding="utf-8")
    before = snippet.load(path, tmp_path).key
    path.write_text('# %% name="a" tags=["hide-input", "remove-stderr"]\nx = 1\n', encoding="utf-8")
    assert snippet.load(path, tmp_path).key == before


@pytest.mark.parametrize(("text", "message"), [
    ('# %% name="a" tags=["name:b"]\nx = 1\n', "the cell has several names ('a', 'b')"),
    ('# %% nmae="a"\nx = 1\n', "unknown cell option 'nmae'; did you mean 'name'?"),
])
def test_bad_names_and_tags_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "s.py"
    path.write_text("# %%\nw = 0\n\n" + text, encoding="utf-8")
    with pytest.raises(SnippetError, match=r"s\.py:4: ") as caught:
        snippet.load(path, tmp_path)
    assert message in str(caught.value)


def test_markdown_notebooks_and_ipynb_are_snippets(tmp_path: Path) -> None:
    convert(AUTOGRAD, "md:myst", tmp_path, "myst_one")
    convert(AUTOGRAD, "md", tmp_path, "md_one")
    convert(AUTOGRAD, "ipynb", tmp_path, "nb_one")
    (tmp_path / "NOTES.md").write_text("# Notes\n\nNo code cell: not a snippet.\n", encoding="utf-8")
    (tmp_path / "_draft.md").write_text("```python\nprint('a helper')\n```\n", encoding="utf-8")
    assert [p.name for p in snippet.discover(tmp_path)] == ["md_one.md", "myst_one.md", "nb_one.ipynb"]


def test_an_ipynb_cell_is_placed_at_its_source_line_in_the_json(tmp_path: Path) -> None:
    path = convert(AUTOGRAD, "ipynb", tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    for cell in snippet.load(path, tmp_path).code_cells:
        first = cell.source.splitlines()[0] if cell.source else ""
        assert first.replace('"', '\\"') in lines[cell.line - 1]


def test_a_jupytext_pair_is_one_snippet_and_two_unpaired_files_are_an_error(tmp_path: Path) -> None:
    convert(AUTOGRAD, "ipynb", tmp_path, "pair")
    text = tmp_path / "pair.py"
    text.write_text('# %%\nx = 1\n', encoding="utf-8")
    with pytest.raises(SnippetError, match="are two snippets with one name"):
        snippet.discover(tmp_path)
    header = "# ---\n# jupyter:\n#   jupytext:\n#     formats: ipynb,py:percent\n# ---\n\n"
    text.write_text(header + "# %%\nx = 1\n", encoding="utf-8")
    assert [p.name for p in snippet.discover(tmp_path)] == ["pair.py"]


def test_the_reference_tables_of_docs_notebooks_are_the_ones_the_registries_generate() -> None:
    from perfblog.generator import reference

    page = (ROOT / "docs" / "notebooks.md").read_text(encoding="utf-8")
    assert page.count("<!-- generated: ") == len(reference.TABLES)
    assert reference.render(page) == page, "run `make docs` (it regenerates docs/notebooks.md)"


def test_figure_options_belong_to_the_key_and_timeouts_do_not(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    body = '# %% name="a"\nx = 1\n'
    path.write_text(body, encoding="utf-8")
    plain = snippet.load(path, tmp_path).key
    path.write_text("# ---\n# blog:\n#   timeout: 60\n# ---\n\n" + body, encoding="utf-8")
    assert snippet.load(path, tmp_path).key == plain
    path.write_text("# ---\n# blog:\n#   figure_format: svg\n# ---\n\n" + body, encoding="utf-8")
    assert snippet.load(path, tmp_path).key != plain
    path.write_text("# ---\n# blog:\n#   figure_format: gif\n# ---\n\n" + body, encoding="utf-8")
    with pytest.raises(SnippetError, match=r"blog\.figure_format must be one of retina, png, svg, jpeg"):
        snippet.load(path, tmp_path)
