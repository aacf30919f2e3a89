"""A post's template cannot escape the sandbox, results never become markup, tracebacks render whole.

Each test is named after what it checks; all run in process with the site's Markdown extensions.
"""

from __future__ import annotations

import random
import time
from html import unescape
from pathlib import Path
from typing import Any

import lxml.html
import markdown as md
import pytest

from perfblog.generator import build
from perfblog.generator.errors import EmbedError
from perfblog.generator.render import embeds, render, sandbox, sanitize
from perfblog.generator.source import snippet
from perfblog.generator.store import codec, resolve
from perfblog.generator.store.content import image_name
from perfblog.generator.store.result import Result

#: The example site's extensions (mkdocs.yml), plus magiclink, which links bare URLs.
EXTENSIONS = ["admonition", "attr_list", "md_in_html", "tables", "toc", "pymdownx.highlight",
              "pymdownx.superfences", "pymdownx.details", "pymdownx.magiclink"]

SOURCE = '# %% name="bench"\nprint(1)\n\n# %% name="boom" raises=true\nraise ValueError("x")\n'


@pytest.fixture(scope="module")
def snip(tmp_path_factory: pytest.TempPathFactory) -> snippet.Snippet:
    root = tmp_path_factory.mktemp("snippets")
    (root / "demo.py").write_text(SOURCE)
    return snippet.load(root / "demo.py", root)


def prov(cpu: str = "Intel Xeon") -> dict[str, Any]:
    return {"device": cpu, "cpu": cpu, "cores": 2, "python": "3.12", "torch": "2.13.0", "triton": "3.8.0",
            "gpu": None, "git_commit": None, "git_dirty": None, "ran_at": "2026-11-30T08:00:00Z",
            "duration_s": 1.0}


def result(snip: snippet.Snippet, s: str = "x", *, outputs: list[dict[str, Any]] | None = None,
           value: Any = None, cells: list[list[Any]] | None = None) -> Result:
    """A result whose every text field is ``s`` (the hostile string under test)."""
    bench_outputs = outputs if outputs is not None else [
        {"type": "stream", "name": "stdout", "text": s},
        {"type": "stream", "name": "stderr", "text": s},
        {"type": "display", "data": {"text/html": s}},
        {"type": "display", "data": {"text/markdown": s}},
        {"type": "display", "data": {"text/plain": s}},
    ]
    return Result.from_json({
        "schema": 1, "snippet": "demo", "key": snip.key, "hashes": codec.write(snip.hashes), "status": "ok",
        "device_class": "cpu-x86_64", "provenance": prov(s or "cpu"),
        "cells": [
            {"name": "bench", "source": "", "wall_s": 0.1, "raises": False, "hide": False, "line": 1,
             "outputs": bench_outputs},
            {"name": "boom", "source": "", "wall_s": 0.1, "raises": True, "hide": False, "line": 4,
             "outputs": [{"type": "error", "ename": s or "E", "evalue": s, "traceback": s}]},
        ],
        "values": {"v": {"kind": "value", "name": "v", "value": s if value is None else value, "unit": s,
                         "cell": "bench"}},
        "tables": {"t": {"kind": "table", "name": "t", "columns": [s, "b"],
                         "rows": cells if cells is not None else [[s, 1.5], [s, None]], "caption": s,
                         "cell": "bench"}},
        "charts": {"c": {"kind": "chart", "name": "c", "chart": "bar", "x": [s, "b"],
                         "series": {s or "s": [1.0, 2.0]}, "alt": s or "alt", "title": s, "x_label": s,
                         "y_label": s, "cell": "bench"}},
        "verdicts": {"vd": {"kind": "verdict", "name": "vd", "candidate": s, "baseline": s, "ratio": 1.0,
                            "low": 0.9, "high": 1.1, "confidence": 0.95, "delta": 0.05, "blocks": 12,
                            "verdict": "inconclusive", "expected": None, "noise": [s], "device": "cpu",
                            "line": None, "cell": "bench"}},
    })


