"""Results cannot script a page.

A result file is edited by anyone who edits the repository, and its digest recomputed with the project's
own function. Whatever it holds, the built page has no `javascript:` link and no element it positions over
the page: MathJax typesets result math in its safe configuration without the TeX `html` extension (checked
in Debian's chromium), result HTML keeps only allow-listed classes, an SVG's CSS is checked whole, and
only the image files a result names, with the bytes their names hash, are published.
"""

from __future__ import annotations

import functools
import http.server
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import browser
import lxml.html
import pytest
from paths import ROOT

from perfblog.generator import build
from perfblog.generator.render import maths, outputs, sanitize
from perfblog.generator.source import snippet
from perfblog.generator.store import codec, resolve
from perfblog.generator.store.content import DisplayOutput, image_name
from perfblog.generator.store.result import Result
from perfblog.generator.store.store import Store

CPU = "cpu-x86_64"
#: The payloads the adversarial review reproduced: a `text/latex` output and a `text/html` output.
LATEX_PAYLOAD = (r"$$\href{javascript:alert(document.domain)}{\style{position:fixed;top:0;left:0;width:100%;"
                 r"height:100%;opacity:0}{\text{X}}}$$")
HTML_PAYLOAD = r'<div class="arithmatex">\[\href{javascript:alert(1)}{X}\]</div>'
#: What MathJax's own safe filter lets through (it reads `java<TAB>script:` as a relative URL, which the
#: browser then runs), and a style set without the html extension.
TOKEN_PAYLOAD = ('\\mmlToken{mi}[href="java\tscript:alert(2)"]{Y}'
                 '\\mmlToken{mi}[style="position:fixed;top:0;left:0;width:100%;height:100%"]{Z}')
SOURCE = '# %% name="math"\nprint(1)\n\n# %% name="html"\nprint(2)\n'
#: A 1×1 PNG, and another.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478"
                    "da63fcffff3f0300050001ff8d0a2db40000000049454e44ae426082")
OTHER_PNG = PNG[:-12] + bytes.fromhex("0000000049454e44ae426083")


def store_result(root: Path, cells: dict[str, list[dict[str, Any]]], images: dict[str, bytes]) -> Store:
    """A snippet ``attack`` in ``root/snippets`` and its fresh result on the CPU, as `blog run` stores it."""
    snippets = root / "snippets"
    snippets.mkdir(parents=True, exist_ok=True)
    (snippets / "attack.py").write_text(SOURCE, encoding="utf-8")
    snip = snippet.load(snippets / "attack.py", snippets)
    result = Result.from_json({
        "schema": 1, "snippet": "attack", "key": snip.key, "hashes": codec.write(snip.hashes), "status": "ok",
        "device_class": CPU,
        "provenance": {"device": "cpu", "cpu": "Intel Xeon", "cores": 2, "python": "3.12", "torch": "2.13.0",
                       "triton": None, "gpu": None, "git_commit": None, "git_dirty": None,
                       "ran_at": "2026-12-01T08:00:00Z", "duration_s": 1.0},
        "cells": [{"name": name, "source": "", "wall_s": 0.1, "raises": False, "hide": False,
                   "line": 1 + 3 * i, "outputs": found} for i, (name, found) in enumerate(cells.items())],
        "values": {}, "tables": {}, "charts": {}, "verdicts": {},
    })  # fmt: skip
    store = Store(snippets / "_results")
    store.save(result, images)
    return store


def display(mime: str, data: str) -> dict[str, Any]:
    return {"type": "display", "data": {mime: data}, "metadata": {}}


def shown_html(fragment: str) -> lxml.html.HtmlElement:
    """What a page shows of a ``text/html`` output: the sanitized display inside its ``div``."""
    page = outputs.Placement(image_url=str, sanitizer=sanitize.Sanitizer(), labels=outputs.labels("en"),
                             alt="")
    shown = outputs.RENDERERS["text/html"](DisplayOutput({"text/html": fragment}), "text/html", page,
                                           outputs.Options(), True)
    html = sanitize.readable(shown)
    return lxml.html.fragment_fromstring(html)


# --- classes on result HTML ------------------------------------------------------------------------------


