"""The Ray executor against the local one (issue 20), on a local Ray cluster of 2 worker processes.

Starts a one-node Ray cluster in this process (loopback only, 2 CPUs, offering this machine's CPU class)
and times `blog run --force` of a folder of snippets as a subprocess, with the local serial executor and
with `--executor ray`, interleaved and repeated (medians, min and max of wall time). ``ray`` connects to
the head's address directly, as a driver inside the cluster's network does; ``ray client`` through Ray's
client (`--address ray://...`), as the author's machine outside it does:

- ``sleep``: 8 behaviour-only snippets that each wait 3 s (target: Ray <= 0.65x the local executor);
- ``cpu``: 8 behaviour-only snippets that each spin the CPU for about 3 s (measured: 2 cores bound it);
- ``overhead``: 2 and 10 trivial timing snippets (which run one at a time on both executors): the slope
  over the 8 extra snippets is the cost of one snippet, the intercept the fixed cost of a run
  (connecting, packaging); Ray's per-task overhead is its slope less the local one.

Each `blog run` starts fresh kernels; with the Ray executor it connects through Ray's client, ships the
snippets dir and the perfblog package once, and stores results as they come back. Usage::

    .venv/bin/python bench/cluster_speed.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Loopback only, a token of its own (Ray reads these when it is imported).
os.environ.update({"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "token",
                   "RAY_AUTH_TOKEN": secrets.token_hex(16), "RAY_USAGE_STATS_ENABLED": "0"})

from ray.cluster_utils import Cluster

from perfblog.generator.run.cluster import labels

TARGET = 0.65
SLEEP = "import time\ntime.sleep(3)\n"
SPIN = "import time\nend = time.process_time() + 3\nwhile time.process_time() < end:\n    pass\n"
TRIVIAL = "x = 1\n"


def folder(work: Path, name: str, count: int, body: str, purpose: str | None) -> Path:
    """A snippets folder of ``count`` snippets with one cell each."""
    snippets = work / name / "snippets"
    snippets.mkdir(parents=True)
    header = f"# ---\n# blog: {{purpose: {purpose}}}\n# ---\n\n" if purpose else ""
    for i in range(count):
        (snippets / f"s{i:02d}.py").write_text(f"{header}# %% name=\"main\"\n{body}")
    return snippets


def blog_run(snippets: Path, *extra: str) -> float:
    """Wall seconds of one `blog run --force` of the folder; SystemExit when it fails."""
    command = [sys.executable, "-m", "perfblog.cli", "run", "--force", "--device", "cpu",
               "--snippets-dir", str(snippets), *extra]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=snippets.parent)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    return elapsed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(variants: dict[str, tuple[Path, tuple[str, ...]]], repeats: int) -> dict[str, list[float]]:
    """Each variant once to warm up, then ``repeats`` rounds of all of them in turn."""
    for snippets, extra in variants.values():
        blog_run(snippets, *extra)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, (snippets, extra) in variants.items():
            samples[name].append(blog_run(snippets, *extra))
    return samples


def show(samples: dict[str, list[float]]) -> dict[str, float]:
    medians = {}
    for name, values in samples.items():
        medians[name] = statistics.median(values)
        print(f"  {name:10s} median {medians[name]:6.2f} s   min {min(values):6.2f} s   "
              f"max {max(values):6.2f} s")
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; Ray cluster: one node, 2 CPUs (2 worker processes), offering {labels()}")
    port = free_port()
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 2, "resources": labels(), "ray_client_server_port": port,
        "runtime_env_agent_port": free_port(), "include_dashboard": False})
    ray = ("--executor", "ray", "--address", cluster.address)
    client = ("--executor", "ray", "--address", f"ray://127.0.0.1:{port}")
    try:
        with tempfile.TemporaryDirectory(prefix="cluster-speed-") as tmp:
            work = Path(tmp)
            for case, body, doing in (("sleep", SLEEP, "waiting"), ("cpu", SPIN, "spinning")):
                snippets = folder(work, case, 8, body, "behaviour")
                print(f"\n{case}: 8 behaviour-only snippets ({doing} 3 s each)")
                variants = {"local": (snippets, ()), "ray": (snippets, ray)}
                if case == "sleep":
                    variants["ray client"] = (snippets, client)
                medians = show(timed(variants, args.repeats))
                ratio = medians["ray"] / medians["local"]
                verdict = "met" if ratio <= TARGET else "NOT met"
                print(f"  ratio ray/local (medians): {ratio:.3f}"
                      + (f" (target <= {TARGET}: {verdict}); ray client/local: "
                         f"{medians['ray client'] / medians['local']:.3f}" if case == "sleep" else ""))
            few, many = folder(work, "few", 2, TRIVIAL, None), folder(work, "many", 10, TRIVIAL, None)
            print("\noverhead: 2 and 10 trivial timing snippets (one at a time on both executors)")
            medians = show(timed({"local 2": (few, ()), "local 10": (many, ()), "ray 2": (few, ray),
                                  "ray 10": (many, ray)}, args.repeats))
            slope = {name: (medians[f"{name} 10"] - medians[f"{name} 2"]) / 8 for name in ("local", "ray")}
            fixed = {name: medians[f"{name} 2"] - 2 * slope[name] for name in ("local", "ray")}
            for name in ("local", "ray"):
                print(f"  {name:5s} per snippet {slope[name]:5.2f} s, fixed per run {fixed[name]:5.2f} s")
            print(f"  Ray's overhead per task: {slope['ray'] - slope['local']:+.2f} s; per run: "
                  f"{fixed['ray'] - fixed['local']:+.2f} s (importing Ray, connecting, packaging, starting "
                  f"worker processes)")
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
