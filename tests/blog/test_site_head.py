"""The repository's own blog, built: its flagship post and English companion link as language versions,
each has a social card that draws its title, the home page names the site in WebSite JSON-LD, and in a
real browser (Debian's chromium) no page asks any host but the site, nor logs an error."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import lxml.html
import pytest
from paths import ROOT
from PIL import Image, ImageChops
from playwright import sync_api

from perfblog.seo import cards

SITE_URL = "https://blog.example.com/"
ZH, EN = "torch-compile-fullgraph/", "torch-compile-fullgraph-en/"
CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.mkdocs
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic"]
PHONE = {"width": 412, "height": 823}  # Lighthouse's mobile screen (Moto G Power)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("blog") / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        capture_output=True, text=True, timeout=300, env={"NO_MKDOCS_2_WARNING": "1", "PATH": ""}, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return out


def _doc(built: Path, page: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring((built / page / "index.html").read_bytes())


def test_flagship_and_its_english_companion_carry_reciprocal_hreflang(built):
    expected = [("en", SITE_URL + EN), ("zh-CN", SITE_URL + ZH), ("x-default", SITE_URL + ZH)]
    for page, lang in ((ZH, "zh-CN"), (EN, "en")):
        doc = _doc(built, page)
        assert doc.get("lang") == lang
        assert [(x.get("hreflang"), x.get("href")) for x in doc.xpath("//head/link[@hreflang]")] == expected


def test_each_flagship_has_a_card_that_draws_its_own_title(built):
    font = cards.find_font()
    for page in (ZH, EN):
        doc = _doc(built, page)
        (url,) = doc.xpath("//meta[@property='og:image']/@content")
        (title,) = doc.xpath("//meta[@property='og:title']/@content")
        with Image.open(built / url.removeprefix(SITE_URL)) as card:
            assert (card.format, card.size) == ("PNG", (1200, 630))
            expected = cards.draw(title, "PyTorch 性能笔记", "blog.example.com", font)
            assert ImageChops.difference(card.convert("RGB"), expected).getbbox() is None
        (posting, _) = (json.loads(s) for s in doc.xpath("//script[@type='application/ld+json']/text()"))
        assert posting["image"] == [url]
        assert doc.xpath("//meta[@name='twitter:card']/@content") == ["summary_large_image"]


def test_home_page_has_website_jsonld_and_the_slogan_in_its_title(built):
    doc = lxml.html.document_fromstring((built / "index.html").read_bytes())
    assert doc.findtext(".//title") == "PyTorch 性能笔记 - 每个数字都来自真实运行的代码"
    (website,) = (json.loads(s) for s in doc.xpath("//script[@type='application/ld+json']/text()"))
    assert (website["@type"], website["name"], website["url"], website["inLanguage"]) == (
        "WebSite", "PyTorch 性能笔记", SITE_URL, "zh-CN"
    )


def test_the_packages_theme_overrides_and_stylesheet_reach_the_site(built):
    doc = lxml.html.document_fromstring((built / "index.html").read_bytes())
    (label,) = doc.xpath("//div[@role='dialog']/@aria-label")
    assert label.strip()  # the search dialog has a name (Material's word for search: 查找)
    for meta_list in doc.xpath("//ul[contains(@class, 'md-meta__list')]"):
        assert {child.tag for child in meta_list} == {"li"}  # the pinned post's pin is a list item
    assert doc.xpath("//link[@rel='stylesheet']/@href")[-1] == "_seo/seo.css"
    assert (built / "_seo" / "seo.css").is_file()


@pytest.fixture(scope="module")
def served(built: Path) -> Iterator[str]:
    """The built site over HTTP on 127.0.0.1, as a static host would serve it."""
    handler = functools.partial(_QuietHandler, directory=str(built))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.browser
@pytest.mark.parametrize("page", ["", ZH, EN])
def test_no_request_leaves_the_site_and_no_error_is_logged(served: str, page: str, tmp_path: Path):
    asked: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        tab = browser.new_page(viewport=PHONE)
        tab.on("request", lambda request: asked.append(request.url))
        tab.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        tab.on("requestfailed", lambda request: errors.append(f"failed: {request.url}"))
        tab.on("response", lambda r: errors.append(f"{r.status}: {r.url}") if r.status >= 400 else None)
        tab.goto(served + page, wait_until="networkidle", timeout=60_000)
        tab.screenshot(path=str(tmp_path / "page.png"))
        browser.close()
    site = urlsplit(served).netloc
    assert asked and all(urlsplit(url).netloc == site for url in asked if url.startswith("http")), asked
    assert errors == []


def _luminance(rgb: tuple[float, ...]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(foreground: tuple[float, ...], background: tuple[float, ...]) -> float:
    light, dark = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


STYLES = """() => {
  const rgb = s => s.match(/[\\d.]+/g).map(Number);
  const small = [];
  const walker = document.createTreeWalker(document.querySelector("article"), NodeFilter.SHOW_TEXT);
  for (let n; (n = walker.nextNode());) {
    const el = n.parentElement;
    if (n.textContent.trim() && el.closest("svg") === null && parseFloat(getComputedStyle(el).fontSize) < 12)
      small.push(el.tagName + "." + el.className + " " + getComputedStyle(el).fontSize);
  }
  const comment = document.querySelector(".highlight .c1");
  let back = comment;
  while (rgb(getComputedStyle(back).backgroundColor)[3] === 0) back = back.parentElement;
  const link = document.querySelector("article p > a[href^='http']");
  return {small, comment: rgb(getComputedStyle(comment).color),
          back: rgb(getComputedStyle(back).backgroundColor),
          underline: getComputedStyle(link).textDecorationLine};
}"""


@pytest.mark.browser
def test_on_a_phone_text_is_legible_comments_contrast_and_links_are_underlined(served: str):
    """What Lighthouse's font-size, color-contrast and link-in-text-block audits ask, on the flagship."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        tab = browser.new_page(viewport=PHONE, is_mobile=True, device_scale_factor=1.75)
        tab.goto(served + ZH, wait_until="load", timeout=60_000)
        styles = tab.evaluate(STYLES)
        browser.close()
    assert styles["small"] == []
    assert _contrast(styles["comment"], styles["back"]) >= 4.5
    assert styles["underline"] == "underline"


