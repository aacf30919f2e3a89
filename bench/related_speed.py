"""What ranking related posts costs a build, on 200 and 2,000 posts (issue 17: 2,000 ≤ 11× 200).

Generates posts of real Chinese technical prose (sentences drawn from this repository's posts), each
about one of 40 topics (its sentences mostly from that topic's pool, so similar posts exist), with
keywords, tags and categories from topic vocabularies, as `perfblog.seo.related.Post`s with the
rendered HTML's prose. Times `related.rank` (segmentation, TF-IDF, the inverted index, every post's
block): a warm-up, then repeats, interleaved; prints the median and spread of each size and the ratio.
The segmenter's dictionary is loaded before timing (once per build, in any build that audits).

    .venv/bin/python bench/related_speed.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from prose import sentences

from perfblog.seo import related, text

TOPICS = 40


def posts(count: int, pool: list[str], seed: int = 0) -> list[related.Post]:
    rng = random.Random(seed)
    shuffled = pool[:]
    rng.shuffle(shuffled)
    topics = [shuffled[i::TOPICS] for i in range(TOPICS)]
    made = []
    for i in range(count):
        topic = i % TOPICS
        own = [rng.choice(topics[topic]) for _ in range(24)] + [rng.choice(pool) for _ in range(8)]
        made.append(related.Post(
            key=f"posts/p{i}.md", url=f"p{i}/", title=f"第 {i} 篇", language="zh-CN",
            date=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}",
            text=related.prose("".join(f"<p>{s}</p>" for s in own)),
            keywords=frozenset({f"主题{topic}", f"关键词{rng.randrange(60)}"}),
            tags=frozenset({f"标签{topic % 12}", f"标签{rng.randrange(30)}"}),
            categories=frozenset({f"分类{topic % 5}"}),
        ))  # fmt: skip
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    pool = sentences()
    segmenter = text.default_segmenter()
    sizes = {n: posts(n, pool) for n in (200, 2000)}
    chars = {n: sum(len(p.text) for p in ps) for n, ps in sizes.items()}
    for ps in sizes.values():  # warm-up
        related.rank(ps, segmenter=segmenter)
    times: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(args.repeats):
        for n, ps in sizes.items():
            start = time.perf_counter()
            blocks = related.rank(ps, segmenter=segmenter)
            times[n].append(time.perf_counter() - start)
            assert len(blocks) == n and all(len(b) == related.COUNT for b in blocks.values())
    print(f"related.rank, {len(pool)} source sentences, {args.repeats} repeats after a warm-up")
    for n, ts in times.items():
        q = statistics.quantiles(ts, n=4) if len(ts) > 1 else [ts[0]] * 3
        print(f"  {n:>5} posts ({chars[n] / 1e6:.1f} M chars): median {statistics.median(ts):.3f} s, "
              f"IQR {q[0]:.3f}–{q[2]:.3f} s, {1e3 * statistics.median(ts) / n:.2f} ms a post")
    ratio = statistics.median(times[2000]) / statistics.median(times[200])
    print(f"  2000 / 200 posts: {ratio:.1f}x (linear would be 10x)")


if __name__ == "__main__":
    main()