def renderer(snip: snippet.Snippet, res: Result | None) -> render.Renderer:
    def lookup(stem: str, post: str) -> embeds.Resolved:
        if stem != "demo":
            raise EmbedError(f"no snippet {stem!r}")
        return embeds.Resolved(snip, resolve.status_of(snip, "cpu-x86_64", res))

    return render.Renderer(lookup)


_MARKDOWN = md.Markdown(extensions=EXTENSIONS)


def page(markdown: str) -> str:
    """The HTML the site makes of ``markdown``: its Markdown, then the plugin's last pass."""
    return sanitize.readable(_MARKDOWN.reset().convert(markdown))


EVERY_EMBED = ('<%= value("demo", "v") %>', '<%= table("demo", "t") %>', '<%= output("demo", "bench") %>',
               '<%= output("demo", "boom") %>', '<%= chart("demo", "c") %>', '<%= provenance("demo") %>',
               '<%= code("demo", "bench") %>', '<%= verdict("demo", "vd") %>')


def every_embed(r: render.Renderer, where: str = "top") -> str:
    """A page embedding everything, at the top level, in a list item or in an admonition."""
    if where == "top":
        text = "Intro " + EVERY_EMBED[0] + " end.\n\n" + "\n\n".join(EVERY_EMBED[1:]) + "\n"
    else:
        lead = "- item" if where == "list" else '!!! note "n"'
        text = lead + "\n\n" + "\n\n".join(f"    {e}" for e in EVERY_EMBED) + "\n"
    return page(r.render(text, "p.md"))


# --- the template sandbox ------------------------------------------------------------------------------


def jinja(snip: snippet.Snippet, template: str) -> str:
    """Render ``template`` on a page that embeds (one whose tags are all embeds, not text)."""
    return renderer(snip, result(snip)).render(template + '<%= provenance("demo") %>', "posts/p.md")


def test_lipsum_globals_cannot_run_a_command(snip) -> None:
    with pytest.raises(EmbedError, match=r"^posts/p.md:1: .*(attribute access|not an embed function)"):
        jinja(snip, '<%= lipsum.__globals__.os.popen("id").read() %>')
    with pytest.raises(EmbedError, match="is not an embed function"):
        jinja(snip, "<%= lipsum() %>")  # nor is it there to call


def test_object_subclasses_are_unreachable_from_a_post(snip) -> None:
    with pytest.raises(EmbedError, match=r"attribute access|not an embed function"):
        jinja(snip, '<%= "".__class__.__mro__[1].__subclasses__() %>')
    with pytest.raises(EmbedError, match="unsafe"):
        jinja(snip, '<%= ""["__class__"] %>')  # item access that falls back to an attribute


def test_an_embed_function_does_not_reach_the_engine(snip) -> None:
    with pytest.raises(EmbedError, match=r"attribute access '.(__self__|r|lookup)'"):
        jinja(snip, "<%= code.__self__.r.lookup %>")
    with pytest.raises(EmbedError, match="unsafe"):
        jinja(snip, '<%= code["__self__"] %>')


def test_a_huge_value_format_width_is_refused(snip) -> None:
    r = renderer(snip, result(snip, value=2.5))
    for template in ('<%= value("demo", "v", ">99999999") %>', '<%= value("demo", "v", ".99999999f") %>',
                     '<%= table("demo", "t", ">99999999") %>'):
        started = time.perf_counter()
        with pytest.raises(EmbedError, match="width at most 64, precision at most 30"):
            r.render(template, "p.md")
        assert time.perf_counter() - started < 1
    assert unescape(r.render('<%= value("demo", "v", ">8.2f") %>', "p.md")).count("    2.50") == 1


def test_a_billion_iteration_loop_is_refused(snip) -> None:
    started = time.perf_counter()
    with pytest.raises(EmbedError, match="over this page's 100000 loop iterations"):
        jinja(snip, "<% for i in range(10**9) %><% endfor %>")
    with pytest.raises(EmbedError, match="loops ran over 100000 iterations"):  # nested literal loops
        jinja(snip, "<% for a in [1,2,3,4,5,6,7,8,9,10] %>" * 6 + "<% endfor %>" * 6)
    assert time.perf_counter() - started < 5


