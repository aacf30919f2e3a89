"""What the plugins cost a real blog's build: plain Material against ours cold (no cache folder) and warm.

    python bench/real_blogs.py BLOG_DIR [--plain mkdocs.plain.yml] [--ours mkdocs.yml] [--repeat 3]

BLOG_DIR is a checkout of someone's MkDocs blog with two configs: the blog's own (`--plain`) and the same
with `- snippets` and `- seo` added (`--ours`), as tests/blogs.py's `add_plugins` writes them. Run it with the
Python of the blog's environment (the one with the blog's plugins and perfblog), or name its `mkdocs`
with `--mkdocs`. Each round builds plain, then ours with the cache folder removed (cold, as a CI runner
without a cache starts), then ours again (warm); rounds are interleaved so drift on a shared machine
falls on all three alike. Each build runs in its own wrapper process, so its wall time and peak memory
(`resource.getrusage(RUSAGE_CHILDREN)`: the largest process of the build, its worker processes included) are
its own. Medians are reported, with each build's time, and the ratio to plain (targets: cold ≤ 1.5x,
warm ≤ 1.2x).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

#: Runs one build and prints its wall time and the peak RSS of its largest process, as JSON.
_WRAPPER = """
import ctypes, json, os, resource, subprocess, sys, time
try:  # orphans of the build (the worker pool's fork server, reparented when the build exits) come here
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
except (OSError, AttributeError):
    pass
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - start
while True:  # reap them, so their CPU time counts as the build's
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
used = resource.getrusage(resource.RUSAGE_CHILDREN)
peak = used.ru_maxrss * 1024  # KiB on Linux
cpu = used.ru_utime + used.ru_stime
tail = done.stderr[-2000:]
print(json.dumps({"rc": done.returncode, "wall_s": wall, "cpu_s": cpu, "peak_bytes": peak, "tail": tail}))
"""
VARIANTS = ("plain", "cold", "warm")
TARGETS = {"cold": 1.5, "warm": 1.2}
CACHE = Path(".cache/perfblog")  # core.cache.CACHE_DIR: the folder a cold build starts without


def _say(line: str) -> None:
    print(line, flush=True)  # each build as it ends, also into a file


def measure(command: list[str], cwd: Path) -> dict:
    """One build in a fresh wrapper process: {"rc", "wall_s", "cpu_s", "peak_bytes", "tail"}: its CPU time is
    that of every process of the build (its workers too), the measure a loaded machine disturbs least."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *command], cwd=cwd, env=env, capture_output=True,
                         text=True, check=True)  # fmt: skip
    return json.loads(out.stdout)


def rounds(blog: Path, mkdocs: str, plain: str, ours: str, repeat: int,
           log=_say) -> tuple[dict[str, list[dict]], int]:
    """`repeat` interleaved rounds of plain, cold and warm builds of `blog`: each build's measurement,
    and the number of HTML pages of the plain site."""
    results: dict[str, list[dict]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="real-blogs-") as scratch:
        for number in range(1, repeat + 1):
            for name in VARIANTS:
                config = plain if name == "plain" else ours
                if name == "cold":
                    shutil.rmtree(blog / CACHE, ignore_errors=True)
                site = Path(scratch) / name
                run = measure([mkdocs, "build", "-q", "-f", config, "-d", str(site)], blog)
                if run["rc"] != 0:
                    raise SystemExit(f"{blog.name}: {name} build failed (rc {run['rc']}):\n{run['tail']}")
                results[name].append(run)
                mib = run["peak_bytes"] / 2**20
                log(f"  round {number}: {name:5} {run['wall_s']:7.1f} s  CPU {run['cpu_s']:7.1f} s  "
                    f"{mib:6.0f} MiB")
        pages = sum(1 for _ in (Path(scratch) / "plain").rglob("*.html"))
    return results, pages


def summary(blog: str, pages: int, results: dict[str, list[dict]]) -> str:
    """The table docs/benchmarks.md quotes: medians of wall and CPU time, their ratios to plain, and whether
    the targets (on wall time) are met."""
    plain_wall = statistics.median(r["wall_s"] for r in results["plain"])
    plain_cpu = statistics.median(r["cpu_s"] for r in results["plain"])
    lines = [f"{blog}: {pages} HTML pages, {len(results['plain'])} rounds, medians",
             "| build | wall (s) | each round (s) | CPU (s) | peak RSS (MiB) | wall vs plain | CPU vs plain "
             "| target |",
             "|---|---|---|---|---|---|---|---|"]
    for name in VARIANTS:
        walls = [r["wall_s"] for r in results[name]]
        wall, cpu = statistics.median(walls), statistics.median(r["cpu_s"] for r in results[name])
        peak = statistics.median(r["peak_bytes"] for r in results[name]) / 2**20
        target = TARGETS.get(name)
        met = target is not None and wall / plain_wall <= target
        verdict = "" if target is None else f"≤ {target}x: {'met' if met else 'NOT met'}"
        each = ", ".join(f"{w:.1f}" for w in walls)
        lines.append(f"| {name} | {wall:.1f} | {each} | {cpu:.1f} | {peak:.0f} | {wall / plain_wall:.2f}x | "
                     f"{cpu / plain_cpu:.2f}x | {verdict} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("blog", type=Path, help="the blog's folder (its mkdocs.yml and docs)")
    parser.add_argument("--plain", default="mkdocs.plain.yml", help="the blog's own config (none of ours)")
    parser.add_argument("--ours", default="mkdocs.yml", help="the config with `snippets` and `seo` added")
    parser.add_argument("--mkdocs", default=str(Path(sys.executable).with_name("mkdocs")),
                        help="the mkdocs of the blog's environment (default: beside this Python)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    args = parser.parse_args(argv)
    blog = args.blog.resolve()
    for config in (args.plain, args.ours):
        if not (blog / config).is_file():
            raise SystemExit(f"{blog / config}: no such config (see this script's docstring)")
    print(f"{blog.name}: {args.repeat} rounds of plain, cold, warm on {os.cpu_count()} cores "
          f"(load average {os.getloadavg()[0]:.1f})")
    results, pages = rounds(blog, args.mkdocs, args.plain, args.ours, args.repeat)
    print(summary(blog.name, pages, results))
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps({"blog": blog.name, "pages": pages, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
