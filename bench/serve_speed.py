"""What the whole product adds to `mkdocs serve` after an author edits one post (target: ≤ 1.3× plain).

Generates the 200-post blog of `build_speed.py` (both plugins and pinyin slugs; plain Material over
the same posts with the embeds rendered), then, in rounds that alternate the two, starts `mkdocs
serve` (livereload on, as authors run it) and times each of a few edits: from the moment a post's
Markdown is saved to the moment the browser's livereload request returns (the rebuild is done and
visible) and the page it then fetches shows the edit. Prints medians and spread of each and the
ratio. The fixed delays of MkDocs' watcher (it polls every 0.5 s) are in both. Usage::

    .venv/bin/python bench/serve_speed.py [--posts 200] [--rounds 3] [--edits 3]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from build_speed import generate, machine

TARGET = 1.3
POST = "post-7"
_EPOCH = re.compile(r"livereload\((\d+),\s*\d+\)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, timeout: float = 120) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read().decode("utf-8")


class Server:
    """`mkdocs serve` of one config, until `stop`."""

    def __init__(self, root: Path, config: str, source: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.source = source
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "BLOG_EXEC_MODE": "auto"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "-f", config, "-a", f"127.0.0.1:{self.port}"],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 600
        while True:  # the first build is done when the post is served
            try:
                _get(self.url + f"{POST}/", timeout=5)
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"mkdocs serve -f {config} did not start") from None
                time.sleep(0.2)

    def edit(self, number: int) -> float:
        """Seconds from saving an edit of the post to the reloaded page showing it."""
        page = self.url + f"{POST}/"
        epoch = _EPOCH.search(_get(page)).group(1)
        marker = f"编辑标记 {number} {time.time_ns()}"
        text = self.source.read_text(encoding="utf-8")
        start = time.perf_counter()
        self.source.write_text(f"{text}\n\n{marker}\n", encoding="utf-8")
        while True:
            _get(self.url + f"livereload/{epoch}/{number}")  # returns when a newer build is visible
            if marker in _get(page):
                return time.perf_counter() - start
            epoch = _EPOCH.search(_get(page)).group(1)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--edits", type=int, default=3, help="edits timed per server start")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="blog-serve-speed-"))
    try:
        generate(root, args.posts)
        variants = {"plain": ("plain.yml", root / "plain" / "posts" / f"{POST}.md"),
                    "full": ("mkdocs.yml", root / "posts" / "posts" / f"{POST}.md")}
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, (config, source) in variants.items():
                server = Server(root, config, source)
                try:
                    server.edit(0)  # warm-up: the first rebuild after start-up
                    times[name] += [server.edit(n) for n in range(1, args.edits + 1)]
                finally:
                    server.stop()
        print(f"`mkdocs serve` of {args.posts} posts, one post edited; {args.rounds} rounds alternating the "
              f"two, {args.edits} timed edits each after one warm-up edit; {machine()}")
        for name, values in times.items():
            q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
            print(f"  {name:5s} median {median:6.2f} s   IQR {q3 - q1:5.2f} s   min {min(values):6.2f} s   "
                  f"max {max(values):6.2f} s")
        ratio = statistics.median(times["full"]) / statistics.median(times["plain"])
        print(f"  ratio full/plain (medians): {ratio:.3f}  (target <= {TARGET})")
        return 0 if ratio <= TARGET else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