def test_a_result_cannot_give_its_html_a_class_that_client_code_acts_on() -> None:
    shown = shown_html(HTML_PAYLOAD + '<p class="mermaid md-typeset">m</p><pre class="arithmatex">$x$</pre>')
    assert [e.get("class") for e in shown.iter() if e is not shown] == [None, None, None]
    markdown = sanitize.Sanitizer().markdown('<div class="arithmatex">$$x$$</div>\n\n```mermaid\ng\n```\n')
    assert "class=" not in markdown


def test_pandas_table_classes_stay_and_only_they() -> None:
    shown = shown_html('<table><tr><th class="col_heading level0 col0 arithmatex">a</th>'
                       '<td class="data row5 col1 md-x">1</td><td class="arithmatex">2</td></tr></table>')
    classes = [e.get("class") for e in shown.iter("th", "td")]
    assert classes == ["col_heading level0 col0", "data row5 col1", None]


def test_the_example_blogs_styler_table_keeps_every_class_it_had() -> None:
    stored = Store(ROOT / "snippets" / "_results").results("rich_outputs")[CPU]
    (table,) = [o.data["text/html"] for o in stored.cell("table").outputs if "text/html" in o.data]
    shown = shown_html(table)
    classes = {e.get("class") for e in shown.iter("th", "td")}
    assert {"blank level0", "col_heading level0 col0", "row_heading level0 row5", "data row5 col1"} <= classes


# --- SVG: the CSS of <style> whole -----------------------------------------------------------------------


def test_css_after_a_child_element_of_an_svg_style_is_checked_too() -> None:
    hostile = (b'<svg xmlns="http://www.w3.org/2000/svg"><style>rect{fill:red}<g/>'
               b'@import url(https://evil.example/x.css);</style><rect width="1" height="1"/></svg>')
    cleaned = sanitize.svg(hostile)
    assert cleaned is not None and b"evil" not in cleaned and b"@import" not in cleaned
    assert b"<rect" in cleaned


def test_an_svg_style_keeps_its_harmless_css_and_loses_its_children() -> None:
    split = b'<svg xmlns="http://www.w3.org/2000/svg"><style>rect{fill:red}<desc>d</desc>.a{fill:blue}</style></svg>'
    assert sanitize.svg(split) == (b"<?xml version='1.0' encoding='utf-8'?>\n"
                                   b'<svg xmlns="http://www.w3.org/2000/svg"><style>rect{fill:red}d.a{fill:blue}'
                                   b"</style></svg>")


# --- image files: named by the result, with the bytes their names hash -----------------------------------


def published(store: Store, tmp_path: Path) -> set[str]:
    result = store.results("attack")[CPU]
    target = tmp_path / "site"
    build.publish_images(store.files_dir("attack", CPU), target, result.images)
    return {p.name for p in target.iterdir()} if target.is_dir() else set()


def test_an_image_file_its_result_does_not_name_is_not_published(tmp_path: Path, caplog) -> None:
    name = image_name(PNG, "png")
    store = store_result(tmp_path, {"math": [display("image/png", name)], "html": []}, {name: PNG})
    stray = store.files_dir("attack", CPU) / image_name(OTHER_PNG, "png")
    stray.write_bytes(OTHER_PNG)  # correctly named, but no output shows it
    with caplog.at_level(logging.WARNING):
        assert published(store, tmp_path) == {name}
    assert f"{stray} is not an image its result shows" in caplog.text
    snip = snippet.load(tmp_path / "snippets" / "attack.py", tmp_path / "snippets")
    assert resolve.status_of(snip, CPU, store.results("attack")[CPU]).state == "fresh"


def test_a_swapped_image_is_not_published_and_its_result_is_stale(tmp_path: Path, caplog) -> None:
    name = image_name(PNG, "png")
    store = store_result(tmp_path, {"math": [display("image/png", name)], "html": []}, {name: PNG})
    snip = snippet.load(tmp_path / "snippets" / "attack.py", tmp_path / "snippets")
    assert resolve.status_of(snip, CPU, store.results("attack")[CPU]).state == "fresh"
    (store.files_dir("attack", CPU) / name).write_bytes(OTHER_PNG)  # the JSON and its digest untouched
    status = resolve.status_of(snip, CPU, store.results("attack")[CPU])
    assert status.state == "stale" and name in status.why and "bytes do not match" in status.why
    with caplog.at_level(logging.WARNING):
        assert published(store, tmp_path) == set()
    assert f"{name} does not hash to its name" in caplog.text


