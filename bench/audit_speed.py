"""What `blog seo audit` costs on real-size Material pages, as a ratio of parsing them (target: ≤ 1.5×).

Builds the OI-wiki corpus (tests/data/corpus/oiwiki: 249 real Chinese pages with Material's navigation of
the whole site repeated in every page, as a site of a few hundred pages has it), then times, pinned
to one core, interleaved and repeated after a warm-up:

- ``parse``: read each page, parse it with lxml and take its text (the least any audit must do);
- ``audit``: `audit_site` on the folder (every rule, segmentation and the site-wide checks);
- ``floor``: the least an audit of Chinese keywords does beyond the parse: parse each page as the audit
  does, take its article's text, normalise it and cut it with rjieba (no rule, no other fact). Its
  ratio to ``parse`` is what the target would leave to everything else.

Prints the median and spread of both (CPU time: what one core delivers when other jobs share the
machine; and wall clock) and the ratio of the medians. When selectolax is installed, it also times
lexbor's parse and text of the same pages, the other parser considered. Usage::

    .venv/bin/python bench/audit_speed.py [--repeats 7] [SITE_DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import lxml
import lxml.html
from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from seo_corpus import build  # noqa: E402 - the corpus test's own build of the site

from perfblog.seo.audit import audit_site  # noqa: E402
from perfblog.seo.facts import _FAST_ROOTS, _PARSER, _STRING  # noqa: E402
from perfblog.seo.text import default_segmenter, normalize  # noqa: E402

TARGET = 1.5


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def lxml_text(files: list[Path]) -> None:
    for path in files:
        lxml.html.document_fromstring(path.read_bytes().decode("utf-8")).text_content()


def floor(files: list[Path]) -> None:
    """Parse as the audit does, then normalise and segment the article's text: nothing else."""
    segmenter = default_segmenter()
    for path in files:
        doc = etree.fromstring(path.read_bytes().decode("utf-8"), _PARSER)
        article = next((found[0] for query in _FAST_ROOTS if (found := query(doc))), doc)
        segmenter.cut(normalize(" ".join(_STRING(article).split())))


def lexbor_text(files: list[Path]) -> None:
    from selectolax.lexbor import LexborHTMLParser

    for path in files:
        LexborHTMLParser(path.read_bytes()).root.text()


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("site", nargs="?", type=Path, help="an already built corpus (default: build it)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or build(Path(tmp) / "site")
        files = pages(site)
        size = sum(p.stat().st_size for p in files) / len(files) / 1024
        default_segmenter()  # the dictionary is loaded once per process, not per page
        variants: dict[str, Callable[[], object]] = {"parse": lambda: lxml_text(files),
                                                     "audit": lambda: audit_site(site),
                                                     "floor": lambda: floor(files)}
        try:
            import selectolax  # noqa: F401 - only to time the other parser

            variants["lexbor"] = lambda: lexbor_text(files)
        except ImportError:
            pass
        for work in variants.values():  # warm-up: page cache, bytecode, caches of the first call
            work()
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for _ in range(args.repeats):
            for name, work in variants.items():
                samples[name].append(timed(work))
        found = len(audit_site(site).findings)
    print(f"{len(files)} pages of the OI-wiki corpus, {size:.0f} KiB each on average (Material, the whole "
          f"navigation in every page), {found} findings; {args.repeats} interleaved runs after a warm-up, "
          f"pinned to one core")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, lxml {lxml.__version__}; load average {os.getloadavg()[0]:.1f}")
    medians = {}
    for name, values in samples.items():
        for index, clock in enumerate(("cpu", "wall")):
            series = [v[index] for v in values]
            q1, median, q3 = statistics.quantiles(series, n=4, method="inclusive")
            medians[(name, clock)] = median
            print(f"  {name:6s} {clock:4s} median {median:6.3f} s ({len(files) / median:5.0f} pages/s)   "
                  f"IQR {q3 - q1:5.3f} s   min {min(series):6.3f}   max {max(series):6.3f}")
    ratios = {clock: medians[("audit", clock)] / medians[("parse", clock)] for clock in ("cpu", "wall")}
    for clock, ratio in ratios.items():
        print(f"  audit / lxml parse and text ({clock}): {ratio:.2f}x  (target <= {TARGET})")
    least = medians[("floor", "cpu")] / medians[("parse", "cpu")]
    print(f"  floor (parse, normalise and segment the article, nothing else) / lxml parse and text (cpu): "
          f"{least:.2f}x")
    if ("lexbor", "cpu") in medians:
        lexbor = medians[("lexbor", "cpu")] / medians[("parse", "cpu")]
        print(f"  lexbor parse and text / lxml's (cpu): {lexbor:.2f}x")
    return 0 if ratios["cpu"] <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
