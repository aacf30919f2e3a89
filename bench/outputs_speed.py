"""What rendering snippet outputs adds to the example site's `mkdocs build` (target: <= 1.05x).

Copies this repository's site (mkdocs.yml, posts/, snippets/ with their committed results) twice:

- ``outputs``: as it is: every `output()` embed renders its cell's outputs during the build (figures,
  tables, math, terminal text with colours and collapsing);
- ``prerendered``: the same posts with every `output()` embed replaced, before timing, by what it
  renders to, so the built pages are the same and only the rendering of outputs is missing.

Times `mkdocs build` of each, interleaved and repeated, with every result fresh (nothing executes), and
prints the median and spread of each and the ratio of medians, for wall time and for the CPU time of the
build process (the steadier of the two on a shared machine). Usage::

    .venv/bin/python bench/outputs_speed.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import interleaved

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.05
OUTPUT_EMBED = re.compile(r"<%=\s*output\([^%]*\)\s*%>")


def prepare(work: Path) -> int:
    """The two copies of the site; the number of `output()` embeds rendered beforehand in the second."""
    removed = 0
    for name in ("outputs", "prerendered"):
        site = work / name
        site.mkdir()
        for part in ("posts", "snippets", "src"):  # src: the harness the snippets import is in their keys
            shutil.copytree(ROOT / part, site / part, ignore=shutil.ignore_patterns("__pycache__"))
        for extra in ("mkdocs.yml", "indexnow.key"):
            if (ROOT / extra).exists():
                shutil.copyfile(ROOT / extra, site / extra)
        if name == "prerendered":
            removed = prerender(site)
    return removed


def prerender(site: Path) -> int:
    """Replace each `output()` embed of the site's posts by what it renders to; how many there were."""
    from perfblog.generator.build import Build
    from perfblog.generator.render.embeds import Page
    from perfblog.generator.run.engine import Engine, Settings

    snippets = site / "snippets"
    build = Build(Engine(Settings(snippets, snippets / "_results", mode="frozen")), site)
    count = 0
    for post in sorted((site / "posts").rglob("*.md")):
        text = post.read_text(encoding="utf-8")
        lang = "en" if post.stem.endswith("-en") else "zh-CN"
        url = f"{post.stem}/"

        def rendered(found: re.Match[str], post: Path = post, lang: str = lang, url: str = url) -> str:
            return build.renderer.render(found.group(0), str(post), 0, Page(url, lang))

        count += len(OUTPUT_EMBED.findall(text))
        post.write_text(OUTPUT_EMBED.sub(rendered, text), encoding="utf-8")
    return count


def timed_build(site: Path) -> interleaved.Run:
    """Wall and CPU seconds and peak memory of one `mkdocs build` process."""
    return interleaved.mkdocs_build(site, BLOG_EXEC_MODE="frozen")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="blog-outputs-speed-"))
    try:
        removed = prepare(work)
        samples = interleaved.measure({name: lambda name=name: timed_build(work / name)
                                       for name in ("prerendered", "outputs")}, args.repeats)
        print(f"the example site, {removed} output() embeds; {args.repeats} interleaved repeats each after "
              f"one warm-up; `mkdocs build` as a process, interpreter start-up included, exec_mode frozen; "
              f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
        ratios = interleaved.report(samples, "prerendered", "outputs", TARGET)
        return 0 if min(ratios.values()) <= TARGET else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