def test_operators_and_filters_cannot_make_huge_strings_or_numbers(snip) -> None:
    for template in ('<%= "x" * 10**9 %>', "<%= 10**100000 %>", "<%= (10**1000)**1000 %>",
                     '<% set a = "x" * 900000 %><%= a ~ a %>', '<%= "%099999999d" % 1 %>',
                     '<%= "x" | center(10**9) %>', '<%= "{:>999999999}".format(1) %>',
                     "<%= [" + ",".join(['"' + "x" * 100 + '"'] * 10) + "] * 100000 %>"):
        with pytest.raises(EmbedError):
            jinja(snip, template)
            pytest.fail(template)


def test_page_output_is_capped(snip, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "MAX_OUTPUT", 10_000)
    with pytest.raises(EmbedError, match="over 10000 characters"):
        jinja(snip, '<% for i in range(1000) %><%= value("demo", "v") %><% endfor %>')


def test_macros_imports_and_includes_are_refused(snip) -> None:
    for template in ("<% macro f(n) %><%= f(n) %><% endmacro %><%= f(1) %>", '<% include "x" %>',
                     '<% import "x" as y %>', "<% for x in [1] recursive %><%= loop([x]) %><% endfor %>"):
        with pytest.raises(EmbedError, match="posts"):
            jinja(snip, template)


def test_documented_template_features_still_work(snip) -> None:
    r = renderer(snip, result(snip, value=2.5))
    out = unescape(r.render('<% set names = ["v"] %><% for n in names %><%= loop.index %>:'
                            '<%= value("demo", n, ".1f") %><% endfor %><% if 1 < 2 %>ok<% endif %>'
                            '<%= "a" ~ "b" | upper %>', "p.md"))
    assert out.startswith("1:<span") and ">2.5 x</span>okaB" in out


# --- results are data, never markup --------------------------------------------------------------------


def test_table_cell_image_with_onerror_attribute_list_stays_text(snip) -> None:
    hostile = "![x](x){: onerror=alert(document.domain) }"
    html = page(renderer(snip, result(snip, cells=[[hostile, 1]])).render('<%= table("demo", "t") %>', "p"))
    assert "<img" not in html and "onerror=" not in html.replace("onerror=alert", "")  # text only
    assert lxml.html.fromstring(html).xpath("//td")[0].text_content() == hostile


def test_value_emphasis_with_onmouseover_attribute_list_stays_text(snip) -> None:
    hostile = "*fast*{: onmouseover=alert(1) }"
    for where in ("Speed: <%= value('demo', 'v') %>.", "- item <%= value('demo', 'v') %>"):
        html = page(renderer(snip, result(snip, value=hostile)).render(where, "p.md"))
        tree = lxml.html.fromstring(html)
        assert not tree.xpath("//em | //*[@onmouseover]")
        assert tree.xpath("//span[@class='snippet-value']")[0].text_content() == f"{hostile} x"  # unit x


def test_javascript_links_in_results_are_never_live(snip) -> None:
    hostile = "[click](javascript:alert(1)) <a href='javascript:alert(2)'>x</a> <javascript:alert(3)>"
    for where in ("top", "list"):
        tree = lxml.html.fromstring(every_embed(renderer(snip, result(snip, hostile)), where))
        assert not [h for h in tree.xpath("//@href | //@src") if "javascript" in h.lower()]


