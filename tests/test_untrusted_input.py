"""Issue 29, LOW items: a hostile result file or URL is one line naming the file, never a traceback.

A result file nested 100,000 deep (a RecursionError in ``json.loads``) or too large, and `http://[::1`
(an unclosed IPv6 bracket, on which urllib raises ValueError) in a link, a canonical, a front-matter
`image` or a built page the audit reads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfblog.core.cli import main
from perfblog.generator import store

ROOT = Path(__file__).parent.parent
ENGINE = Path(__file__).parent / "fixtures" / "engine" / "blog"
NESTED = "[" * 100_000 + "]" * 100_000


def _blog(tmp_path: Path, result: str) -> Path:
    root = tmp_path / "blog"
    shutil.copytree(ENGINE, root)
    stored = root / "snippets" / "_results" / "demo" / "cpu-x86_64.json"
    stored.parent.mkdir(parents=True)
    stored.write_text(result)
    return root


def test_a_result_file_nested_100000_deep_is_one_line_with_exit_2(tmp_path: Path, monkeypatch,
                                                                   capsys) -> None:
    monkeypatch.chdir(_blog(tmp_path, NESTED))
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert err == ("blog: error: snippets/_results/demo/cpu-x86_64.json: unreadable result file: "
                   "nested too deeply\n")


def test_a_result_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path: Path, monkeypatch,
                                                                           capsys) -> None:
    monkeypatch.chdir(_blog(tmp_path, "{}" + " " * 2000))
    monkeypatch.setattr(store, "MAX_RESULT_BYTES", 1000)
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert "cpu-x86_64.json: unreadable result file: 2002 bytes, more than the 1000 read" in err


def test_the_result_size_limit_leaves_room_above_every_committed_result() -> None:
    largest = max(p.stat().st_size for p in (ROOT / "snippets" / "_results").rglob("*.json"))
    assert largest * 100 < store.MAX_RESULT_BYTES


@pytest.mark.mkdocs
def test_a_result_file_nested_100000_deep_fails_the_build_naming_it(tmp_path: Path) -> None:
    root = _blog(tmp_path, NESTED)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-d", str(tmp_path / "site")], cwd=root,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 1
    assert "snippets/_results/demo/cpu-x86_64.json: unreadable result file: nested too deeply" in done.stderr
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
