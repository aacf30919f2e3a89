"""A snippet's downloads: one file that runs alone (helpers and harness functions copied in, record calls
and timing assertions left out, behaviour assertions kept), a header naming its packages, the same
bytes every time; the .ipynb is the same code."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from perfblog.core.cache import CACHE_DIR, Cache
from perfblog.generator.render import downloads
from perfblog.generator.source.snippet import load

SNIPPET = '''\
# %% [markdown]
# Opening prose.

# %% name="setup"
import numpy as np
import torch

from _helper import scaled
from perfblog.generator import glue, target_device
from perfblog.generator.bench import compare, first_line

DEVICE = target_device()
x = torch.ones(4)
# blog: start remove-input
caption = f"n = {len(x)}"
glue("n", 4, caption=caption)
# blog: end remove-input

# %% name="timing"
result = compare({"eager": torch.neg}, [(x,)], min_run_time=0.01)
event = torch.cuda.Event() if DEVICE == "cuda" else None
if event is not None:
    event.record()
# blog: start hide-input
assert result.speedup("eager") > 0.5
assert result["eager"].timing.median_s > 0
assert first_line("a\\nb") == "a"
assert scaled(np.ones(2)).sum() == 4
# blog: end hide-input
# blog: start remove-input
result.record("timings", caption="c")
for key in ("a", "b"):
    glue(key, 1)
# blog: end remove-input

judged = result.record_verdict("same", "eager")
assert judged.candidate == "eager"

# %% name="boom" raises=true
raise ValueError("on purpose")

# %% name="only_records"
# blog: start remove-input
glue("done", True)
# blog: end remove-input
'''

HELPER = '''\
"""A helper of the snippets folder."""

from perfblog.generator.bench import first_line


def scaled(values):
    """Twice the values."""
    return values * 2


def unused():
    return first_line("x")
'''


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project") / "snippets"
    root.mkdir()
    (root / "demo.py").write_text(SNIPPET, encoding="utf-8")
    (root / "_helper.py").write_text(HELPER, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def made(root: Path) -> downloads.Download:
    return downloads.make(load(root / "demo.py", root), downloads.modules_for(root))


def test_a_download_imports_nothing_of_the_project_and_defines_what_it_uses(made: downloads.Download) -> None:
    tree = ast.parse(made.py)
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not imported & {"perfblog", "_helper"}, imported
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert {"scaled", "target_device", "compare", "first_line", "Comparison"} <= defined
    assert "unused" not in defined and "glue" not in defined and "table" not in defined


def test_record_calls_and_timing_assertions_are_left_out_behaviour_assertions_stay(
        made: downloads.Download) -> None:
    code = made.py
    assert "glue(" not in code and '.record("timings"' not in code and "_emit" not in code
    assert "IPython" not in code  # only recording displays
    assert "speedup(\"eager\") > 0.5" not in code and "median_s > 0" not in code
    assert 'assert first_line("a\\nb") == "a"' in code and "assert scaled(np.ones(2)).sum() == 4" in code
    assert "    event.record()" in code  # a CUDA event's record is not a record call
    assert "blog:" not in code and "for key in" not in code  # markers, and a loop that only recorded
    assert "caption =" not in code  # a hidden assignment only a record call read


def test_a_cell_that_raises_on_purpose_prints_its_error_and_the_file_goes_on(
        made: downloads.Download) -> None:
    assert 'try:\n    raise ValueError("on purpose")\nexcept Exception as error:' in made.py
    compile(made.py, "demo.py", "exec")


def test_the_header_names_the_packages_beyond_torch(made: downloads.Download) -> None:
    assert made.packages == ("numpy",)
    assert downloads.needs(made.py) == ("numpy",)
    assert f"{downloads.NEEDS}torch numpy" in made.py.splitlines()[:3]


def test_the_notebook_holds_the_same_code_and_is_valid(made: downloads.Download) -> None:
    notebook = nbformat.reads(made.ipynb, as_version=4)
    nbformat.validate(notebook)
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert "def scaled(values):" in code and "from __future__ import annotations" in code
    assert [c.cell_type for c in notebook.cells][:3] == ["code", "markdown", "markdown"]  # header, prose
    assert json.loads(made.ipynb)["metadata"]["kernelspec"]["name"] == "python3"


def test_a_download_is_the_same_bytes_every_time(root: Path, made: downloads.Download) -> None:
    again = downloads.make(load(root / "demo.py", root), downloads.modules_for(root))
    assert (again.py, again.ipynb) == (made.py, made.ipynb)


def test_a_build_takes_a_download_from_the_cache_when_the_snippet_its_modules_and_the_code_are_the_same(
        root: Path, made: downloads.Download, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Making the downloads is a tenth of a build's own cost for the snippets plugin; a build keeps them in
    the cache folder as it does cards, and a cached file that is not a download of this snippet is made
    again."""
    cache = Cache(tmp_path)
    snippet = load(root / "demo.py", root)
    monkeypatch.setattr(downloads, "_MADE", {})  # a fresh process: `serve`'s memo is empty
    (first,) = downloads.make_all([snippet], cache)
    assert first == made
    (kept,) = (tmp_path / CACHE_DIR / downloads.CACHE_FOLDER).iterdir()

    def unmade(*args: object) -> None:
        raise AssertionError("made again")

    monkeypatch.setattr(downloads, "_MADE", {})
    monkeypatch.setattr(downloads, "make", unmade)
    assert downloads.make_all([snippet], cache) == [made]
    monkeypatch.undo()
    for wrong in (b"{", json.dumps({**json.loads(kept.read_bytes()), "stem": "other"}).encode(),
                  json.dumps({**json.loads(kept.read_bytes()), "packages": [1]}).encode()):
        kept.write_bytes(wrong)
        monkeypatch.setattr(downloads, "_MADE", {})
        assert downloads.make_all([snippet], cache) == [made]
        assert json.loads(kept.read_bytes())["stem"] == "demo"  # made and cached again