TABLES = """() => [...document.querySelectorAll("article table")].map(t => {
  let box = null;
  for (let e = t.parentElement; e && e.tagName !== "ARTICLE"; e = e.parentElement)
    if (["auto", "scroll"].includes(getComputedStyle(e).overflowX)) { box = e; break; }
  const last = t.querySelector("tr").lastElementChild.getBoundingClientRect();
  const right = box ? box.getBoundingClientRect().right + (box.scrollWidth - box.clientWidth)
                    : innerWidth;
  return {scrolls: box !== null && box.clientWidth <= innerWidth,
          fits: t.getBoundingClientRect().right <= innerWidth, reachable: last.right <= right + 1,
          width: Math.round(t.scrollWidth)};
})"""


@pytest.mark.browser
@pytest.mark.parametrize("page", [ZH, EN, "ke-zhi-xing-dai-ma-pian-duan/"])
def test_on_a_390_px_phone_every_table_fits_or_scrolls_and_hides_no_column(served: str, page: str):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        tab = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        tab.goto(served + page, wait_until="load", timeout=60_000)
        tables = tab.evaluate(TABLES)
        overflow = tab.evaluate("document.documentElement.scrollWidth - innerWidth")
        browser.close()
    assert tables, "the post shows tables"
    assert all((t["fits"] or t["scrolls"]) and t["reachable"] for t in tables), tables
    assert overflow <= 0  # the page never scrolls sideways; a wide table's own box does


@pytest.mark.browser
def test_every_code_block_gets_materials_copy_button_after_load_and_it_copies(served: str):
    """Material's own copy buttons, added by the package's script after the page has loaded (the theme's
    feature is turned off, so it does not set them up while the page loads)."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        context = browser.new_context(viewport=PHONE, permissions=["clipboard-read", "clipboard-write"])
        tab = context.new_page()
        tab.goto(served + ZH, wait_until="load", timeout=60_000)
        blocks = tab.locator("pre > code")
        buttons = tab.locator("pre > nav.md-code__nav > button[data-md-type=copy]")
        sync_api.expect(buttons).to_have_count(blocks.count(), timeout=10_000)
        button = buttons.nth(2)
        button.scroll_into_view_if_needed()
        button.click(force=True)
        copied = tab.evaluate("navigator.clipboard.readText()")
        shown = button.locator("xpath=../../code").inner_text()
        features = json.loads(tab.locator("#__config").text_content())["features"]
        count = blocks.count()
        browser.close()
    assert count > 10 and copied.strip() == shown.strip()
    assert "content.code.copy" not in features


def test_outputs_and_folded_code_are_samp_blocks_outside_materials_code_block_script(built):
    doc = _doc(built, ZH)
    outputs = doc.xpath("//div[contains(@class, 'snippet-output')]//pre")
    folded = doc.xpath("//details[contains(@class, 'snippet-checks')]//pre")
    assert outputs and folded
    assert all([child.tag for child in pre] == ["samp"] for pre in outputs + folded)
