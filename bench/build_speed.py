"""What the whole product adds to `mkdocs build`: both plugins against plain Material on the same posts.

Generates a Material blog of N posts (real Chinese prose: sentences of this repository's posts, 40
topics, keywords, tags and categories, links between posts) whose posts embed values, a table, a code
listing and an output from a few snippets, commits it to git (the seo plugin dates pages by their
history), runs the snippets once (`blog run`), then times `mkdocs build`, interleaved and repeated:

- ``plain``: Material (search, blog) over the same posts with the embeds rendered beforehand;
- ``snippets``: with the `snippets` plugin (exec_mode auto: it checks every key, executes nothing);
- ``full``: the product: `snippets` and `seo` (head tags, cards, related posts, sitemaps, feed, the
  audit) and pinyin slugs (Material's `post_slugify`), building again as an author does, with what
  the last build kept in `.cache/` (cards, slugs, and the memo of the pages it audited: a page whose
  HTML did not change is not audited again, `perfblog.seo.memo`);
- ``edited``: the same after one post's text changed since the last build (a sentence added): that
  post's page and the pages that show it are audited again, its words segmented (rjieba loaded);
- ``cold``: the same with the memo deleted before each build: every page parsed, segmented and
  audited, as in a first build or a CI that does not keep `.cache/`.

``edited`` and ``cold`` are printed with the targets beside them, but the exit status is that of
``full``: a rebuild of what the last build saw.

Prints medians and spread of wall time, CPU time (user + system of the build process: on a shared,
noisy machine the steadier of the two) and peak resident memory, and the ratios to plain. Targets:
snippets ≤ 1.15×, full ≤ 1.2× plain, full's peak memory ≤ plain's + 60 MiB.

``--growth`` instead builds the full product and plain Material on N and 10×N posts, interleaved, and
prints how time and memory grow (target for the product: 10× the posts in ≤ 11× the time). Usage::

    .venv/bin/python bench/build_speed.py [--posts 200] [--repeats 7] [--growth]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import interleaved
from prose import sentences

from perfblog.seo.memo import MEMO_FILE

SNIPPETS = 5
TOPICS = 40
TARGETS = {"snippets": 1.15, "full": 1.2}
MEMORY_BUDGET_MIB = 60
GROWTH_TARGET = 11.0
CONFIG = """site_name: 构建速度基准
site_url: https://example.com/
docs_dir: {docs}
site_dir: site-{name}
theme:
  name: material
  language: zh
markdown_extensions:
  - attr_list
  - md_in_html
  - tables
  - toc:
      permalink: true
  - pymdownx.highlight
  - pymdownx.superfences
plugins:
  - search
  - blog:
      blog_dir: .
      post_url_format: "{{slug}}"
{slugify}{extra}"""
SLUGIFY = "      post_slugify: !!python/name:perfblog.core.slug.slugify\n"
SNIPPETS_PLUGIN = """  - snippets:
      snippets_dir: snippets
      results_dir: snippets/_results
"""
SEO_PLUGIN = """  - seo:
      seo_author: 构建速度基准
      seo_slogan: 每个数字都来自真实运行的代码
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
title: {quoted_title}
date: 2026-{month:02d}-{day:02d}
slug: post-{i}
description: {description}
keywords:
  - 主题{topic}
  - 关键词{keyword}
categories:
  - 分类{category}
tags:
  - 标签{tag}
  - 标签{tag2}
---

# 主题{topic}实测第 {i} 篇：{title}

