"""Rich outputs end to end: the rich notebook and a PyTorch tutorial in every jupytext format, run by a
real `blog run`, embedded by a real `mkdocs build --strict`, checked in the built HTML."""

from __future__ import annotations

import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import jupytext
import pytest
from lxml import html as lxml_html
from paths import DATA
from playwright import sync_api

pytestmark = [pytest.mark.kernel, pytest.mark.mkdocs]

FIXTURES = DATA
SITE = FIXTURES / "rich"
NOTEBOOKS = FIXTURES / "notebooks"
#: Snippet stem -> (jupytext format, suffix) of the autograd tutorial in every format.
FORMATS = {"autograd_percent": ("py:percent", ".py"), "autograd_light": ("py:light", ".py"),
           "autograd_sphinx": ("py:sphinx", ".py"), "autograd_md": ("md", ".md"),
           "autograd_myst": ("md:myst", ".md"), "autograd_ipynb": ("ipynb", ".ipynb")}


def env() -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if k != "BLOG_EXEC_MODE"}
    found["NO_MKDOCS_2_WARNING"] = "1"
    return found


def make_site(root: Path) -> Path:
    """The fixture site with its snippets: the rich notebook and the autograd tutorial in each format."""
    shutil.copytree(SITE, root, ignore=shutil.ignore_patterns("site", "_results", "__pycache__"))
    snippets = root / "snippets"
    snippets.mkdir()
    shutil.copyfile(NOTEBOOKS / "rich.py", snippets / "rich.py")
    tutorial = jupytext.read(NOTEBOOKS / "autogradqs_tutorial.py")
    for stem, (fmt, suffix) in FORMATS.items():
        if fmt == "py:sphinx":  # the original, as published
            shutil.copyfile(NOTEBOOKS / "autogradqs_tutorial.py", snippets / f"{stem}{suffix}")
        else:
            jupytext.write(tutorial, snippets / f"{stem}{suffix}", fmt=fmt)
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_site(tmp_path_factory.mktemp("rich") / "site")
    ran = subprocess.run([sys.executable, "-m", "perfblog.cli", "run", "--device", "cpu"], cwd=root,
                         env=env(), capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=root, env=env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return root


def page(built: Path) -> lxml_html.HtmlElement:
    return lxml_html.fromstring((built / "site" / "rich" / "index.html").read_text(encoding="utf-8"))


def section(built: Path, heading: str) -> list[lxml_html.HtmlElement]:
    """The elements after the ``h2`` called ``heading``, up to the next one."""
    found, inside = [], False
    for element in page(built).xpath("//article/*"):
        if element.tag == "h2":
            inside = element.text_content().strip().rstrip("¶").strip() == heading
        elif inside:
            found.append(element)
    return found


def images(built: Path) -> list[lxml_html.HtmlElement]:
    return page(built).xpath("//p[@class='snippet-image']/img")


def png_size(path: Path) -> tuple[int, int]:
    return struct.unpack(">II", path.read_bytes()[16:24])


def test_a_figure_is_published_at_its_intended_size_and_matplotlib_reprs_are_dropped(built: Path) -> None:
    figure, bar, sized = images(built)
    file = built / "site" / "rich" / figure.get("src")
    width, height = png_size(file.resolve())
    assert (int(figure.get("width")), int(figure.get("height"))) == (width // 2, height // 2)
    assert bar.get("src").endswith(".png") and sized.get("width") == "120"
    assert "BarContainer" not in page(built).text_content()


def test_a_dataframe_is_a_plain_table_in_a_scrolling_box_without_its_style_block(built: Path) -> None:
    tables = page(built).xpath("//div[contains(@class, 'snippet-table')]//table")
    assert len(tables) == 3  # the DataFrame, the Styler, the wide one
    assert all(t.get("class") is None and t.get("border") is None for t in tables)
    text = page(built).text_content()
    assert "vertical-align" not in text and ".dataframe" not in text and "<style" not in text
    assert not page(built).xpath("//article//style")


def test_a_styler_keeps_its_colour_on_the_cell_it_styled(built: Path) -> None:
    styled = page(built).xpath("//td[contains(@style, 'background-color')]")
    assert len(styled) == 1 and "#c8e6c9" in styled[0].get("style") and styled[0].text_content() == "0.60"


def test_math_is_typeset_by_mathjax_served_from_the_site(built: Path) -> None:
    (math,) = page(built).xpath("//div[contains(@class, 'snippet-math')]")
    assert math.text_content() == r"\[\frac{t_\mathrm{eager}}{t_\mathrm{compiled}} \approx 3.1\]"
    scripts = [s.get("src") for s in page(built).xpath("//script[@src]")]
    assert "../_snippets/mathjax/tex-chtml.js" in scripts
    assert not any(s.startswith(("http:", "https:", "//")) for s in scripts)
    assert (built / "site" / "_snippets" / "mathjax" / "tex-chtml.js").stat().st_size > 500_000
    assert (built / "site" / "_snippets" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()


def test_json_markdown_and_html_displays(built: Path) -> None:
    root = page(built)
    (document,) = root.xpath("//div[contains(@class, 'language-json')]")
    assert '"speedup": 3.1' in document.text_content() and document.xpath(".//span[@class]")
    (markdown,) = root.xpath("//div[@class='snippet-markdown']")
    assert markdown.xpath(".//strong")[0].text == "Bold"
    assert markdown.xpath(".//a/@href") == ["https://pytorch.org/"]
    (shown,) = root.xpath("//div[@class='snippet-html']")
    assert shown.xpath(".//a/@href") == ["https://pytorch.org/"] and not shown.xpath(".//img")
    assert "never" not in shown.text_content() and "color: red" not in shown.text_content()
    assert shown.text_content().endswith("and the end.")


def output_text(built: Path, heading: str) -> str:
    return "\n".join(e.text_content() for e in section(built, heading))


def test_terminal_output_keeps_the_last_frame_and_colours_as_spans(built: Path) -> None:
    text = output_text(built, "Terminal")
    assert "100% |##########|" in text and " 25%" not in text
    assert "frame 2" in text and "frame 0" not in text
    assert "\x1b" not in text and "]8;;" not in text and "PyTorch done" in text
    reds = page(built).xpath("//span[@class='ansi-red-fg']")
    assert [r.text for r in reds] == ["red"]
    assert page(built).xpath("//span[@class='ansi-green-fg ansi-bold']")[0].text == "bold green"


def test_a_long_output_shows_its_first_lines_and_keeps_the_rest_behind_show_all(built: Path) -> None:
    (long,) = page(built).xpath("//div[contains(@class, 'snippet-long')]")
    head = long.xpath("./pre")[0].text_content().split("\n")
    assert head[0] == "line 0" and head[-1] == "line 39" and len(head) == 40
    (more,) = long.xpath("./details[@class='snippet-more']")
    assert more.xpath("./summary")[0].text_content() == "显示全部 200 行"
    assert more.xpath("./pre")[0].text_content().split("\n")[-1] == "line 199"
    assert not long.xpath(".//span")  # plain text: no per-token spans


def test_errors_shown_on_purpose_are_open(built: Path) -> None:
    text = output_text(built, "Errors shown on purpose")
    stderr = page(built).xpath("//div[contains(@class, 'snippet-stderr')]")
    assert stderr and "ZeroDivisionError: division by zero" in stderr[0].text_content()
    assert not page(built).xpath("//details[@class='snippet-stderr']")  # show-stderr: not folded
    assert "ValueError: shown on purpose" in text


def test_a_tutorial_runs_and_shows_in_every_format(built: Path) -> None:
    text = output_text(built, "One tutorial, every format")
    shown = re.findall(r"Gradient function for z = <AddBackward0 object at 0x[0-9a-f]+>", text)
    assert len(shown) == len(FORMATS)


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_up(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.browser
def test_in_a_browser_the_figure_the_dataframe_and_the_math_are_visible(built: Path, tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              cwd=built / "site", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_up(url)
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                 args=CHROMIUM_ARGS)
            view = browser.new_page(viewport={"width": 1280, "height": 900})
            view.goto(f"{url}rich/", wait_until="load", timeout=60_000)
            figure = view.locator("p.snippet-image img").first
            sync_api.expect(figure).to_be_visible()
            box = figure.bounding_box()
            assert box is not None and abs(box["width"] - int(figure.get_attribute("width") or 0)) <= 1
            assert figure.evaluate("img => img.complete && img.naturalWidth > 0")
            table = view.locator("div.snippet-table table").first
            sync_api.expect(table).to_be_visible()
            assert table.evaluate("t => getComputedStyle(t.querySelector('th')).fontWeight") == "700"
            math = view.locator("div.snippet-math mjx-container")
            sync_api.expect(math).to_be_visible(timeout=30_000)  # typeset by MathJax, served by the site
            assert math.bounding_box()["height"] > 20  # type: ignore[index]
            more = view.locator("details.snippet-more")
            tail = more.locator("pre")
            sync_api.expect(tail).to_be_hidden()
            more.locator("summary").click()
            sync_api.expect(tail).to_be_visible()
            shot = tmp_path / "rich.png"
            view.screenshot(path=str(shot), full_page=True)
            print(f"screenshot: {shot}")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
