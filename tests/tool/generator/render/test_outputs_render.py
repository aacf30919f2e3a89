"""How a post shows a cell's outputs (outputs.py): tags, the MIME priority, terminal text, tables, math."""

from __future__ import annotations

from html import unescape
from pathlib import Path

import pytest

from perfblog.generator import terminal
from perfblog.generator.errors import EmbedError
from perfblog.generator.render import embeds, outputs, render, sanitize
from perfblog.generator.source import snippet
from perfblog.generator.source.celltags import Tag
from perfblog.generator.store import resolve
from perfblog.generator.store.content import DisplayOutput, ErrorOutput, StreamOutput
from perfblog.generator.store.result import CellResult, Provenance, Result

PAGE = outputs.Placement(image_url=lambda name: f"files/{name}", sanitizer=sanitize.Sanitizer(),
                    labels=outputs.LABELS["en"], alt="output of s · c")
OPTIONS = outputs.Options(max_lines=3)


def shown(*outs: object, tags: tuple[Tag, ...] = (), options: outputs.Options = OPTIONS) -> str:
    cell = CellResult(name="c", source="", line=1, outputs=tuple(outs), wall_s=0.0)  # type: ignore[arg-type]
    return sanitize.readable(outputs.show(cell, tags, PAGE, options))


def test_the_first_type_of_the_mime_priority_is_shown() -> None:
    bundle = DisplayOutput({"text/plain": "<Figure>", "text/html": "<b>x</b>",
                            "image/png": "0123456789abcdef.png"},
                           {"image/png": {"width": 320, "height": 240}})
    page = shown(bundle)
    assert 'src="files/0123456789abcdef.png"' in page and 'height="240" width="320"' in page
    assert "<b>" not in page
    assert "<strong>y</strong>" in shown(DisplayOutput({"text/plain": "x", "text/markdown": "**y**"}))
    assert "<b>x</b>" in shown(DisplayOutput({"text/plain": "x", "text/html": "<b>x</b>"}))


def test_math_loses_ipythons_delimiters_and_becomes_display_math() -> None:
    for latex in (r"$\displaystyle x^2$", r"$$x^2$$", r"\[x^2\]", "x^2"):
        page = shown(DisplayOutput({"text/latex": latex, "text/plain": "<Math>"}))
        assert unescape(page) == r'<div class="snippet-math arithmatex">\[x^2\]</div>', latex
    env = shown(DisplayOutput({"text/latex": r"\begin{align}a&=b\end{align}"}))
    assert unescape(env).endswith(r">\begin{align}a&=b\end{align}</div>")


def test_json_is_highlighted_with_the_themes_classes() -> None:
    page = shown(DisplayOutput({"application/json": '{\n  "a": 1\n}', "text/plain": "<JSON>"}))
    assert page.startswith('<div class="language-json highlight"><pre><samp>')
    assert '<span class="nt">"a"</span>' in unescape(page)


def test_terminal_colours_are_spans_unless_stripped() -> None:
    red = StreamOutput("stdout", "\x1b[31mred\x1b[0m plain\n")
    assert '<span class="ansi-red-fg">red</span> plain' in shown(red)
    assert "<span" not in shown(red, tags=(Tag.STRIP_ANSI,))
    assert "<span" not in shown(red, options=outputs.Options(colours=False))


@pytest.mark.parametrize(("code", "classes"), [
    ("38;5;1", "ansi-red-fg"), ("38;5;196", "ansi-red-intense-fg"), ("38;5;208", "ansi-yellow-fg"),
    ("48;5;236", "ansi-black-bg"), ("38;5;250", "ansi-white-fg"), ("38;2;0;128;0", "ansi-green-fg"),
    ("1;38;2;300;0;0", "ansi-red-intense-fg ansi-bold"),
])
def test_a_256_or_true_colour_takes_the_nearest_colour_of_the_palette(code: str, classes: str) -> None:
    assert f'<span class="{classes}">x</span>' in shown(StreamOutput("stdout", f"\x1b[{code}mx\x1b[0m\n"))


def test_long_terminal_text_shows_its_head_and_keeps_the_rest_behind_show_all() -> None:
    page = shown(StreamOutput("stdout", "".join(f"line {i}\n" for i in range(5))))
    head, more = page.split("<details", 1)
    assert "line 2" in head and "line 3" not in head
    assert "<summary>Show all 5 lines</summary>" in more and "line 4" in more
    assert "<details" not in shown(StreamOutput("stdout", "a\nb\nc\n"))


def test_stderr_is_folded_unless_shown_and_streams_can_be_removed() -> None:
    out, err = StreamOutput("stdout", "out\n"), StreamOutput("stderr", "warning\n")
    assert '<details class="snippet-stderr"><summary>stderr</summary>' in shown(out, err)
    assert "<details" not in shown(out, err, tags=(Tag.SHOW_STDERR,))
    assert "warning" not in shown(out, err, tags=(Tag.REMOVE_STDERR,))
    assert "snippet-stdout" not in shown(out, err, tags=(Tag.REMOVE_STDOUT,))


