"""What the runner keeps of rich outputs, run in a real kernel: the rich notebook (tests/data/notebooks),
figures, sizes, tables, math, JSON, terminal text, cleared displays, tags that change a run."""

from __future__ import annotations

import shutil
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from paths import DATA

from perfblog.generator.run import runner
from perfblog.generator.run.runner import RunOptions
from perfblog.generator.source import snippet
from perfblog.generator.store.content import DisplayOutput, ErrorOutput, StreamOutput
from perfblog.generator.store.result import CellResult

RICH = DATA / "notebooks" / "rich.py"
CPU = RunOptions(device="cpu", device_class="cpu-test", cell_timeout=120, snippet_timeout=300)

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def rich(tmp_path_factory: pytest.TempPathFactory) -> Iterator[runner.RunResult]:
    """The rich notebook run once, with ``MPLBACKEND=Agg`` in the environment (as CI machines often set)."""
    folder = tmp_path_factory.mktemp("rich")
    shutil.copyfile(RICH, folder / "rich.py")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MPLBACKEND", "Agg")
        outcome = runner.run(snippet.load(folder / "rich.py", folder), CPU)
    assert outcome.ok, f"{outcome.error}\n{outcome.traceback}"
    yield outcome


def cell(outcome: runner.RunResult, name: str) -> CellResult:
    assert outcome.result is not None
    found = outcome.result.cell(name)
    assert found is not None, name
    return found


def displays(outcome: runner.RunResult, name: str) -> list[DisplayOutput]:
    return [o for o in cell(outcome, name).outputs if isinstance(o, DisplayOutput)]


def png_size(blob: bytes) -> tuple[int, int]:
    assert blob[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", blob[16:24])


def test_a_figure_shown_with_plt_show_is_kept_as_a_sharp_png_at_its_intended_size(rich) -> None:
    (figure,) = displays(rich, "figure")
    name = figure.data["image/png"]
    width, height = png_size(rich.images[name])
    intended = figure.metadata["image/png"]
    assert (intended["width"], intended["height"]) == (width // 2, height // 2)  # retina: twice the pixels
    assert 300 < intended["width"] < 420  # a 4-inch figure at 100 dpi, cropped tight


def test_a_figure_left_as_the_cells_value_is_kept(rich) -> None:
    found = displays(rich, "bar")
    assert any("image/png" in d.data for d in found)
    assert any(d.data.get("text/plain", "").startswith("<BarContainer") for d in found)


def test_an_image_keeps_the_width_it_was_given(rich) -> None:
    (image,) = displays(rich, "image_width")
    assert image.metadata == {"image/png": {"width": 120}}


def test_tables_math_json_and_markdown_keep_their_mime_types(rich) -> None:
    (frame,) = displays(rich, "dataframe")
    assert '<table border="1" class="dataframe">' in frame.data["text/html"] and "text/plain" in frame.data
    (styler,) = displays(rich, "styler")
    assert "background-color: #c8e6c9" in styler.data["text/html"]
    (math,) = displays(rich, "math")
    latex = r"$\displaystyle \frac{t_\mathrm{eager}}{t_\mathrm{compiled}} \approx 3.1$"
    assert math.data["text/latex"] == latex
    (document,) = displays(rich, "json")
    assert '"speedup": 3.1' in document.data["application/json"]
    (markdown,) = displays(rich, "markdown")
    assert markdown.data["text/markdown"] == "**Bold** text and [a link](https://pytorch.org/)"


def test_a_progress_bar_redrawn_with_carriage_returns_keeps_its_last_frame(rich) -> None:
    assert cell(rich, "progress").outputs == (StreamOutput("stdout", "100% |##########|\n"),)


def test_cleared_output_keeps_only_what_was_displayed_last(rich) -> None:
    assert [d.data["text/plain"] for d in displays(rich, "clear")] == ["'frame 2'"]


def test_colours_are_kept_and_other_control_sequences_removed(rich) -> None:
    (stream,) = cell(rich, "colours").outputs
    assert stream == StreamOutput("stdout", "\x1b[31mred\x1b[0m \x1b[1;32mbold green\x1b[0m PyTorch done\n")


def test_a_printed_traceback_is_kept_on_stderr_and_the_tag_is_stored(rich) -> None:
    found = cell(rich, "traceback")
    (stream,) = found.outputs
    assert stream.name == "stderr" and "ZeroDivisionError: division by zero" in stream.text
    assert found.tags == ("show-stderr",)


def test_the_raises_exception_tag_lets_the_run_go_on_and_keeps_the_error(rich) -> None:
    found = cell(rich, "raises")
    assert found.raises and isinstance(found.outputs[-1], ErrorOutput)
    assert found.outputs[-1].evalue == "shown on purpose"
    assert cell(rich, "timed").outputs  # the cell after it ran (%%time printed its timing)


def test_an_error_in_a_timed_cell_is_reported_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text('# %% name="a"\nx = 1\n\n# %% name="b"\n# %%time\ny = 2\nraise ValueError("here")\n',
                    encoding="utf-8")
    outcome = runner.run(snippet.load(path, tmp_path), CPU)
    assert not outcome.ok
    assert "s.py:7: cell 'b' raised ValueError: here" in str(outcome.error)


def test_a_snippet_may_ask_for_svg_figures(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text('# ---\n# blog:\n#   figure_format: svg\n# ---\n\n'
                    '# %% name="plot"\nimport matplotlib.pyplot as plt\n'
                    'plt.plot([1, 2], [3, 4])\nplt.show()\n', encoding="utf-8")
    outcome = runner.run(snippet.load(path, tmp_path), CPU)
    assert outcome.ok, outcome.error
    (figure,) = displays(outcome, "plot")
    name = figure.data["image/svg+xml"]
    assert "image/png" not in figure.data and outcome.images[name].lstrip().startswith(b"<?xml")
