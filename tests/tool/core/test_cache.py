"""The cache folder's options: `cache_dir` moves it (inside the project), `cache: false` turns it off,
and two config files of one folder keep separate memos. (What the cache refuses to trust:
test_security_cache.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import DATA

from perfblog.core.cache import CACHE_DIR, folder_option
from perfblog.seo import memo

FIXTURE = DATA / "seo" / "site"


@pytest.mark.parametrize("value", ["/tmp/cache", "../cache", "a/../../b", "", "  "])
def test_a_cache_dir_outside_the_project_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="cache_dir must be a folder inside the project"):
        folder_option(value)


def test_a_cache_dir_inside_the_project_is_kept_as_written() -> None:
    assert folder_option("build/cache") == "build/cache"


def _site(tmp_path: Path, snippets_options: str) -> Path:
    site = tmp_path / "blog"
    shutil.copytree(FIXTURE, site)
    config = site / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "plugins:\n", f"plugins:\n  - snippets: {snippets_options}\n"), encoding="utf-8")
    return site


def _build(site: Path, config: str = "mkdocs.yml") -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-f", config], cwd=site,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.mkdocs
def test_cache_dir_moves_the_cache_and_cache_false_writes_none(tmp_path: Path) -> None:
    site = _site(tmp_path, "{cache_dir: build/cache}")
    _build(site)
    moved = site / "build" / "cache"
    assert (moved / memo.MEMO_NAME).is_file() and any((moved / "cards").iterdir())
    assert not (site / CACHE_DIR).exists()
    shutil.rmtree(site / "build")
    config = site / "mkdocs.yml"
    off = config.read_text(encoding="utf-8").replace("{cache_dir: build/cache}", "{cache: false}")
    config.write_text(off, encoding="utf-8")
    _build(site)
    assert not (site / "build").exists() and not (site / ".cache").exists()
    assert any((site / "site" / "_seo" / "cards").iterdir())  # cards are drawn all the same


@pytest.mark.mkdocs
def test_two_configs_of_one_folder_keep_separate_memos(tmp_path: Path) -> None:
    site = _site(tmp_path, "{}")
    english = site / "mkdocs.en.yml"
    english.write_text((site / "mkdocs.yml").read_text(encoding="utf-8").replace(
        "language: zh", "language: en") + "site_dir: site-en\n", encoding="utf-8")
    _build(site)
    _build(site, "mkdocs.en.yml")
    cache = site / CACHE_DIR
    first, second = cache / memo.MEMO_NAME, cache / "memo.mkdocs.en.json"
    assert first.is_file() and second.is_file()
    written = first.stat().st_mtime_ns, second.stat().st_mtime_ns
    _build(site)  # each config finds its own pages: neither memo is rewritten
    _build(site, "mkdocs.en.yml")
    assert (first.stat().st_mtime_ns, second.stat().st_mtime_ns) == written
