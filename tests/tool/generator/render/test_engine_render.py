"""Embeds: syntax, escaping, provenance lines, stale and missing marks, errors that name post and line."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from typing import Any

import markdown as md
import pytest

from perfblog.generator.errors import EmbedError, SnippetError
from perfblog.generator.render import charts, embeds, render, sanitize
from perfblog.generator.source import snippet
from perfblog.generator.store import codec, resolve
from perfblog.generator.store.content import ChartRecord
from perfblog.generator.store.result import Result
from perfblog.generator.store.schema import digest

SOURCE = '''# %% name="bench"
print("<script>alert(1)</script>")

# %% name="secret" hide=true
x = 1

# %% name="boom" raises=true
raise ValueError("expected")
'''

PROV_GPU = {"device": "NVIDIA H200", "cpu": "Intel Xeon", "cores": 16, "python": "3.12.3", "torch": "2.11.0",
            "triton": "3.5.0", "gpu": {"name": "NVIDIA H200", "driver": "570.1", "cuda": "12.8",
                                       "capability": "9.0"},
            "git_commit": "abcdef1234567", "git_dirty": False, "ran_at": "2026-12-01T08:00:00Z",
            "duration_s": 3.2}
PROV_CPU = {"device": "Intel Xeon", "cpu": "Intel Xeon Platinum", "cores": 2, "python": "3.11.7",
            "torch": "2.13.0", "triton": "3.8.0", "gpu": None, "git_commit": None, "git_dirty": None,
            "ran_at": "2026-11-30T08:00:00Z", "duration_s": 1.0}


@pytest.fixture
def snip(tmp_path: Path) -> snippet.Snippet:
    path = tmp_path / "demo.py"
    path.write_text(SOURCE)
    return snippet.load(path, tmp_path)


def result(snip: snippet.Snippet, prov: dict[str, Any], **extra: Any) -> Result:
    data = {
        "snippet": "demo", "key": snip.key, "hashes": codec.write(snip.hashes), "status": "ok",
        "device_class": "cuda-nvidia-h200" if prov["gpu"] else "cpu-x86_64", "provenance": prov,
        "cells": [
            {"name": "bench", "source": "", "wall_s": 0.1, "raises": False, "hide": False, "line": 1,
             "outputs": [
                {"type": "stream", "name": "stdout", "text": "<script>alert(1)</script>\n```\n"},
                {"type": "display", "data": {"text/html": '<table><tr><td onclick="x()">1</td></tr></table>'
                                                          "<script>steal()</script>",
                                             "text/plain": "table"}},
                {"type": "display", "data": {"image/png": "0123456789abcdef.png", "text/plain": "<Figure>"}},
            ]},
            {"name": "boom", "source": "", "wall_s": 0.1, "raises": True, "hide": False, "line": 7,
             "outputs": [
                {"type": "error", "ename": "ValueError", "evalue": "expected",
                 "traceback": "ValueError: expected <b>"}]},
        ],
        "values": {"speedup": {"kind": "value", "name": "speedup", "value": 2.34567, "unit": "x",
                               "cell": "bench"},
                   "label": {"kind": "value", "name": "label", "value": "<i>eager</i>", "unit": None,
                             "cell": "bench"}},
        "tables": {"t": {"kind": "table", "name": "t", "columns": ["mode", "ms"],
                         "rows": [["a|b", 1.23456], ["<b>c</b>", None]], "caption": "耗时", "cell": "bench"}},
        "charts": {"c": {"kind": "chart", "name": "c", "chart": "bar", "x": ["eager", "compiled"],
                         "series": {"ms": [2.0, 1.0]}, "alt": "eager <slower> than compiled", "title": "t",
                         "x_label": "", "y_label": "ms", "cell": "bench"}},
    }
    data.update(extra)
    return Result.from_json(data)


def renderer(snip: snippet.Snippet, res: Result | None, show: bool = True) -> render.Renderer:
    def lookup(stem: str, post: str) -> embeds.Resolved:
        if stem != "demo":
            raise SnippetError(f"no snippet {stem!r} in snippets (known: demo)")
        status = resolve.status_of(snip, res.device_class if res else "cpu-x86_64", res)
        return embeds.Resolved(snip, status, show_outputs=show)

    return render.Renderer(lookup)


def html(text: str) -> str:
    return md.markdown(text, extensions=["tables", "pymdownx.superfences", "md_in_html"])


def page_html(text: str) -> str:
    """The page's HTML as the plugin finishes it: Markdown, then the embeds' inert text made readable."""
    return sanitize.readable(html(text))


def test_delimiters_leave_braces_in_code_and_math_alone(snip) -> None:
    page = 'Set {a, b} and $\\{x\\}$ and `{"k": {{v}}}` and {% raw %} <%# gone %>.\n'
    assert renderer(snip, result(snip, PROV_GPU)).render(page, "p.md") == \
        'Set {a, b} and $\\{x\\}$ and `{"k": {{v}}}` and {% raw %} .\n'


def test_value_is_formatted_with_gpu_provenance_in_its_title(snip) -> None:
    out = unescape(renderer(snip, result(snip, PROV_GPU)).render('<%= value("demo", "speedup", ".2f") %>',
                                                                  "p.md"))
    title = "NVIDIA H200 · torch 2.11.0 · 2026-12-01 · CUDA 12.8"
    assert out.startswith(f'<span class="snippet-value" title="{title}')
    assert ">2.35 x</span>" in out


def test_value_text_is_escaped(snip) -> None:
    out = html(renderer(snip, result(snip, PROV_GPU)).render('<%= value("demo", "label") %>', "p.md"))
    assert "eager" in out and "<i>" not in out and unescape(out).count("<i>eager</i>") == 1


def without_download(out: str) -> str:
    """An embed's HTML without the download links its page's first block of a snippet carries."""
    return re.sub(r' · <span class="snippet-download">.*?</span>', "", out)


def test_block_embeds_end_with_a_visible_provenance_line(snip) -> None:
    r = renderer(snip, result(snip, PROV_CPU))
    for embed in ('code("demo", "bench")', 'output("demo", "bench")', 'table("demo", "t")',
                  'chart("demo", "c")', 'provenance("demo")'):
        out = without_download(unescape(r.render(f"<%= {embed} %>", "p.md").rstrip()))
        assert out.endswith("CPU Intel Xeon Platinum (2 cores) · torch 2.13.0 · 2026-11-30</p>"), embed


def test_every_block_embed_has_one_provenance_format_what_it_shows_then_where_it_ran(snip) -> None:
    r = renderer(snip, result(snip, PROV_CPU))
    lines = {}
    for embed, what in (('code("demo", "bench")', "demo · bench"),
                        ('output("demo", "bench")', "demo · bench"), ('table("demo", "t")', "demo · t"),
                        ('chart("demo", "c")', "demo · c"), ('provenance("demo")', "demo")):
        out = without_download(unescape(r.render(f"<%= {embed} %>", "p.md").rstrip()))
        lines[embed] = out[out.rindex('<p class="snippet-provenance"'):]
        assert lines[embed] == (f'<p class="snippet-provenance" title="{lines[embed].split(chr(34))[3]}">'
                                f"{what} · CPU Intel Xeon Platinum (2 cores) · torch 2.13.0 · 2026-11-30</p>")
    assert len({line.split('">', 1)[0] for line in lines.values()}) == 1  # one tooltip, the full provenance


def test_snippet_output_cannot_inject_html(snip) -> None:
    page = page_html(renderer(snip, result(snip, PROV_GPU)).render('<%= output("demo", "bench") %>', "p.md"))
    assert "<script>" not in page
    assert unescape(page).count("<script>") == 1  # printed text shows; the HTML display's script is removed
    assert "steal" not in page
    assert "onclick" not in page and "<td>1</td>" in page  # harmless structure survives
    assert "```" in page  # a fence in the output cannot end the block early
    image = '<img src="demo/cuda-nvidia-h200-files/0123456789abcdef.png" alt="output of demo · bench" loading'

    assert image in unescape(page)


def test_expected_error_of_a_raises_cell_is_shown_escaped(snip) -> None:
    page = html(renderer(snip, result(snip, PROV_GPU)).render('<%= output("demo", "boom") %>', "p.md"))
    assert "<b>" not in page and "ValueError: expected <b>" in unescape(page)


def test_table_is_markdown_with_escaped_cells_and_caption(snip) -> None:
    out = renderer(snip, result(snip, PROV_GPU)).render('<%= table("demo", "t", ".1f") %>', "p.md")
    assert "| mode | ms |\n| --- | --- |\n| a&#124;b | 1&#46;2 |\n| &#60;b&#62;c&#60;&#47;b&#62; |  |" in out
    assert '<p class="snippet-caption">耗时</p>' in out
    assert "<td>a&#124;b</td>" in html(out) and "<b>" not in html(out)


def test_chart_is_inline_svg_with_title_and_alt_text(snip) -> None:
    out = renderer(snip, result(snip, PROV_GPU)).render('<%= chart("demo", "c") %>', "p.md")
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in out and 'role="img"' in out
    assert "<desc" in out and "eager <slower> than compiled</desc>" in unescape(out)
    assert out.count("<rect") == 3  # two bars and one legend swatch
    assert "\n\n" not in out.split("<figure")[1].split("</figure>")[0]


def test_line_chart_draws_one_polyline_per_series() -> None:
    svg = charts.svg(ChartRecord(name="l", chart="line", x=(1, 2, 3), series={"a": (1, 2, 3), "b": (3, 2, 1)},
                                 alt="lines"))
    assert svg.count("<polyline") == 2 and svg.count("<circle") == 6


def test_stale_result_is_marked_visibly_with_the_reason(snip, tmp_path: Path) -> None:
    old = result(snip, PROV_GPU)
    (tmp_path / "demo.py").write_text(SOURCE.replace("alert(1)", "alert(2)"))
    edited = snippet.load(tmp_path / "demo.py", tmp_path)
    r = renderer(edited, old)
    value = unescape(r.render('<%= value("demo", "speedup", ".1f") %>', "p.md"))
    assert '<sup class="snippet-stale-mark">stale</sup>' in value
    assert "stale: code of cell 'bench' changed" in value
    block = unescape(r.render('<%= output("demo", "bench") %>', "p.md"))
    mark = '<strong class="snippet-stale-mark">stale</strong>'
    assert f"{mark} (code of cell 'bench' changed)" in block


def test_missing_result_renders_visible_placeholders(snip) -> None:
    r = renderer(snip, None)
    assert "[demo.speedup]" in unescape(r.render('<%= value("demo", "speedup") %>', "p.md"))
    out = unescape(r.render('<%= output("demo", "bench") %>', "p.md"))
    assert "missing result (no result on this device)" in out and "no result yet" in out


def test_off_mode_shows_code_but_no_outputs(snip) -> None:
    r = renderer(snip, result(snip, PROV_GPU), show=False)
    assert "```python" in r.render('<%= code("demo", "bench") %>', "p.md")
    out = unescape(r.render('<%= output("demo", "bench") %>', "p.md"))
    assert "not shown (exec_mode off)" in out and "alert" not in out
    assert "snippet-off" in r.render('<%= value("demo", "speedup") %>', "p.md")


@pytest.mark.parametrize(
    ("embed", "message"),
    [
        ('<%= value("nope", "x") %>', "no snippet 'nope'"),
        ('<%= code("demo", "missing") %>', "has no code cell 'missing' (cells: bench, secret, boom)"),
        ('<%= output("demo", "secret") %>', "cell 'secret' of snippet 'demo' is marked hide=true"),
        ('<%= value("demo", "nope") %>', "snippet 'demo' recorded no value 'nope' (values: speedup, label)"),
        ('<%= table("demo", "nope") %>', "recorded no table 'nope'"),
        ('<%= value("demo", "speedup", ".2q") %>', "cannot take format '.2q'"),
        ('<%= provenance("demo") %><%= undefined_function() %>',
         "'undefined_function' is not an embed function"),
    ],
)
def test_embed_errors_name_post_and_line(snip, embed: str, message: str) -> None:
    page = "# Title\n\nIntro.\n\nText " + embed + " more.\n"
    r = renderer(snip, result(snip, PROV_GPU))
    with pytest.raises(EmbedError) as caught:
        r.render(page, "posts/posts/x.md", 6)
    assert str(caught.value).startswith("posts/posts/x.md:11: ")
    assert message in str(caught.value)


def test_embed_syntax_error_names_post_and_line(snip) -> None:
    with pytest.raises(EmbedError, match=r"^p.md:3: embed syntax error"):
        renderer(snip, None).render("a\n\n<%= value('demo', %>\n", "p.md")


def test_image_urls_are_relative_to_the_page() -> None:
    assert embeds.image_url("s", "cpu-x86_64", "a.png", "my-post/") == "../_snippets/s/cpu-x86_64-files/a.png"
    assert embeds.image_url("s", "cpu-x86_64", "a.png", "") == "_snippets/s/cpu-x86_64-files/a.png"
    assert embeds.image_url("s", "c", "a.png", "x/y.html") == "../_snippets/s/c-files/a.png"


def test_a_page_names_every_snippet_it_embeds_before_it_renders_inside_if_and_for_too(snip) -> None:
    page = ('# T\n\n<%= value("demo", "speedup") %>\n<% if false %>\n<%= table("other", "t") %>\n'
            '<% endif %>\n<% for i in range(2) %><%= provenance(snippet="third") %><% endfor %>\n'
            '<%= code("demo", "bench") %>\n')
    template = renderer(snip, None).parse(page, "posts/p.md", 2)
    assert [(e.function, e.stem, e.line) for e in template.embeds] == [
        ("value", "demo", 5), ("table", "other", 7), ("provenance", "third", 9), ("code", "demo", 10)]
    assert template.stems == ["demo", "other", "third"]


@pytest.mark.parametrize("page", [
    '<% set s = "demo" %>\n\n<%= value(s, "speedup") %>',
    '\n\n<%= value("de" ~ "mo", "speedup") %>',
    '\n\n<%= provenance(snippet=1) %>',
])
def test_a_snippet_name_that_is_not_a_literal_is_an_error_naming_post_and_line(snip, page: str) -> None:
    with pytest.raises(EmbedError, match=r"^posts/p.md:5: (value|provenance)\(\) must name its snippet "
                                         r"with a literal string"):
        renderer(snip, result(snip, PROV_GPU)).parse(page, "posts/p.md", 2)


def test_rendering_looks_up_only_what_parsing_named(snip) -> None:
    looked_up: list[str] = []
    r = renderer(snip, result(snip, PROV_GPU))
    lookup = r.lookup
    r.lookup = lambda stem, post: looked_up.append(stem) or lookup(stem, post)
    template = r.parse('<% for i in range(3) %><%= value("demo", "speedup") %><% endfor %>', "p.md")
    assert looked_up == []
    r.fill(template)
    assert looked_up == ["demo"] * 3


FENCED_EJS = """# Webpack

