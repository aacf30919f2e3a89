"""Every snippet has a committed CPU result made by its current code (and the local modules it imports).

A stale result means someone changed a snippet without re-running `blog run --device cpu <stem>`; the
post would show numbers the code no longer produces.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from paths import ROOT

from perfblog.generator import device
from perfblog.generator.source import snippet
from perfblog.generator.store import resolve
from perfblog.generator.store.store import Store

SNIPPETS = ROOT / "snippets"
STORE = Store(SNIPPETS / "_results")
PATHS = snippet.discover(SNIPPETS)


def test_the_snippet_directory_is_not_empty():
    assert PATHS, f"no snippets found in {SNIPPETS}"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_snippet_has_a_fresh_cpu_result_for_its_current_code(path: Path):
    loaded = snippet.load(path, SNIPPETS)
    results = {cls: r for cls, r in STORE.results(loaded.stem).items() if device.kind(cls) is device.CPU}
    assert results, f"{path.name}: no CPU result; run `blog run --device cpu {loaded.stem}`"
    statuses = [resolve.status_of(loaded, cls, result) for cls, result in results.items()]
    fresh = [s for s in statuses if s.state == "fresh"]
    why = "; ".join(f"{s.device_class}: {s.why}" for s in statuses)
    assert fresh, f"{path.name}: CPU result is stale ({why}); run `blog run --device cpu {loaded.stem}`"
    assert all(s.result is not None and s.result.to_json()["status"] == "ok" for s in fresh)