主题{topic}是本文的对象。{intro}片段 {s} 算出的总和是 <%= value("bench_{s}", "total", ",") %>，平均值为
<%= value("bench_{s}", "ratio", ".2f") %>。相关的还有[上一篇]({previous}.md)和[同主题的文章]({sibling}.md)，
背景见 [PyTorch 文档](https://docs.pytorch.org/docs/stable/index.html)。

<%= code("bench_{s}", "work") %>

<%= output("bench_{s}", "work") %>

<%= table("bench_{s}", "rows") %>

{sections}
"""


def post_text(i: int, posts: int, pool: list[str], rng: random.Random) -> str:
    """One post: mostly sentences of its topic's pool, a few of any topic."""
    topic = i % TOPICS
    own = pool[topic::TOPICS] or pool

    def paragraph(n: int) -> str:
        return "".join(rng.choice(own) if rng.random() < 0.75 else rng.choice(pool) for _ in range(n))

    sections = "\n\n".join(f"## 主题{topic}的第 {k + 1} 个问题\n\n{paragraph(4)}\n\n{paragraph(4)}"
                           for k in range(5))
    title = rng.choice(own)[:16].rstrip("，。、")
    description = f"第 {i} 篇关于主题{topic}的实测文章，{rng.choice(own)[:40]}"
    return POST.format(
        i=i, topic=topic, title=title, month=1 + i % 12, day=1 + i % 28,
        quoted_title=json.dumps(f"主题{topic}实测第 {i} 篇：{title}", ensure_ascii=False),
        description=json.dumps(description, ensure_ascii=False), keyword=rng.randrange(60),
        category=topic % 5, tag=topic % 12,
        tag2=rng.randrange(30), intro=paragraph(2), s=i % SNIPPETS, previous=f"post-{(i - 1) % posts}",
        sibling=f"post-{(i + TOPICS) % posts}", sections=sections,
    )  # fmt: skip


def generate(root: Path, posts: int) -> None:
    """The site with its snippets and posts, committed; `plain/` gets the posts with embeds rendered."""
    snippets = root / "snippets"
    snippets.mkdir(parents=True)
    for i in range(SNIPPETS):
        (snippets / f"bench_{i}.py").write_text(SNIPPET.format(i=i, n=1000 * (i + 1)), encoding="utf-8")
    for docs in ("posts", "plain"):
        (root / docs / "posts").mkdir(parents=True)
        (root / docs / "index.md").write_text("# 基准博客\n", encoding="utf-8")
    pool, rng = sentences(), random.Random(0)
    for i in range(posts):
        text = post_text(i, posts, pool, rng)
        (root / "posts" / "posts" / f"post-{i}.md").write_text(text, encoding="utf-8")
    configs = {"mkdocs.yml": ("posts", SLUGIFY, SNIPPETS_PLUGIN + SEO_PLUGIN),
               "snippets.yml": ("posts", "", SNIPPETS_PLUGIN), "plain.yml": ("plain", "", "")}
    for name, (docs, slugify, extra) in configs.items():
        config = CONFIG.format(docs=docs, name=Path(name).stem, slugify=slugify, extra=extra)
        (root / name).write_text(config, encoding="utf-8")
    (root / ".gitignore").write_text("site-*/\n.cache/\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "perfblog.cli", "run", "--device", "cpu"], cwd=root,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"blog run failed:\n{done.stderr}")
    prerender(root)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "benchmark site"]):
        subprocess.run([*git, *step], cwd=root, check=True)


def prerender(root: Path) -> None:
    """Write plain/ posts: the Markdown the plugin would hand to MkDocs, computed once, outside timing."""
    from perfblog.generator.build import Build
    from perfblog.generator.run.engine import Engine, Settings

    snippets = root / "snippets"
    build = Build(Engine(Settings(snippets, snippets / "_results", mode="frozen")), root)
    for src in sorted((root / "posts" / "posts").glob("*.md")):
        text = src.read_text(encoding="utf-8")
        end = text.index("\n---\n", 4) + 5
        head, body = text[:end], text[end:]
        rendered = build.render_page(body, str(src), f"{src.stem}/")
        (root / "plain" / "posts" / src.name).write_text(head + rendered, encoding="utf-8")


def timed_build(root: Path, config: str) -> interleaved.Run:
    """Wall and CPU seconds and peak memory of one `mkdocs build` process."""
    return interleaved.mkdocs_build(root, "-f", config, BLOG_EXEC_MODE="auto")


def edited_build(root: Path, edit: int) -> interleaved.Run:
    """The full product after a sentence is added to one post (a different one each time)."""
    post = root / "posts" / "posts" / f"post-{edit % 20}.md"
    with post.open("a", encoding="utf-8") as text:
        text.write(f"\n第 {edit} 次修改：这一句是基准测试在两次构建之间加上的。\n")
    return timed_build(root, "mkdocs.yml")


