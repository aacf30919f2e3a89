"""Near-duplicates are found among any number of identical pages, and for short
pages, in time linear in the pages (the 2,000-post benchmark audits every page of a real site)."""

from __future__ import annotations

import time
from pathlib import Path

import seo_pages

from perfblog.seo.audit import audit_site
from perfblog.seo.sitewide import LISTED

TEXT = "".join(seo_pages._PARAGRAPHS[:3])  # a post's worth of ordinary Chinese prose
SHORT = "整图编译把每一处图断裂都变成错误：先找出它们，再逐一修复，最后对比编译前后的速度。" * 2  # 82 chars
STUB = "本页正在编写中，敬请期待。"


def _write(root: Path, name: str, body: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{name}.html").write_text(
        f'<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>页面 {name}</title>'
        f'<link rel="canonical" href="https://example.org/{name}.html"></head>'
        "<body><article><h1>整图编译</h1><p>" + body + "</p></article></body></html>", encoding="utf-8")


def _near(root: Path) -> dict[str, str]:
    return {f.page: f.message for f in audit_site(root).findings if f.rule == "content-near-duplicate"}


def test_each_of_200_identical_pages_is_reported_with_its_copies(tmp_path: Path) -> None:
    """More copies than a sketch value may be shared by before it counts as boilerplate (COMMON)."""
    for n in range(200):
        _write(tmp_path, f"p{n:03}", TEXT)
    _write(tmp_path, "other", "".join(seo_pages._PARAGRAPHS[6:9]))
    started = time.perf_counter()
    found = _near(tmp_path)
    assert time.perf_counter() - started < 20
    assert set(found) == {f"p{n:03}.html" for n in range(200)}
    assert found["p000.html"] == ("its text is that of " + ", ".join(f"p{n:03}.html (1.00)" for n in
                                                                      range(1, LISTED + 1))
                                  + f" and {199 - LISTED} more page(s)")


def test_identical_short_pages_are_reported_but_stubs_are_not(tmp_path: Path) -> None:
    for name in ("a", "b"):
        _write(tmp_path, name, SHORT)
    for name in ("stub1", "stub2", "stub3"):
        _write(tmp_path, name, STUB)
    assert _near(tmp_path) == {"a.html": "its text is that of b.html (1.00)",
                               "b.html": "its text is that of a.html (1.00)"}
