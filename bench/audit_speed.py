"""How many pages a second `blog seo audit` reads on one core, Chinese segmentation included.

Builds the test fixture site (Material + blog + seo) once, copies its post page N times with distinct
titles into a temporary folder, then times `audit_site` on it: one warm-up run, then REPEAT timed runs;
prints the median and spread of wall-clock and of CPU-time rates (CPU time is what one core delivers
when other jobs share the machine; wall clock is what you wait). Target: >= 300 pages/s.

    .venv/bin/python bench/audit_speed.py [N] [REPEAT]
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perfblog.seo.audit import audit_site
from perfblog.seo.text import default_segmenter

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "seo" / "site"


def build_pages(work: Path, count: int) -> Path:
    blog = work / "blog"
    shutil.copytree(FIXTURE, blog)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    cmd = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "-q",
        "-f",
        str(blog / "mkdocs.yml"),
        "-d",
        str(blog / "site"),
    ]
    subprocess.run(cmd, check=True, env=env)
    post = (blog / "site" / "torch-compile-fullgraph" / "index.html").read_text(encoding="utf-8")
    site = work / "site"
    for i in range(count):
        page = site / f"p{i:05d}" / "index.html"
        page.parent.mkdir(parents=True)
        unique = post.replace("fullgraph 模式与图断裂", f"fullgraph 模式与图断裂 {i}").replace(
            "以及整图编译带来的速度差异", f"以及整图编译带来的速度差异 {i}"
        )
        page.write_text(unique, encoding="utf-8")
    return site


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    with tempfile.TemporaryDirectory() as tmp:
        site = build_pages(Path(tmp), count)
        size = sum(p.stat().st_size for p in site.rglob("*.html")) / count / 1024
        default_segmenter()  # the dictionary load is paid once per process, not per page
        report = audit_site(site)  # warm-up (and page cache)
        assert len(report.pages) == count and all(p.words > 300 for p in report.pages)
        rates, cpu_rates = [], []
        for _ in range(repeat):
            start, cpu = time.perf_counter(), time.process_time()
            audit_site(site)
            rates.append(count / (time.perf_counter() - start))
            cpu_rates.append(count / (time.process_time() - cpu))
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, pinned to 1; "
        f"python {platform.python_version()}"
    )
    print(
        f"{count} Material post pages of {size:.0f} KiB each (~{report.pages[0].words} rjieba words), "
        f"{repeat} runs after 1 warm-up"
    )
    for label, values in (("wall clock", rates), ("CPU time", cpu_rates)):
        print(
            f"audit ({label}): median {statistics.median(values):.0f} pages/s, "
            f"min {min(values):.0f}, max {max(values):.0f} (target >= 300)"
        )
    print(f"load average during the run: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