def cold_build(root: Path) -> interleaved.Run:
    """The full product after the build's memo (`perfblog.seo.memo`) is deleted: every page audited."""
    (root / MEMO_FILE).unlink(missing_ok=True)
    return timed_build(root, "mkdocs.yml")


def machine() -> str:
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}")


def compare(posts: int, repeats: int) -> bool:
    """Plain, snippets and full on the same posts; whether every target is met."""
    root = Path(tempfile.mkdtemp(prefix="blog-build-speed-"))
    try:
        generate(root, posts)
        variants = {"plain": "plain.yml", "snippets": "snippets.yml", "full": "mkdocs.yml"}
        timed = {name: lambda config=config: timed_build(root, config) for name, config in variants.items()}
        edits = itertools.count(1)
        timed["edited"] = lambda: edited_build(root, next(edits))
        timed["cold"] = lambda: cold_build(root)
        samples = interleaved.measure(timed, repeats)
        print(f"{posts} posts, {SNIPPETS} snippets, {repeats} interleaved repeats each after one warm-up; "
              f"`mkdocs build` as a process, interpreter start-up included; {machine()}")
        met = True
        for name, target in TARGETS.items():
            ratios = interleaved.report(samples, "plain", name, target)
            met &= min(ratios.values()) <= target
        met &= interleaved.memory(samples, "plain", "full", MEMORY_BUDGET_MIB) <= MEMORY_BUDGET_MIB
        for name, what in (("edited", "one post's text changed since the last build"),
                           ("cold", f"nothing remembered (a first build; a CI without {MEMO_FILE})")):
            print(f"  {name}: the full product, {what}:")
            interleaved.report(samples, "plain", name, TARGETS["full"])
            interleaved.memory(samples, "plain", name, MEMORY_BUDGET_MIB)
        print(f"  snippet runs during the timed builds: {json_report(root)}")
        return met
    finally:
        shutil.rmtree(root, ignore_errors=True)


def growth(posts: int, repeats: int) -> bool:
    """The full product on `posts` and 10× as many; whether time grows at most GROWTH_TARGET×."""
    roots = {n: Path(tempfile.mkdtemp(prefix=f"blog-build-growth-{n}-")) for n in (posts, 10 * posts)}
    try:
        for n, root in roots.items():
            generate(root, n)
        kinds = (("full", "mkdocs.yml"), ("plain", "plain.yml"))
        variants = {f"{kind} {n}": lambda root=root, config=config: timed_build(root, config)
                    for n, root in roots.items() for kind, config in kinds}
        samples = interleaved.measure(variants, repeats)
        print(f"the full product and plain Material on {posts} and {10 * posts} posts, {repeats} interleaved "
              f"repeats after one warm-up; {machine()}")
        met = True
        for kind in ("full", "plain"):
            small, large = f"{kind} {posts}", f"{kind} {10 * posts}"
            ratios = interleaved.report(samples, small, large, GROWTH_TARGET)
            peaks = [statistics.median(samples[(n, "peak")]) for n in (small, large)]
            print(f"  peak memory: {peaks[0]:.1f} MiB for {small} posts, {peaks[1]:.1f} MiB for {large} "
                  f"({peaks[1] / peaks[0]:.2f}x)")
            met &= kind != "full" or min(ratios.values()) <= GROWTH_TARGET
        return met
    finally:
        for root in roots.values():
            shutil.rmtree(root, ignore_errors=True)


def json_report(root: Path) -> str:
    data = json.loads((root / "site-mkdocs" / "_snippets" / "report.json").read_text(encoding="utf-8"))
    counts = data["counts"]
    return f"{counts.get('executed', 0)} executed, {counts.get('fresh', 0)} fresh of {len(data['snippets'])}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--growth", action="store_true", help="N against 10×N posts, the full product")
    parser.add_argument("--keep", type=Path, help="generate the site into this folder and stop")
    args = parser.parse_args()
    if args.keep:
        generate(args.keep, args.posts)
        return 0
    met = growth(args.posts, args.repeats) if args.growth else compare(args.posts, args.repeats)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