<%= value("demo", "speedup", ".1f") %>

```html
<title><% htmlWebpackPlugin.options.title %></title>
<%= value("demo", "speedup") %>
```

~~~~ {.erb title="a.erb"}
<% @items.each do |item| %><%= item %><% end %>
~~~~

- in a list

    ```ejs
    <%- include('header') -%>
    ```

Inline `<%= user.name %>` and ``<% if (a) { %>`` stay, as does `<%#`.
"""


def test_embed_syntax_in_fenced_code_and_code_spans_is_text(snip) -> None:
    out = renderer(snip, result(snip, PROV_GPU)).render(FENCED_EJS, "p.md")
    code = FENCED_EJS[FENCED_EJS.index("```html"):]
    assert out.endswith(code)  # every sample as written, the embed in the ```html block too
    assert out.startswith("# Webpack\n\n<span class=\"snippet-value\"")


@pytest.mark.parametrize("page", [
    "ERB writes <% if admin? %>, EJS <%= user.name %>, JSP <%@ page %>.\n",
    "<div><%= title %></div>\n",
    "A template: <% for (const x of xs) { %><%= x %><% } %>\n",
    "<%= \"\".__class__ %> and <%= lipsum() %>\n",  # refused by the sandbox, but no embed either
])
def test_a_page_whose_tags_call_no_embed_is_left_as_written(snip, page: str) -> None:
    r = render.Renderer(lambda stem, post: pytest.fail("nothing is looked up"))
    template = r.parse(page, "posts/p.md", 3)
    assert template.embeds == () and template.text is not None and template.text[0] == 4
    assert r.fill(template) == page


@pytest.mark.parametrize(("page", "message"), [
    ('<% if admin? %> and <%= value("demo", "speedup") %>', "embed syntax error"),
    ("<%= valeu('demo', 'speedup') %>", "'valeu' is not an embed function (did you mean 'value'?)"),
])
def test_once_a_page_calls_an_embed_its_tags_are_embeds_and_their_errors_fail(snip, page: str,
                                                                               message: str) -> None:
    with pytest.raises(EmbedError, match=re.escape(message)):
        renderer(snip, result(snip, PROV_GPU)).render(page, "p.md")


def test_an_unclosed_fence_is_not_code(snip) -> None:
    out = renderer(snip, result(snip, PROV_GPU)).render('```text\n<%= value("demo", "speedup") %>\n', "p.md")
    assert "snippet-value" in out


@pytest.mark.parametrize(
    "page",
    [
        '- item\n\n    <%= output("demo", "boom") %>\n\nafter\n',
        '<% if true %>\n- item\n\n    <%= output("demo", "boom") %>\n\nafter\n<% endif %>\n',
    ],
)
def test_an_indented_block_embed_stays_inside_its_list_item(snip, page: str) -> None:
    out = page_html(renderer(snip, result(snip, PROV_GPU)).render(page, "p.md"))
    item = out[out.index("<li>"):out.index("</li>")]
    assert "ValueError: expected" in item and "snippet-provenance" in item and "NVIDIA H200" in item
    assert "<p>after</p>" in out[out.index("</li>"):]


def test_indented_tags_in_a_raw_region_stay_as_written(snip) -> None:
    page = '<% raw %>\n- item\n\n    <%= code("demo", "bench") %>\n<% endraw %>\n'
    out = renderer(snip, result(snip, PROV_GPU)).render(page, "p.md")
    assert out.strip("\n") == '- item\n\n    <%= code("demo", "bench") %>'


# --- verdicts, hidden lines, version labels ------------------------------------------------------------

def verdict_record(verdict: str, ratio: float, low: float, high: float, **extra: Any) -> dict[str, Any]:
    record = {"kind": "verdict", "name": "v", "candidate": "compiled", "baseline": "eager", "ratio": ratio,
              "low": low, "high": high, "confidence": 0.95, "delta": 0.05, "blocks": 20, "verdict": verdict,
              "expected": None, "noise": [], "device": "cpu", "line": 3, "cell": "bench"}
    return record | extra


def with_verdict(snip: snippet.Snippet, prov: dict[str, Any], **record: Any) -> Result:
    return result(snip, prov, verdicts={"v": verdict_record(**record)})


@pytest.mark.parametrize(("record", "language", "phrase"), [
    ({"verdict": "faster", "ratio": 3.1, "low": 2.9, "high": 3.3}, "zh-CN",
     "A 比 B 快：速度约为后者的 3.10 倍（95 % 区间 2.90–3.30 倍）"),
    ({"verdict": "slower", "ratio": 0.5, "low": 0.4, "high": 0.625}, "zh-CN",
     "A 比 B 慢：耗时约为后者的 2.00 倍（95 % 区间 1.60–2.50 倍）"),
    ({"verdict": "no-difference", "ratio": 1.01, "low": 0.98, "high": 1.03}, "zh-CN",
     "A 与 B 没有可测的差别（速度比 1.01，95 % 区间 0.980–1.03，落在 ±5 % 以内）"),
    ({"verdict": "no-difference", "ratio": 0.96, "low": 0.957, "high": 0.963}, "zh-CN",
     "A 与 B 的差别在 ±5 % 以内（速度比 0.960，95 % 区间 0.957–0.963，不含 1）"),
    ({"verdict": "no-difference", "ratio": 1.02, "low": 1.01, "high": 1.03, "delta": 0.1}, "zh-CN",
     "A 与 B 的差别在 ±10 % 以内（速度比 1.02，95 % 区间 1.01–1.03，不含 1）"),
    ({"verdict": "no-difference", "ratio": 1.02, "low": 1.01, "high": 1.03}, "en",
     "A and B differ, but within ±5 % (speed ratio 1.02, 95 % interval 1.01–1.03, which excludes 1)"),
    ({"verdict": "no-difference", "ratio": 1.01, "low": 1.004, "high": 1.02}, "zh-CN",
     "A 与 B 的差别在 ±5 % 以内（速度比 1.01，95 % 区间 1.004–1.02，不含 1）"),  # an end is not shown on 1
    ({"verdict": "faster", "ratio": 1.07, "low": 1.0504, "high": 1.1}, "en",
     "A is faster than B: about 1.07× its speed (95 % interval 1.0504–1.10×)"),  # nor on 1 + δ
    ({"verdict": "slower", "ratio": 0.9, "low": 0.85, "high": 0.9496}, "zh-CN",
     "A 比 B 慢：耗时约为后者的 1.11 倍（95 % 区间 1.053–1.18 倍）"),  # nor on 1 / (1 − δ)
    ({"verdict": "no-difference", "ratio": 1.0, "low": 0.99, "high": 1.0}, "en",
     "A and B show no measurable difference (speed ratio 1.00, 95 % interval 0.990–1.00, within ±5 %)"),
    ({"verdict": "inconclusive", "ratio": 1.05, "low": 0.9, "high": 1.2}, "zh-CN",
     "A 与 B 谁更快无法判定（速度比 1.05，95 % 区间 0.900–1.20，越过了 1±5 % 的边界）"),
    ({"verdict": "inconclusive", "ratio": 3.0, "low": 2.9, "high": 3.1, "noise": ["machine busy"]}, "zh-CN",
     "A 与 B 谁更快无法判定：测量受到干扰（machine busy）"),
    ({"verdict": "faster", "ratio": 3.1, "low": 2.9, "high": 3.3}, "en",
     "A is faster than B: about 3.10× its speed (95 % interval 2.90–3.30×)"),
])
def test_a_verdict_embed_words_the_verdict_in_the_pages_language(snip, record: dict, language: str,
                                                                 phrase: str) -> None:
    r = renderer(snip, with_verdict(snip, PROV_CPU, **record))
    out = r.render('<%= verdict("demo", "v", subject="A", baseline="B") %>', "p.md",
                   page=embeds.Page(language=language, torch="2.13"))
    assert f">{phrase}</span>" in unescape(out)
    assert f'class="snippet-verdict snippet-verdict-{record["verdict"]}"' in out


def worded(snip: snippet.Snippet) -> Result:
    """A result whose table, chart and value also exist worded for English pages (``NAME.en``)."""
    base = result(snip, PROV_CPU)
    data = base.to_json()
    data["tables"]["t.en"] = data["tables"]["t"] | {"name": "t.en", "columns": ["mode", "time ms"],
                                                   "caption": "time"}
    data["charts"]["c.en"] = data["charts"]["c"] | {"name": "c.en", "alt": "English alt"}
    data["values"]["label.en"] = data["values"]["label"] | {"name": "label.en", "value": "in English"}
    data["digest"] = digest(data)
    return Result.from_json(data)


@pytest.mark.parametrize(("language", "caption", "header", "alt", "value"), [
    ("en", "time", "time ms", "English alt", "in English"),
    ("en-GB", "time", "time ms", "English alt", "in English"),
    ("zh-CN", "耗时", "| mode | ms |", "eager <slower> than compiled", "<i>eager</i>"),
])
def test_an_embed_shows_the_record_worded_in_the_pages_language_when_the_snippet_recorded_one(
        snip, language: str, caption: str, header: str, alt: str, value: str) -> None:
    r = renderer(snip, worded(snip))
    page = embeds.Page(language=language, torch="2.13")
    table = r.render('<%= table("demo", "t") %>', "p.md", page=page)
    chart = r.render('<%= chart("demo", "c") %>', "p.md", page=page)
    inline = r.render('<%= value("demo", "label") %>', "p.md", page=page)
    assert f'<p class="snippet-caption">{caption}</p>' in table and header in table
    assert f"{alt}</desc>" in unescape(chart)
    assert f">{value}</span>" in unescape(inline)


def test_a_noisy_verdicts_reasons_name_the_two_sides_as_the_sentence_does(snip) -> None:
    noise = ["compiled: had the CPU 50% of the time (limit 90%)", "machine busy: load average 4.00 on 2 CPUs"]
    r = renderer(snip, with_verdict(snip, PROV_CPU, verdict="inconclusive", ratio=3.0, low=2.9, high=3.1,
                                    noise=noise))
    out = unescape(r.render('<%= verdict("demo", "v", subject="A", baseline="B") %>', "p.md",
                            page=embeds.Page(language="en", torch="2.13")))
    assert ("whether A is faster than B is inconclusive: the measurement was noisy (A: had the CPU 50% of "
            "the time (limit 90%); machine busy: load average 4.00 on 2 CPUs)") in out


def test_the_verdicts_wording_follows_the_number_never_the_author(snip) -> None:
    faster = renderer(snip, with_verdict(snip, PROV_CPU, verdict="faster", ratio=3.1, low=2.9, high=3.3))
    slower = renderer(snip, with_verdict(snip, PROV_CPU, verdict="slower", ratio=0.4, low=0.38, high=0.42))
    embed = '<%= verdict("demo", "v") %>'
    assert "compiled 比 eager 快" in unescape(faster.render(embed, "p.md"))
    assert "compiled 比 eager 慢" in unescape(slower.render(embed, "p.md"))  # same sentence, other verdict
    labelled = faster.render('<%= verdict("demo", "v", subject="编译后的 `torch.where`") %>', "p.md")
    assert "编译后的 <code>torch&#46;where</code> 比 eager 快" in labelled  # `code` in a label stays code


def test_a_verdict_the_post_or_snippet_expects_and_does_not_get_is_a_warning_naming_the_line(snip) -> None:
    warned: list[tuple[str, int | None, str]] = []
    res = with_verdict(snip, PROV_CPU, verdict="slower", ratio=0.4, low=0.38, high=0.42)
    r = renderer(snip, res)
    r.warn = lambda post, line, message: warned.append((post, line, message))
    page = "# T\n\nx\n\nCompiled is <%= verdict(\"demo\", \"v\", expect=\"faster\") %>.\n"
    r.render(page, "posts/p.md", 4)
    assert warned == [("posts/p.md", 9, "verdict 'v' of snippet 'demo' is slower, but the post expects "
                                        "faster; reword the sentence or re-measure")]
    with pytest.raises(EmbedError, match=r"^p.md:1: verdict 'v' of snippet 'demo': expect= 'quick' is not a "
                                         r"verdict \(known: faster, slower, no-difference, inconclusive\)"):
        r.render('<%= verdict("demo", "v", expect="quick") %>', "p.md")


def test_a_verdict_embed_on_a_value_without_an_interval_names_post_and_line(snip) -> None:
    r = renderer(snip, result(snip, PROV_CPU))
    with pytest.raises(EmbedError, match=r"^p.md:3: verdict\(\) needs a verdict with an interval, but "
                                         r"snippet 'demo' recorded 'speedup' as a value without one"):
        r.render('a\n\n<%= verdict("demo", "speedup") %>\n', "p.md")


def test_code_shows_what_a_reader_writes_and_folds_the_checks(tmp_path: Path) -> None:
    (tmp_path / "demo.py").write_text('''# %% name="bench"
result = 6 * 7
# blog: start hide-input
assert result == 42
# blog: end hide-input
# blog: start remove-input
glue("answer", result)
# blog: end remove-input
print(result)
''')
    snip = snippet.load(tmp_path / "demo.py", tmp_path)
    out = renderer(snip, None).render('<%= code("demo", "bench") %>', "p.md")
    shown = out[out.index("```python"):out.index("```", out.index("```python") + 3)]
    assert shown == "```python\nresult = 6 * 7\nprint(result)\n"
    assert '<details class="snippet-checks"><summary>如何检验</summary>' in out
    assert "assert result == 42" in unescape(re.sub(r"<[^>]+>", "", out.split("<details")[1]))
    assert "glue" not in out and "blog:" not in out


def test_a_result_from_another_torch_is_labelled_with_its_version(snip) -> None:
    r = renderer(snip, result(snip, PROV_GPU))  # a GPU result made under torch 2.11
    page = embeds.Page(torch="2.13")
    block = r.render('<%= table("demo", "t") %>', "p.md", page=page)
    inline = r.render('<%= value("demo", "speedup") %>', "p.md", page=page)
    for out in (block, inline):
        assert ('<sup class="snippet-version" title="本文描述的是 torch 2.13，这个结果来自另一个版本">'
                "torch 2.11.0</sup>") in unescape(out)
    same = embeds.Page(torch="2.11")
    assert "snippet-version" not in r.render('<%= table("demo", "t") %>', "p.md", page=same)
    assert r.shown.torch == {"demo": "2.11.0"}
    assert embeds.same_version("2.13.0+cpu", "2.13") and not embeds.same_version("2.11.0", "2.13")


@pytest.mark.parametrize(("prov", "test", "shown"), [
    (PROV_CPU, 'has_result("demo")', True),
    (PROV_CPU, 'has_result("demo", device="cpu")', True),
    (PROV_CPU, 'has_result("demo", device="cuda")', False),
    (PROV_GPU, 'has_result("demo", device="cuda")', True),
    (None, 'has_result("demo")', False),
])
def test_a_block_the_results_choose_shows_with_them(snip, prov: dict | None, test: str, shown: bool) -> None:
    page = f"<% if {test} %>GPU numbers below.<% else %>No GPU result yet.<% endif %>"
    out = renderer(snip, result(snip, prov) if prov else None).render(page, "p.md")
    assert out == ("GPU numbers below." if shown else "No GPU result yet.")


def test_has_result_is_false_in_a_draft_preview_and_names_the_devices_it_knows(snip) -> None:
    r = renderer(snip, result(snip, PROV_GPU), show=False)
    assert r.render('<% if has_result("demo") %>yes<% else %>no<% endif %>', "p.md") == "no"
    with pytest.raises(EmbedError, match=r"p.md:1: has_result\(device='tpu'\): not a device \(known: "):
        r.render('<%= has_result("demo", device="tpu") %>', "p.md")


@pytest.mark.parametrize(("record", "hedged"), [
    ({"verdict": "inconclusive", "ratio": 1.04, "low": 0.98, "high": 1.1}, True),
    ({"verdict": "faster", "ratio": 1.52, "low": 1.50, "high": 1.54}, False),
])
def test_verdict_of_lets_a_hedge_show_only_with_the_verdict_it_fits(snip, record: dict, hedged: bool) -> None:
    page = '<% if verdict_of("demo", "v") == "inconclusive" %>Runs may land on either side.<% endif %>'
    out = renderer(snip, with_verdict(snip, PROV_CPU, **record)).render(page, "p.md")
    assert out == ("Runs may land on either side." if hedged else "")
    assert renderer(snip, None).render('[<%= verdict_of("demo", "v") %>]', "p.md") == "[]"