def test_the_links_name_both_files_relative_to_the_page() -> None:
    html = downloads.link("demo", "en", lambda path: "../" + path)
    assert html.startswith('<span class="snippet-download">Download ')
    assert 'href="../_snippets/demo/demo.py" download' in html and "demo.ipynb" in html
    assert downloads.link("demo", "zh-CN", str).startswith('<span class="snippet-download">下载 ')


@pytest.mark.parametrize(("line", "timing"), [
    ("assert result.speedup('a') > 1", True), ("assert stats.median_s < 1e-3", True),
    ("assert row['median_us'] > 0", True), ("assert judgement.verdict == 'faster'", True),
    ("assert stats.graph_breaks == 0", False), ("assert seen['first_line'] == 'x'", False),
])
def test_what_a_timing_assertion_is(line: str, timing: bool) -> None:
    assert downloads.is_timing(ast.parse(textwrap.dedent(line)).body[0]) is timing


def test_magics_and_shell_escapes_become_comments_and_the_python_still_runs(tmp_path: Path) -> None:
    """A notebook's `%%time` or `!pip` is not Python: the .py comments those lines (as a jupytext .py
    does) and keeps the cell's code, so the file runs in plain Python."""
    root = tmp_path / "snippets"
    root.mkdir()
    source = ('# %% name="timed"\n# %%time\ntotal = sum(range(10))\n\n'
              '# %% name="shell"\n!echo hi\n%time x = 1\nprint(total)\n')
    (root / "magic.py").write_text(source, encoding="utf-8")
    made = downloads.make(load(root / "magic.py", root), downloads.modules_for(root))
    assert "# !echo hi" in made.py and "# %time x = 1" in made.py
    done = subprocess.run([sys.executable, "-c", made.py], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "45\n", done.stderr
