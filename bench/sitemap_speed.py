"""Time and memory of writing sitemaps for N URLs (default 200,000): split files, .gz copies, .txt twins.

Memory is measured with tracemalloc (Python allocations, peak) at N/10 and N URLs, fed from a
generator: a streaming writer's peak must not grow with N. One warm-up, then REPEAT timed runs;
prints median and spread. Target: 200,000 URLs in < 5 s.

    .venv/bin/python bench/sitemap_speed.py [N] [REPEAT]
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from perfblog.seo import sitemap

BASE = "https://blog.example.com/"
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def urls(count: int) -> Iterator[sitemap.Url]:
    for i in range(count):
        yield sitemap.Url(f"{BASE}posts/{i:07d}-torch-compile-fullgraph/", EPOCH + timedelta(minutes=i))


def peak_kib(count: int, out: Path) -> float:
    tracemalloc.start()
    sitemap.write(urls(count), out, BASE)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1024


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        sitemap.write(urls(count), out, BASE)  # warm-up
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            sitemap.write(urls(count), out, BASE)
            times.append(time.perf_counter() - start)
        files = sorted(p.name for p in out.iterdir())
        biggest = max(p.stat().st_size for p in out.glob("sitemap-*.xml"))
        small, large = peak_kib(count // 10, out), peak_kib(count, out)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; python {platform.python_version()}")
    print(
        f"{count} URLs -> {len(files)} files ({', '.join(files[:4])}, ...); "
        f"largest part {biggest / 2**20:.1f} MiB"
    )
    print(
        f"write: median {statistics.median(times):.2f} s, min {min(times):.2f}, max {max(times):.2f} "
        f"over {repeat} runs after 1 warm-up (target < 5 s)"
    )
    print(f"peak Python memory: {small:.0f} KiB at {count // 10} URLs, {large:.0f} KiB at {count} URLs")


if __name__ == "__main__":
    main()