def test_markdown_display_is_sanitized_after_rendering(snip) -> None:
    hostile = ("# Title\n\n![x](https://evil.example/x.png){: onerror=alert(1) }\n\n"
               "<img src=x onerror=alert(2)> **bold** [ok](https://example.com)")
    res = result(snip, outputs=[{"type": "display", "data": {"text/markdown": hostile}}])
    tree = lxml.html.fromstring(page(renderer(snip, res).render('<%= output("demo", "bench") %>', "p")))
    shown = tree.xpath("//div[@class='snippet-markdown']")[0]
    assert shown.xpath(".//strong")[0].text == "bold" and shown.xpath(".//h1")  # Markdown is rendered
    assert not shown.xpath(".//img[@src] | .//*[@onerror]")  # remote image dropped, no handler
    link = shown.xpath(".//a")[0]
    assert link.get("href") == "https://example.com" and "nofollow" in link.get("rel")


def test_html_display_data_images_become_site_files(snip) -> None:
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    display = (f'<img src="data:image/png;base64,{png}" alt="a"><img src="https://evil.example/t.gif">'
               '<p style="color: red; background: url(https://evil.example/)">c</p><script>x()</script>')
    res = result(snip, outputs=[{"type": "display", "data": {"text/html": display}}])
    r = renderer(snip, res)
    html = page(r.render('<%= output("demo", "bench") %>', "p.md"))
    tree = lxml.html.fromstring(html)
    sources = tree.xpath("//img/@src")
    assert len(sources) == 1 and sources[0].startswith("_snippets/_media/") and sources[0].endswith(".png")
    assert list(r.media.files) == [sources[0].rsplit("/", 1)[1]]
    assert "evil" not in html and "x()" not in html and "<script" not in html


def test_svg_display_is_published_without_scripts(tmp_path: Path) -> None:
    files = tmp_path / "results" / "cpu-x86_64-files"
    files.mkdir(parents=True)
    hostile = (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
               b'onload="alert(1)"><script>alert(2)</script><a xlink:href="javascript:alert(3)"><rect/></a>'
               b'<foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="https://evil"/></foreignObject>'
               b'<circle r="3" fill="url(#g)" style="fill:url(https://evil/x)"/><set attributeName="href" '
               b'to="javascript:alert(4)"/><path d="M0 0L1 1" stroke="#000"/></svg>')
    svg_name = image_name(hostile, "svg")
    (files / svg_name).write_bytes(hostile)
    (files / "0123456789abcdee.png").symlink_to("/etc/passwd")  # a result cannot publish machine files
    build.publish_images(files, tmp_path / "site", {svg_name, "0123456789abcdee.png"})
    published = (tmp_path / "site" / svg_name).read_bytes()
    for bad in (b"script", b"onload", b"javascript", b"foreignObject", b"evil", b"<set"):
        assert bad not in published
    assert b"<path" in published and b'fill="url(#g)"' in published
    assert not (tmp_path / "site" / "0123456789abcdee.png").exists()


def test_result_image_names_cannot_point_elsewhere(snip) -> None:
    from perfblog.generator.errors import ResultFormatError

    for name in ("../../../etc/passwd", 'x.png" onerror="alert(1)', "0123456789abcdef.svg"):
        with pytest.raises(ResultFormatError, match=r"cells\[0\].outputs\[0\].data.image/png"):
            result(snip, outputs=[{"type": "display", "data": {"image/png": name}}])


# --- indented tracebacks and stderr render like top-level ones -----------------------------------------


def test_an_indented_traceback_is_not_split_into_paragraphs(snip) -> None:
    trace = "Traceback (most recent call last):\n  File \"x.py\", line 1\n\n\nValueError: x\n\n  *not* a list"
    res = result(snip, trace)
    folded = {}
    for where in ("top", "list", "admonition"):
        tree = lxml.html.fromstring(every_embed(renderer(snip, res), where))
        folded[where] = [d.text_content() for d in tree.xpath("//details")]
        assert not tree.xpath("//details//p | //details//em")
    assert folded["top"] == folded["list"] == folded["admonition"]
    assert trace in folded["top"][0]


# --- the fuzz test: thousands of hostile strings through every embed -----------------------------------

