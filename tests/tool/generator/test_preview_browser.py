"""The author's preview in a real browser: `mkdocs serve` shows a draft with its banner, the SEO panel and
snippet results with provenance; saving a snippet re-runs it in the background and the page reloads;
`mkdocs build` publishes neither the draft nor the panel.

Debian's chromium (`make browser`) driven by Playwright; the server is a real `mkdocs serve` on
127.0.0.1, in its own process group, over a copy of tests/data/preview.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from paths import DATA
from playwright import sync_api

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.mkdocs]

FIXTURE = DATA / "preview"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip
DRAFT_URL = "draft-preview/"
WAIT_MS = 60_000

expect = sync_api.expect


def blog_env() -> dict[str, str]:
    """The test's environment without a mode override, so serve and build use `auto`."""
    return {k: v for k, v in os.environ.items() if k != "BLOG_EXEC_MODE"}


def results(site: Path) -> dict[str, tuple[int, bytes]]:
    """Every stored result file: (mtime, bytes), to prove what was and was not re-run."""
    return {p.relative_to(site).as_posix(): (p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted((site / "snippets" / "_results").rglob("*.json"))}  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the fixture blog whose two snippets have fresh results (run by the real `blog run`)."""
    root = tmp_path_factory.mktemp("preview") / "site"
    shutil.copytree(FIXTURE, root)
    subprocess.run([sys.executable, "-m", "perfblog.cli", "run", "--device", "cpu"], cwd=root,
                   env=blog_env(), check=True, timeout=120)  # fmt: skip
    return root


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[tuple[str, Path]]:
    """`mkdocs serve` on a free port; its whole process group (kernels included) is ended afterwards."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = site.parent / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"127.0.0.1:{port}"],
            cwd=site, env=blog_env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_until_up(url, proc, log)
        yield url, log
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _wait_until_up(url: str, proc: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"mkdocs serve exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"mkdocs serve did not answer in {timeout} s:\n{log.read_text(errors='replace')}")


@pytest.fixture(scope="module")
def page(server: tuple[str, Path]) -> Iterator:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport={"width": 1280, "height": 1600})
        tab.set_default_timeout(WAIT_MS)
        tab.goto(server[0] + DRAFT_URL)
        yield tab
        browser.close()


def test_served_draft_shows_banner_seo_panel_and_timing_with_provenance(page) -> None:
    expect(page.locator(".blog-draft-banner")).to_be_visible()
    expect(page.locator(".blog-draft-banner")).to_contain_text("草稿")
    panel = page.locator("aside.blog-seo-panel")
    expect(panel).to_be_visible()
    expect(panel).to_contain_text("SEO 检查")
    expect(panel.locator("tr[data-topic='density']")).to_be_visible()
    # the search preview at the site's own address, not the local server's
    expect(panel.locator(".blog-seo-serp-url")).to_have_text(f"https://preview.example.com/{DRAFT_URL}")
    expect(panel.locator("tr[data-topic='title'] .blog-seo-state")).to_have_attribute("data-state", "good")
    assert panel.get_attribute("data-state") in ("good", "info", "warning", "error")
    timing = page.locator("article span.snippet-value").nth(1)
    expect(timing).to_be_visible()
    expect(timing).to_have_text(re.compile(r"^\d+\.\d\d µs$"))
    expect(page.locator("article").get_by_text("total 4950")).to_be_visible()
    provenance = page.locator("article p.snippet-provenance").last
    expect(provenance).to_be_visible()
    expect(provenance).to_contain_text("CPU")
    expect(page.locator(".snippet-stale-mark")).to_have_count(0)


def test_a_markdown_only_edit_reloads_the_page_and_runs_no_snippet(page, site: Path, server) -> None:
    before = results(site)
    post = site / "posts" / "posts" / "draft.md"
    post.write_text(post.read_text(encoding="utf-8") + "\n只改了文字，没有代码。\n", encoding="utf-8")
    expect(page.locator("article")).to_contain_text("只改了文字，没有代码。")
    time.sleep(1.5)  # three polling intervals: a snippet run would have started by now
    assert results(site) == before
    assert "snippet preview" not in server[1].read_text(errors="replace")


def test_saving_a_snippet_reruns_it_alone_in_the_background_then_the_page_updates(
    page, site: Path, tmp_path: Path
) -> None:
    other = {k: v for k, v in results(site).items() if "/other/" in k}
    gate = tmp_path / "release"  # holds the re-run so that the stale page is observable
    snippet = site / "snippets" / "timing.py"
    code = snippet.read_text(encoding="utf-8").replace(
        "N = 100\n",
        f"import pathlib\nwhile not pathlib.Path({str(gate)!r}).exists():\n    time.sleep(0.05)\nN = 200\n",
    )
    snippet.write_text(code, encoding="utf-8")

    expect(page.locator("p.snippet-provenance .snippet-stale-mark").first).to_be_visible()
    expect(page.locator("article")).to_contain_text("total 4950")
    gate.touch()

    expect(page.locator("article").get_by_text("total 19900")).to_be_visible()
    expect(page.locator("article span.snippet-value").first).to_have_text("19900")
    expect(page.locator(".snippet-stale-mark")).to_have_count(0)
    expect(page.locator("aside.blog-seo-panel")).to_be_visible()
    assert {k: v for k, v in results(site).items() if "/other/" in k} == other
    shot = tmp_path / "preview.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")


def test_published_build_has_no_draft_and_no_panel(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "built"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--site-dir", str(out)], cwd=site,
                   env=blog_env(), check=True, timeout=120, capture_output=True)  # fmt: skip
    assert (out / "published" / "index.html").is_file()
    assert not (out / "draft-preview").exists()
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".xml", ".txt", ".json", ".gz"):
            data = path.read_bytes()
            if path.suffix == ".gz":
                import gzip

                data = gzip.decompress(data)
            text = data.decode("utf-8", errors="replace")
            assert "draft-preview" not in text, path
            assert "blog-seo-panel" not in text and "blog-draft-banner" not in text, path
