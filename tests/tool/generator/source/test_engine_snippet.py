"""Reading snippets: named cells, flags, options, malformed input, and the hash that keys results."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfblog.generator.errors import SnippetError
from perfblog.generator.source import snippet
from perfblog.generator.store import resolve
from perfblog.generator.store.result import CellResult, Provenance, Result

GOOD = '''# ---
# jupyter:
#   jupytext:
#     text_representation:
#       format_name: percent
# blog:
#   timeout: 90
# ---

# %% [markdown]
# Prose about the benchmark.

# %% name="setup"
import _common
x = _common.base()

# %% name="bench" raises=true
%time x + 1
raise ValueError("expected")

# %% name="table" hide=true
print(x)

# %%
print("unnamed")
'''


def write(tmp_path: Path, text: str, name: str = "demo.py") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def ran(snip: snippet.Snippet) -> tuple[CellResult, ...]:
    """The code cells of ``snip`` as a run stores them (no outputs: staleness never reads them)."""
    return tuple(CellResult(name=c.key, source=c.source, line=c.line, outputs=(), wall_s=0.0, raises=c.raises,
                            hide=c.hide) for c in snip.code_cells)


def stored(snip: snippet.Snippet, cells: tuple[CellResult, ...] = ()) -> Result:
    """A result of ``snip`` as its code is now: its key and component hashes, and the given cells."""
    provenance = Provenance(device="cpu", cpu="cpu", cores=1, gpu=None, python="3.12.3", torch=None,
                            triton=None, git_commit=None, git_dirty=None, ran_at="2026-12-01T00:00:00Z",
                            duration_s=1.0)
    return Result(snippet=snip.stem, key=snip.key, hashes=snip.hashes, device_class="cpu-x86_64",
                  provenance=provenance, cells=cells)


@pytest.fixture
def snippets(tmp_path: Path) -> Path:
    write(tmp_path, "from _inner import ONE\n\n\ndef base():\n    return ONE\n", "_common.py")
    write(tmp_path, "ONE = 1\n", "_inner.py")
    write(tmp_path, GOOD)
    return tmp_path


def test_cells_carry_names_flags_and_marker_lines(snippets: Path) -> None:
    snip = snippet.load(snippets / "demo.py", snippets)
    code = snip.code_cells
    assert [c.key for c in code] == ["setup", "bench", "table", "#4"]
    assert [c.line for c in code] == [13, 17, 21, 24]
    assert code[1].raises and not code[1].hide
    assert code[2].hide and not code[2].raises
    assert snip.options == {"timeout": 90}
    assert snip.cell("bench") is code[1]
    assert snip.cell("#4") is code[3]
    assert snip.cell("missing") is None


def test_local_modules_are_hashed_transitively(snippets: Path) -> None:
    snip = snippet.load(snippets / "demo.py", snippets)
    assert set(snip.modules) == {"_common.py", "_inner.py"}


def test_discover_skips_helper_modules(snippets: Path) -> None:
    assert [p.name for p in snippet.discover(snippets)] == ["demo.py"]


def test_markdown_only_edit_keeps_the_key(snippets: Path) -> None:
    before = snippet.load(snippets / "demo.py", snippets)
    write(snippets, GOOD.replace("# Prose about the benchmark.", "# 关于基准测试的新说明。\n# More prose."))
    after = snippet.load(snippets / "demo.py", snippets)
    assert after.key == before.key


def test_trailing_whitespace_does_not_change_the_key(snippets: Path) -> None:
    before = snippet.load(snippets / "demo.py", snippets)
    write(snippets, GOOD.replace("x = _common.base()", "x = _common.base()   \n\n"))
    assert snippet.load(snippets / "demo.py", snippets).key == before.key


def test_code_edit_makes_the_result_stale_and_says_which_cell(snippets: Path) -> None:
    before = snippet.load(snippets / "demo.py", snippets)
    result = stored(before)
    edited = GOOD.replace('print("unnamed")', 'print("renamed")').replace("%time x + 1", "%time x + 2")
    write(snippets, edited)
    after = snippet.load(snippets / "demo.py", snippets)
    assert after.key != before.key
    assert resolve.stale_reasons(after, result) == ["code of cell 'bench' changed",
                                                    "code of cell '#4' changed"]
    assert resolve.stale_reasons(before, result) == []


def test_flag_change_is_a_code_change(snippets: Path) -> None:
    before = snippet.load(snippets / "demo.py", snippets)
    result = stored(before)
    write(snippets, GOOD.replace('name="table" hide=true', 'name="table"'))
    after = snippet.load(snippets / "demo.py", snippets)
    assert resolve.stale_reasons(after, result) == ["code of cell 'table' changed"]


def test_local_module_edit_makes_the_result_stale_and_names_the_module(snippets: Path) -> None:
    before = snippet.load(snippets / "demo.py", snippets)
    result = stored(before)
    write(snippets, "ONE = 2\n", "_inner.py")
    after = snippet.load(snippets / "demo.py", snippets)
    assert resolve.stale_reasons(after, result) == ["local module _inner.py changed"]


def test_a_project_module_such_as_the_harness_belongs_to_the_key(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "harness").mkdir(parents=True)
    write(project / "harness", "", "__init__.py")
    write(project / "harness", "def compare():\n    return 1\n", "bench.py")
    snippets_dir = project / "snippets"
    snippets_dir.mkdir()
    write(snippets_dir, '# %% name="main"\nfrom harness.bench import compare\nprint(compare())\n')
    before = snippet.load(snippets_dir / "demo.py", snippets_dir)
    assert set(before.modules) == {"../harness/__init__.py", "../harness/bench.py"}

    result = stored(before)
    write(project / "harness", "def compare():\n    return 2\n", "bench.py")
    after = snippet.load(snippets_dir / "demo.py", snippets_dir)
    assert resolve.stale_reasons(after, result) == ["local module ../harness/bench.py changed"]


def test_reordered_cells_are_a_reason(snippets: Path) -> None:
    before = snippet.load(snippets / "demo.py", snippets)
    result = stored(before, ran(before))
    table = '# %% name="table" hide=true\nprint(x)\n\n'
    write(snippets, GOOD.replace(table, "").replace('# %% name="setup"', table + '# %% name="setup"'))
    after = snippet.load(snippets / "demo.py", snippets)
    assert resolve.stale_reasons(after, result) == ["cells were reordered"]


def test_an_unchanged_file_is_read_back_from_its_result_without_parsing(snippets: Path) -> None:
    parsed = snippet.load(snippets / "demo.py", snippets)
    result = stored(parsed, ran(parsed))
    again = resolve.recorded(snippets / "demo.py", snippets, result)
    assert again is not None and again.key == parsed.key
    assert [(c.key, c.line, c.raises, c.hide) for c in again.code_cells] == \
        [(c.key, c.line, c.raises, c.hide) for c in parsed.code_cells]
    write(snippets, GOOD.replace("# Prose about the benchmark.", "# Edited prose."))
    assert resolve.recorded(snippets / "demo.py", snippets, result) is None  # bytes changed: parse
    write(snippets, GOOD)
    write(snippets, "ONE = 3\n", "_inner.py")
    assert resolve.recorded(snippets / "demo.py", snippets, result) is None  # a module changed


def test_added_and_removed_cells_are_reasons(snippets: Path) -> None:
    before = snippet.load(snippets / "demo.py", snippets)
    result = stored(before)
    write(snippets, GOOD.replace('# %% name="table" hide=true', '# %% name="summary" hide=true'))
    after = snippet.load(snippets / "demo.py", snippets)
    assert resolve.stale_reasons(after, result) == ["cell 'summary' is new", "cell 'table' was removed"]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('# %% name="a"\nx = 1\n\n# %% name="b"\ny = (\n', 5, "syntax error in cell 'b'"),
        ('# %% name="a"\nx = 1\n\n# %% name="a"\ny = 2\n', 4, "duplicate cell name 'a' (first used on line"),
        ('# %% name="a b"\nx = 1\n', 1, "invalid cell name 'a b'"),
        ('# %% name="1st"\nx = 1\n', 1, "invalid cell name '1st'"),
        ('# %% name=bench\nx = 1\n', 1, "cannot read cell options 'name=bench'"),
        ('# %%\nx = 1\n\n# %% raises="yes"\ny = 2\n', 4, "raises='yes' must be true or false"),
        ('# %%\nx = 1\n\n# %% name="b" hdie=true\ny = 2\n', 4, "unknown cell option 'hdie'; did you mean"),
        ("# ---\n# blog:\n#   timout: 3\n# ---\n\n# %%\nx = 1\n", 1, "unknown snippet option blog.timout"),
        ("# ---\n# blog:\n#   timeout: -3\n# ---\n\n# %%\nx = 1\n", 1, "must be a positive number"),
        ("# ---\n# blog:\n#   accept_stale_gpu_until_rerun: 1\n# ---\n\n# %%\nx = 1\n", 1,
         "blog.accept_stale_gpu_until_rerun must be true or false, not 1"),
        ('# %% name="a"\nx = 1\n# blog: start hide-input\nassert x\n', 3,
         "'# blog: start hide-input' is never closed (end it with '# blog: end hide-input')"),
        ('# %% name="a"\nx = 1\n# blog: start remove-inputs\nglue(x)\n# blog: end remove-inputs\n', 3,
         "unknown hide marker tag 'remove-inputs' (a line range takes remove-input or hide-input)"),
        ('# %% name="a"\nx = 1\n\n# blog: end hide-input\n', 4,
         "'# blog: end hide-input' closes no hide-input"),
        ('# %%\nx = 1\n# blog: start hide-input\n# blog: start remove-input\n', 4, "ranges do not nest"),
        ('# %% name="a"\nif x:\n    # blog: start remove-input\n    y = 1\n    # blog: end remove-input\n', 2,
         "the code left after hiding lines is not valid Python"),
    ],
)
def test_malformed_snippet_names_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = write(tmp_path, text, "broken.py")
    with pytest.raises(SnippetError) as caught:
        snippet.load(path, tmp_path)
    assert f"broken.py:{line}: " in str(caught.value)
    assert message in str(caught.value)


def test_hide_markers_are_comments_that_never_change_the_key(snippets: Path) -> None:
    path = write(snippets, '# %% name="a"\nx = 1\nassert x == 1\nprint(x)\n', "marked.py")
    before = snippet.load(path, snippets).key
    write(snippets, '# %% name="a"\nx = 1\n# blog: start hide-input\nassert x == 1\n# blog: end hide-input\n'
                    'print(x)\n', "marked.py")
    assert snippet.load(path, snippets).key == before  # re-deciding what the page shows re-runs nothing


def test_magics_are_not_syntax_errors(tmp_path: Path) -> None:
    path = write(tmp_path, '# %% name="t"\n%timeit sum(range(10))\n!echo hi\n')
    assert snippet.load(path, tmp_path).cell("t") is not None