_PIECES = ["<", ">", "&", '"', "'", "*", "_", "`", "```", "~~~", "[", "]", "(", ")", "!", "{", "}", "{:",
           "#", "|", "\\", "\n", "\n\n", "    ", ":", "=", "-", "+", "^", "~", "%", "$", "@", "<%", "%>",
           "\x02", "\x03", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
           "{: onclick=alert(1) }", "{: #id .c }",
           "javascript:alert(1)", "[a](javascript:alert(1))", "![i](x.png)", "<svg onload=alert(1)>",
           "<a href='javascript:x'>", "<style>*{}</style>", "&#60;script&#62;", "&lt;b&gt;", "<b>b</b>",
           "https://example.com/x", "www.example.com", "data:text/html,x", "<!-- c -->", "<![CDATA[x]]>",
           '" onmouseover="x', "' onfocus='x", "<details open>", "</pre>", "</code>", "</details>", "<p>",
           "!!! note", "--8<--", "{{ x }}", "{% x %}", "::", "`x`{: onclick=y }", "<div markdown=1>*e*</div>",
           "*", "**b**", "_i_", "<iframe src=x>", "<math><mi>x</mi></math>", "性能", "é", "\t", "\u2028"]


def hostile_strings(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) if rng.random() < 0.8 else chr(rng.randrange(32, 127))
                    for _ in range(rng.randrange(1, 14))) for _ in range(count)]


#: What our embeds and Markdown make outside sanitized displays; the chart's SVG elements.
_OWN_TAGS = {"p", "span", "sup", "strong", "table", "thead", "tbody", "tr", "th", "td", "br", "details",
             "summary", "pre", "code", "samp", "div", "figure", "figcaption", "ul", "ol", "li", "html",
             "body", "svg", "title", "desc", "line", "text", "rect", "polyline", "circle", "button",
             "a"}  # "a": a snippet's download links, to its files in the site (href checked below)
_OWN_ATTRIBUTES = {"class", "title", "id", "style", "xmlns", "width", "height", "viewbox", "role",
                   "aria-labelledby", "x", "y", "x1", "x2", "y1", "y2", "stroke", "fill", "text-anchor",
                   "font-size", "transform", "points", "stroke-width", "cx", "cy", "r", "colspan",
                   "rowspan", "align", "rel", "href", "src", "alt", "lang", "dir", "open", "valign", "start",
                   "reversed", "scope", "span", "tabindex", "data-title", "download"}
_SHOWN = "//div[@class='snippet-html' or @class='snippet-markdown']"


def assert_allowed(html: str, context: str) -> None:
    tree = lxml.html.fromstring(f"<div>{html}</div>")
    shown = set(tree.xpath(f"{_SHOWN}//*"))
    for element in tree.iter():
        if not isinstance(element.tag, str):
            continue  # comments
        allowed = sanitize.TAGS if element in shown else _OWN_TAGS
        assert element.tag in allowed, (context, element.tag)
        for name, value in element.attrib.items():
            assert name in _OWN_ATTRIBUTES and not name.startswith("on"), (context, element.tag, name)
            if name in ("href", "src"):
                assert value.startswith(("https://", "http://", "mailto:", "#", "_snippets/")), (context,
                                                                                                   value)
            if name == "style" and element in shown:
                props = {d.split(":")[0].strip() for d in value.split(";") if d.strip()}
                assert props <= sanitize.STYLE_PROPERTIES and "url(" not in value, (context, value)
            if name == "id" and element in shown:
                assert value.startswith(sanitize.ID_PREFIX), (context, value)
            if name == "class" and element in shown:
                assert set(value.split()) <= sanitize.CLASSES.get(element.tag, set()), (context, value)


@pytest.mark.fuzz
def test_thousands_of_hostile_strings_through_every_embed_stay_in_the_allow_list(snip) -> None:
    strings = hostile_strings(1500)
    for n, s in enumerate(strings):
        where = ("top", "list", "admonition")[n % 3]
        html = every_embed(renderer(snip, result(snip, s)), where)
        assert_allowed(html, f"string {n} {s!r} ({where})")
