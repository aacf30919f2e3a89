"""Debian's chromium, driven by Playwright, as the browser tests open a page (never `playwright install`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
#: Headless as root in a container, and quiet: no update checks, sync or QUIC to anywhere.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]


@contextlib.contextmanager
def page() -> Iterator[tuple[Any, list[str]]]:
    """A new page of a headless chromium, and the messages of the dialogs it opens (each dismissed: a
    payload's `alert` shows up there instead of blocking the page)."""
    from playwright import sync_api

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            view = browser.new_page()
            dialogs: list[str] = []
            view.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            yield view, dialogs
        finally:
            browser.close()
