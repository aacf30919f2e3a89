"""Draw findings at random from the audit of other people's blogs, to be checked by hand (issue 25).

Builds each blog into a temporary folder: a fixture blog by name (tests/data/blogs/, as tests/blogs.py
copies it: `snippets` and `seo` added, no page edited), or a whole blog's checkout by its path, its
mkdocs.yml already naming both plugins, built by the interpreter of the blog's own environment (which
has its other plugins: ``PATH::PYTHON``, else ``--python``). It audits the built site as `blog seo
audit --format json` does, prints the findings per rule, then draws ``--sample`` findings across all
blogs and rules with a fixed seed and prints each with the lines of the built page around what the
finding names, for a person to judge. docs/benchmarks.md quotes the draw and the
verdicts (a false alarm is a finding whose fix would not make the page better for a reader or a search
engine, or that names something that is not there)::

    .venv/bin/python bench/false_alarms.py                 # the three fixture blogs, 20 findings, seed 25
    .venv/bin/python bench/false_alarms.py --sample 30 --seed 7 wcowin
    .venv/bin/python bench/false_alarms.py ../kgarden::../kgarden-env/bin/python ../wcowin::../wc/bin/python

A trimmed fixture links to pages that were not copied: its `link-broken` findings are the trimming's,
so measure a false-alarm rate on whole blogs.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import blogs  # noqa: E402  (tests/blogs.py: the fixture blogs and how a test copies them)


def audit(name: str, work: Path, python: str) -> list[dict]:
    """The findings of blog ``name`` (a fixture's name or a checkout's path) built with both plugins,
    each with its blog's name."""
    if name in blogs.BLOGS:
        root, python, site = blogs.copy(name, work), sys.executable, work / name / "site"
    else:
        folder, _, own = name.partition("::")  # a checkout, and the interpreter of its own environment
        root, site, python = Path(folder).resolve(), work / Path(folder).name / "site", own or python
    built = subprocess.run([python, "-m", "mkdocs", "build", "-q", "-d", str(site)],
                           cwd=root, capture_output=True, text=True, timeout=1800)
    if built.returncode != 0:
        sys.exit(f"{name}: the build failed:\n{built.stderr[-2000:]}")
    done = subprocess.run([sys.executable, "-m", "perfblog.cli", "seo", "audit", "--format", "json",
                           str(site)], cwd=root, capture_output=True, text=True, timeout=900)
    if not done.stdout.startswith("{"):
        sys.exit(f"{name}: blog seo audit failed:\n{done.stderr[-2000:]}")
    findings = json.loads(done.stdout)["findings"]  # each: page, rule, severity, message
    return [{**finding, "blog": site.parent.name, "site": str(site)} for finding in findings]


def context(finding: dict, lines: int = 3) -> str:
    """The lines of the built page that hold the longest quoted or URL-like word of the message."""
    path = Path(finding["site"]) / finding["page"]
    if not path.is_file():
        return "(no such file in the site)"
    text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    words = sorted((w.strip("'\"“”‘’()[],.:") for w in finding["message"].split()), key=len, reverse=True)
    for word in words[:3]:
        hits = [n for n, line in enumerate(text) if word and word in line]
        if hits and len(word) > 4:
            n = hits[0]
            return "\n".join(f"    {m + 1}: {text[m][:200]}" for m in range(max(0, n - lines),
                                                                          min(len(text), n + lines + 1)))
    return "(nothing quoted to look up: open the page)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("blogs", nargs="*", default=sorted(blogs.BLOGS),
                        help="fixture blogs by name, or blog checkouts by path (default: every fixture)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that builds a checkout")
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--seed", type=int, default=25)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="false-alarms-") as folder:
        found = [f for name in args.blogs for f in audit(name, Path(folder), args.python)]
        per_rule = collections.Counter((f["blog"], f["rule"], f["severity"]) for f in found)
        print(f"{len(found)} findings on {', '.join(args.blogs)}")
        for (blog, rule, severity), count in sorted(per_rule.items()):
            print(f"  {blog:10} {rule:32} {severity:8} {count}")
        drawn = random.Random(args.seed).sample(sorted(found, key=lambda f: json.dumps(f, sort_keys=True)),
                                               min(args.sample, len(found)))
        print(f"\n{len(drawn)} drawn (seed {args.seed}):")
        for n, finding in enumerate(drawn, 1):
            print(f"\n#{n} {finding['blog']} {finding['page']} {finding['rule']} ({finding['severity']})")
            print(f"  {finding['message']}")
            print(context(finding))


if __name__ == "__main__":
    main()