def test_a_traceback_is_folded_unless_the_cell_shows_it() -> None:
    error = ErrorOutput("ValueError", "boom", "Traceback (most recent call last):\nValueError: boom")
    assert '<details class="snippet-traceback">' in shown(error)
    assert "<details" not in shown(error, tags=(Tag.SHOW_TRACEBACK,))


def test_hide_output_collapses_everything_the_cell_shows() -> None:
    page = shown(StreamOutput("stdout", "hi\n"), tags=(Tag.HIDE_OUTPUT,))
    assert page.startswith('<details class="snippet-hidden"><summary>Output</summary>') and "hi" in page


def test_plotting_return_values_beside_a_figure_are_left_out() -> None:
    figure = DisplayOutput({"image/png": "0123456789abcdef.png", "text/plain": "<Figure size 640x480>"})
    bars = DisplayOutput({"text/plain": "<BarContainer object of 2 artists>"})
    title = DisplayOutput({"text/plain": "Text(0.5, 1.0, 'squares')"})
    assert "BarContainer" not in shown(bars, figure) and "squares" not in shown(title, figure)
    assert "BarContainer" in shown(bars)  # no figure: it is the cell's only output


def test_a_dataframe_becomes_a_plain_table_and_a_styler_keeps_its_cell_colours() -> None:
    frame = ('<div><style scoped>.dataframe tbody tr th { vertical-align: top; }</style>'
             '<table border="1" class="dataframe"><tr><th>a</th></tr><tr><td>1</td></tr></table></div>')
    page = shown(DisplayOutput({"text/html": frame, "text/plain": "a"}))
    assert page.startswith('<div class="snippet-html snippet-table">')
    assert "<table>" in page and "vertical-align" not in page and "dataframe" not in page
    styler = ('<style type="text/css">#T_1_row0_col0 { background-color: #ffff00; color: red; }\n'
              '#T_1 th { position: fixed; }</style>'
              '<table id="T_1"><tr><td id="T_1_row0_col0">1</td></tr></table>')
    page = shown(DisplayOutput({"text/html": styler}))
    assert 'style="background-color:#ffff00;color:red"' in page and "position" not in page


def test_terminal_normalise_keeps_the_last_frame_and_colours_and_drops_other_controls() -> None:
    text = "a\r\x1b[32mb\x1b[0m\r\nc\x1b]8;;http://x\x1b\\d\x1b]8;;\x1b\\\x1b[2K\n"
    assert terminal.normalise(text) == "\x1b[32mb\x1b[0m\ncd\n"
    assert terminal.normalise("abc\bd") == "abd"
    assert terminal.plain("\x1b[1mbold\x1b[0m\x07") == "bold"


def test_a_long_line_is_processed_in_linear_time() -> None:
    import time

    line = "\x1b[31m" + "x\r" * 200_000 + "\x1b]0;t" * 1000
    start = time.perf_counter()
    terminal.html_lines(terminal.normalise(line))
    assert time.perf_counter() - start < 5


@pytest.fixture
def tagged(tmp_path: Path) -> render.Renderer:
    path = tmp_path / "s.py"
    path.write_text('# %% name="plumbing" tags=["remove-input", "remove-output"]\nx = 1\n\n'
                    '# %% name="quiet" tags=["hide-input"]\nprint(x)\n', encoding="utf-8")
    snip = snippet.load(path, tmp_path)
    provenance = Provenance(device="cpu", cpu="cpu", cores=1, gpu=None, python="3.12", torch=None,
                            triton=None, git_commit=None, git_dirty=None, ran_at="2026-12-01T00:00:00Z",
                            duration_s=1.0)
    cells = tuple(CellResult(name=c.key, source=c.source, line=c.line, outputs=(), wall_s=0.0, tags=c.tags)
                  for c in snip.code_cells)
    result = Result(snippet="s", key=snip.key, hashes=snip.hashes, device_class="cpu-x86_64",
                    provenance=provenance, cells=cells)
    status = resolve.status_of(snip, "cpu-x86_64", result)
    return render.Renderer(lambda stem, post: embeds.Resolved(snip, status))


def test_remove_input_and_remove_output_refuse_the_embed(tagged: render.Renderer) -> None:
    with pytest.raises(EmbedError, match=r"p\.md:1: cell 'plumbing' of snippet 's' is tagged remove-input"):
        tagged.render('<%= code("s", "plumbing") %>', "p.md")
    with pytest.raises(EmbedError, match="is tagged remove-output"):
        tagged.render('<%= output("s", "plumbing") %>', "p.md")


def test_hide_input_shows_the_code_collapsed_and_highlighted(tagged: render.Renderer) -> None:
    chinese = embeds.Page(language="zh-CN")
    page = sanitize.readable(tagged.render('<%= code("s", "quiet") %>', "p.md", page=chinese))
    assert '<details class="snippet-hidden snippet-code"><summary>代码</summary>' in page
    assert '<span class="nb">print</span>' in page
