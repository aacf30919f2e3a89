"""How much the `snippets` plugin adds to `mkdocs build` when every result is fresh (target: <= 1.15x).

Generates a 200-post Material blog whose posts embed values, a table, a code listing and an output from
a few snippets, runs the snippets once (`blog run`), then times, interleaved and repeated:

- ``snippets``: `mkdocs build` with the plugin (exec_mode auto: it checks every key, executes nothing);
- ``plain``: `mkdocs build` without it, over the same posts with the embeds rendered beforehand.

Prints the median and spread of each and the ratio of medians, for wall time and for CPU time (user +
system of the build process): on a shared, noisy machine the CPU time is the steadier of the two. Usage::

    .venv/bin/python bench/build_speed.py [--posts 200] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import interleaved

SNIPPETS = 5
CONFIG = """site_name: 构建速度基准
site_url: https://example.com/
docs_dir: {docs}
site_dir: site-{docs}
theme:
  name: material
  language: zh
markdown_extensions:
  - attr_list
  - md_in_html
  - tables
  - pymdownx.highlight
  - pymdownx.superfences
plugins:
  - search
  - blog:
      blog_dir: .
      post_url_format: "{{slug}}"
{extra}"""
PLUGIN = """  - snippets:
      snippets_dir: snippets
      results_dir: snippets/_results
"""
SNIPPET = '''# %% [markdown]
# Benchmark snippet {i}.

# %% name="work"
from perfblog.generator import glue, table
total = sum(k * k for k in range({n}))
print("total", total)

# %% name="record" hide=true
glue("total", total)
glue("ratio", total / {n})
table("rows", [{{"k": k, "square": k * k}} for k in range(5)], caption="squares")
'''
POST = """---
title: 基准文章 {i}
date: 2026-11-{day:02d}
slug: post-{i}
description: 第 {i} 篇基准文章，用来测量构建速度。
---

# 基准文章 {i}

## 正文

这一段说明片段 {s} 算出的总和是 <%= value("bench_{s}", "total", ",") %>，平均值为
<%= value("bench_{s}", "ratio", ".2f") %>。下面是代码、输出和表格。

<%= code("bench_{s}", "work") %>

<%= output("bench_{s}", "work") %>

<%= table("bench_{s}", "rows") %>

{filler}
"""
FILLER = "\n\n".join(f"### 小节 {k}\n\n" + "这是一段用来占位的中文正文，让页面接近真实文章的长度。" * 6
                     for k in range(6))


def generate(root: Path, posts: int) -> None:
    """The site with its snippets and posts; `plain/` gets the same posts with embeds rendered."""
    snippets = root / "snippets"
    snippets.mkdir(parents=True)
    for i in range(SNIPPETS):
        (snippets / f"bench_{i}.py").write_text(SNIPPET.format(i=i, n=1000 * (i + 1)), encoding="utf-8")
    for docs in ("posts", "plain"):
        (root / docs / "posts").mkdir(parents=True)
        (root / docs / "index.md").write_text("# 基准博客\n", encoding="utf-8")
    for i in range(posts):
        text = POST.format(i=i, day=1 + i % 28, s=i % SNIPPETS, filler=FILLER)
        (root / "posts" / "posts" / f"post-{i}.md").write_text(text, encoding="utf-8")
    (root / "mkdocs.yml").write_text(CONFIG.format(docs="posts", extra=PLUGIN), encoding="utf-8")
    (root / "plain.yml").write_text(CONFIG.format(docs="plain", extra=""), encoding="utf-8")


def prerender(root: Path) -> None:
    """Write plain/ posts: the Markdown the plugin would hand to MkDocs, computed once, outside timing."""
    from perfblog.generator.build import Build
    from perfblog.generator.engine import Engine, Settings

    snippets = root / "snippets"
    build = Build(Engine(Settings(snippets, snippets / "_results", mode="frozen")), root)
    for src in sorted((root / "posts" / "posts").glob("*.md")):
        text = src.read_text(encoding="utf-8")
        end = text.index("\n---\n", 4) + 5
        head, body = text[:end], text[end:]
        rendered = build.renderer.render(body, str(src), 0, f"{src.stem}/")
        (root / "plain" / "posts" / src.name).write_text(head + rendered, encoding="utf-8")


def timed_build(root: Path, config: str) -> tuple[float, float]:
    """Wall and CPU seconds of one `mkdocs build` process."""
    return interleaved.mkdocs_build(root, "-f", config, BLOG_EXEC_MODE="auto")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="blog-build-speed-"))
    try:
        generate(root, args.posts)
        done = subprocess.run([sys.executable, "-m", "perfblog.core.cli", "run", "--device", "cpu"], cwd=root,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"blog run failed:\n{done.stderr}")
        prerender(root)
        samples = interleaved.measure({"plain": lambda: timed_build(root, "plain.yml"),
                                       "snippets": lambda: timed_build(root, "mkdocs.yml")}, args.repeats)
        print(f"{args.posts} posts, {SNIPPETS} snippets, {args.repeats} interleaved repeats each after one "
              f"warm-up; `mkdocs build` as a process, interpreter start-up included; {os.cpu_count()} cores; "
              f"load average {os.getloadavg()[0]:.1f}")
        ratios = interleaved.report(samples, "plain", "snippets", 1.15)
        print(f"  snippet runs during the timed builds: {json_report(root)}")
        return 0 if min(ratios.values()) <= 1.15 else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


def json_report(root: Path) -> str:
    import json

    data = json.loads((root / "site-posts" / "_snippets" / "report.json").read_text(encoding="utf-8"))
    counts = data["counts"]
    return f"{counts.get('executed', 0)} executed, {counts.get('fresh', 0)} fresh of {len(data['snippets'])}"


if __name__ == "__main__":
    sys.exit(main())
