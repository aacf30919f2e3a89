"""What the executor tests share: `blog` in-process, a site around a snippets folder, snippets that record
when their cell ran, and the overlap of two such intervals."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from perfblog.generator import commands
from perfblog.generator.run.engine import Engine, Settings
from perfblog.generator.store import resolve
from perfblog.generator.store.result import Result


def blog(*argv: str) -> int:
    """The snippet commands of `blog`, in-process."""
    parser = argparse.ArgumentParser(prog="blog")
    commands.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return int(args.handler(args) or 0)


def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site (mkdocs.yml, docs/, an empty snippets/), the working directory for the test."""
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "snippets").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv(resolve.MODE_ENV, raising=False)
    return tmp_path


def engine(project: Path) -> Engine:
    snippets = project / "snippets"
    return Engine(Settings(snippets_dir=snippets, results_dir=snippets / "_results", device="cpu"))


def snippet(purpose: str | None, seconds: float, before: str = "", timeout: float | None = None) -> str:
    """A snippet whose one cell records when it started and ended (wall clock) and sleeps between."""
    options = ", ".join(f for f in (f"purpose: {purpose}" if purpose else "",
                                    f"timeout: {timeout:g}" if timeout else "") if f)
    header = f"# ---\n# blog: {{{options}}}\n# ---\n\n" if options else ""
    return (f"{header}# %% name=\"main\"\nimport os, time\nfrom perfblog.generator import glue\n{before}"
            f"glue('start', time.time())\ntime.sleep({seconds})\nglue('end', time.time())\n")


def interval(result: Result) -> tuple[float, float]:
    return result.values["start"].value, result.values["end"].value


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]