def test_a_missing_image_makes_its_result_stale(tmp_path: Path) -> None:
    name = image_name(PNG, "png")
    store = store_result(tmp_path, {"math": [display("image/png", name)], "html": []}, {name: PNG})
    (store.files_dir("attack", CPU) / name).unlink()
    snip = snippet.load(tmp_path / "snippets" / "attack.py", tmp_path / "snippets")
    assert resolve.status_of(snip, CPU, store.results("attack")[CPU]).state == "stale"


def test_the_committed_results_images_are_intact() -> None:
    store = Store(ROOT / "snippets" / "_results")
    found = store.results("rich_outputs")[CPU]
    assert found.images and not found.damaged


# --- MathJax: the reproduced payloads in a real browser --------------------------------------------------

MKDOCS_YML = """site_name: attack
site_url: https://example.com/
docs_dir: posts
theme: {name: material, language: en}
markdown_extensions:
  - pymdownx.arithmatex: {generic: true}
plugins:
  - snippets: {exec_mode: frozen}
"""
POST = """# Results

Our own math: $x^2$.

<%= output("attack", "math") %>

<%= output("attack", "html") %>
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small blog whose one page embeds the hostile results, built once with `mkdocs build --strict`."""
    root = tmp_path_factory.mktemp("no-script")
    (root / "mkdocs.yml").write_text(MKDOCS_YML, encoding="utf-8")
    (root / "posts").mkdir()
    (root / "posts" / "index.md").write_text(POST, encoding="utf-8")
    store_result(root, {"math": [display("text/latex", LATEX_PAYLOAD), display("text/latex", TOKEN_PAYLOAD)],
                        "html": [display("text/html", HTML_PAYLOAD)]}, {})
    env = {**{k: v for k, v in os.environ.items() if k != "BLOG_EXEC_MODE"}, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr  # the results are fresh: only the page can stop them
    assert (root / "site" / maths.FOLDER / "ui" / "safe.js").is_file()
    return root / "site"


@pytest.fixture(scope="module")
def url(site: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{server.server_port}/"
        server.shutdown()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


#: After MathJax's first typeset: every attribute that holds `javascript:` (as the browser reads a URL:
#: tabs and newlines dropped), the elements of the results' displays positioned fixed, absolute or sticky
#: (computed, or asked for in a style attribute), and where MathJax typeset.
_SCAN = """async () => {
  await MathJax.startup.promise;
  const url = (v) => v.replace(/[\\t\\n\\r]/g, "").trim().toLowerCase();
  const shown = [...document.querySelectorAll(".snippet-math, .snippet-html")]
    .flatMap((d) => [d, ...d.querySelectorAll("*")]).filter((e) => !e.closest("mjx-assistive-mml"));
  return {
    javascript: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some(
      (a) => url(a.value).includes("javascript:"))).map((e) => e.outerHTML.slice(0, 120)),
    positioned: shown.filter((e) => /fixed|absolute|sticky/.test(getComputedStyle(e).position)
      || /position\\s*:\\s*(fixed|absolute|sticky)/i.test(e.getAttribute("style") || ""))
      .map((e) => e.outerHTML.slice(0, 120)),
    resultMath: document.querySelectorAll(".snippet-math mjx-container").length,
    ownMath: document.querySelectorAll("p .arithmatex mjx-container").length,
    htmlMath: document.querySelectorAll(".snippet-html mjx-container, .snippet-html .arithmatex").length,
    text: [...document.querySelectorAll(".snippet-math")].map((d) => d.textContent),
  };
}"""


@pytest.mark.browser
@pytest.mark.mkdocs
def test_result_math_and_html_typeset_to_no_script_link_and_no_overlay(url: str) -> None:
    with browser.page() as (view, dialogs):
        view.goto(url, wait_until="load", timeout=60_000)
        view.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                               timeout=30_000)
        found = view.evaluate(_SCAN)
    assert found["javascript"] == [] and found["positioned"] == [], found
    assert dialogs == []
    assert found["resultMath"] == 2 and found["ownMath"] == 1, found  # MathJax typeset the results' math
    assert found["htmlMath"] == 0  # an HTML display's `arithmatex` is gone, so MathJax leaves it alone
