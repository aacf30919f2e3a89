# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# blog:
#   timeout: 2400
#   cell_timeout: 2000
# ---

# %% [markdown]
# What a new process pays to compile, and what the compile caches save it. Three fresh Python processes
# compile the same block: the first with an empty Inductor cache directory (cold), the second with the
# directory the first filled (warm on-disk cache), the third with a second empty directory into which it
# loads the artifacts the first saved with `torch.compiler.save_cache_artifacts()`. Each child reports
# its own cache counters (the assertions) and its own times (single samples, labelled as what they are).

# %% name="setup"
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import torch

# blog: start remove-input
from perfblog.generator import glue, table

# blog: end remove-input
print("FX graph cache:", torch._inductor.config.fx_graph_cache)
print("AOTAutograd cache:", torch._functorch.config.enable_autograd_cache)
# blog: start hide-input
assert torch._inductor.config.fx_graph_cache and torch._functorch.config.enable_autograd_cache
# blog: end hide-input
# blog: start remove-input
glue("torch", torch.__version__)
# blog: end remove-input

# %% name="child"
CHILD = textwrap.dedent("""
    import json, sys, time
    started = time.perf_counter()
    import torch
    from torch._dynamo.utils import counters
    imported = time.perf_counter() - started
    load_from, save_to = sys.argv[1], sys.argv[2]
    loaded = {}
    if load_from:
        with open(load_from, "rb") as f:
            info = torch.compiler.load_cache_artifacts(f.read())
        loaded = {kind: len(keys) for kind, keys in info.artifacts.items()}

    class Block(torch.nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm = torch.nn.LayerNorm(dim)
            self.up = torch.nn.Linear(dim, 4 * dim)
            self.down = torch.nn.Linear(4 * dim, dim)

        def forward(self, x):
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    block = Block(128).to(device).eval()
    x = torch.randn(64, 128, device=device)
    with torch.no_grad():
        started = time.perf_counter()
        torch.compile(block)(x)
        if device == "cuda":
            torch.cuda.synchronize()
        first_call = time.perf_counter() - started
        hits = {"fxgraph": dict(counters["inductor"]), "aot_autograd": dict(counters["aot_autograd"])}
        torch._dynamo.reset()  # forget the compiled code, keep the process: what a same-process "cold" is
        started = time.perf_counter()
        torch.compile(block)(x)
        if device == "cuda":
            torch.cuda.synchronize()
        again = time.perf_counter() - started
    saved = {}
    if save_to:
        artifacts, info = torch.compiler.save_cache_artifacts()
        with open(save_to, "wb") as f:
            f.write(artifacts)
        saved = {kind: len(keys) for kind, keys in info.artifacts.items()}
    print(json.dumps({"import_s": imported, "first_call_s": first_call, "after_reset_s": again,
                      "counters": hits, "loaded": loaded, "saved": saved}))
""")


def fresh_process(cache_dir, load_from="", save_to=""):
    """Run CHILD in a new Python whose Inductor (and Triton) caches live in `cache_dir`."""
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache_dir),
               TRITON_CACHE_DIR=str(Path(cache_dir) / "triton"))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, str(load_from), str(save_to)], env=env,
                          capture_output=True, text=True, timeout=900, check=True)
    report = json.loads(done.stdout.splitlines()[-1])
    report["process_s"] = time.perf_counter() - started
    return report


def built_libraries(cache_dir):
    """Compiled shared objects (the C++ of CPU kernels) under a cache directory."""
    return {path.name for path in Path(cache_dir).rglob("*.so")}


# %% name="runs"
with tempfile.TemporaryDirectory() as first_dir, tempfile.TemporaryDirectory() as empty_dir:
    artifacts = Path(first_dir).parent / f"{Path(first_dir).name}.artifacts"
    cold = fresh_process(first_dir, save_to=artifacts)
    libraries_after_cold = built_libraries(first_dir)
    warm = fresh_process(first_dir)
    libraries_after_warm = built_libraries(first_dir)
    loaded = fresh_process(empty_dir, load_from=artifacts)
    libraries_after_load = built_libraries(empty_dir)
    artifact_bytes = artifacts.stat().st_size
    artifacts.unlink()
for label, report in (("cold", cold), ("warm disk cache", warm), ("loaded artifacts", loaded)):
    print(f"{label:17} first call {report['first_call_s']:6.2f} s  {report['counters']}")
print("artifacts saved:", cold["saved"], f"({artifact_bytes:,} bytes); loaded:", loaded["loaded"])
# blog: start hide-input
reports = {"cold": cold, "warm": warm, "loaded": loaded}
fx = {name: report["counters"]["fxgraph"] for name, report in reports.items()}
aot = {name: report["counters"]["aot_autograd"] for name, report in reports.items()}
assert fx["cold"].get("fxgraph_cache_miss", 0) >= 1 and not fx["cold"].get("fxgraph_cache_hit"), fx
assert aot["cold"].get("autograd_cache_miss", 0) >= 1 and not aot["cold"].get("autograd_cache_hit"), aot
for name in ("warm", "loaded"):  # a new process, nothing compiled in it yet: both caches answer
    assert fx[name].get("fxgraph_cache_hit", 0) >= 1 and not fx[name].get("fxgraph_cache_miss"), fx
    assert aot[name].get("autograd_cache_hit", 0) >= 1 and not aot[name].get("autograd_cache_miss"), aot
assert cold["saved"].get("inductor", 0) >= 1 and cold["saved"].get("aot_autograd", 0) >= 1, cold["saved"]
assert loaded["loaded"] == cold["saved"], (loaded["loaded"], cold["saved"])
# A cache entry holds the wrapper's source, not the loaded code: a process whose directory lacks the
# file writes it out again (and on CPU builds the C++ libraries again; its directory started empty).
assert fx["loaded"].get("fxgraph_lookup_write_file", 0) >= 1, fx
assert not fx["warm"].get("fxgraph_lookup_write_file"), fx
if not torch.cuda.is_available():
    assert libraries_after_cold and libraries_after_warm == libraries_after_cold
    assert libraries_after_load == libraries_after_cold, (libraries_after_load, libraries_after_cold)
# blog: end hide-input
# blog: start remove-input
rows, rows_en = [], []
labels = (("cold", "新进程，空缓存目录（冷）", "new process, empty cache directory (cold)"),
          ("warm", "新进程，第一个进程填好的缓存目录", "new process, the directory the first one filled"),
          ("loaded", "新进程，空目录 + load_cache_artifacts",
           "new process, empty directory + load_cache_artifacts"))
zh_columns = ("进程", "import torch（s）", "首次调用（s）", "同进程 reset 后再编译（s）", "进程总耗时（s）",
              "缓存命中 FX/AOT")
en_columns = ("process", "import torch (s)", "first call (s)", "again after reset, same process (s)",
              "whole process (s)", "cache hits FX/AOT")
for (key, zh, en), report in zip(labels, (cold, warm, loaded), strict=True):
    counted = report["counters"]
    hits = "{}/{}".format(counted["fxgraph"].get("fxgraph_cache_hit", 0),
                          counted["aot_autograd"].get("autograd_cache_hit", 0))
    numbers = (round(report["import_s"], 2), round(report["first_call_s"], 2),
               round(report["after_reset_s"], 2), round(report["process_s"], 2), hits)
    rows.append(dict(zip(zh_columns, (zh, *numbers), strict=True)))
    rows_en.append(dict(zip(en_columns, (en, *numbers), strict=True)))
    glue(f"{key}.first_call_s", round(report["first_call_s"], 2), unit="s")
    glue(f"{key}.after_reset_s", round(report["after_reset_s"], 2), unit="s")
    glue(f"{key}.process_s", round(report["process_s"], 1), unit="s")
table("processes", rows,
      caption="每行一个新的 Python 进程，各一次测量；"
              "首次调用包括 Dynamo、AOTAutograd 与 Inductor（或读缓存）")
table("processes.en", rows_en, caption="One new Python process per row, one sample each; the first call "
                                        "includes Dynamo, AOTAutograd and Inductor (or reading the caches)")
glue("artifact_kib", round(artifact_bytes / 1024, 1), unit="KiB")
# blog: end remove-input

# %% name="pgo"
# Automatic dynamic shapes remember, per code object, which dimensions turned out dynamic. The profile
# (PGO) is written into the cache directory at exit, and read by the next process, but only for a job
# that names itself: torch.compiler.config.job_id, or the environment variable TORCH_COMPILE_JOB_ID.
PGO_CHILD = textwrap.dedent("""
    import torch
    from torch._dynamo.utils import counters

    def f(x):
        return torch.nn.functional.gelu(x * 2 + 1).sum(-1)

    compiled = torch.compile(f, backend="eager")  # Dynamo decides static or dynamic, not the backend
    graphs = []
    for n in (4, 8):
        compiled(torch.randn(n, 16))
        graphs.append(counters["stats"]["unique_graphs"])
    print(graphs)
""")


def graphs_per_process(cache_dir, job_id=None):
    """Graphs compiled after each call, in a new process with the given cache directory and job id."""
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache_dir))
    env.pop("TORCH_COMPILE_JOB_ID", None)
    if job_id:
        env["TORCH_COMPILE_JOB_ID"] = job_id
    done = subprocess.run([sys.executable, "-c", PGO_CHILD], env=env, capture_output=True, text=True,
                          timeout=600, check=True)
    return json.loads(done.stdout.splitlines()[-1])


with tempfile.TemporaryDirectory() as named, tempfile.TemporaryDirectory() as unnamed:
    with_job = [graphs_per_process(named, job_id="blog-demo") for _ in range(2)]
    without_job = [graphs_per_process(unnamed) for _ in range(2)]
print("TORCH_COMPILE_JOB_ID set, same directory:", with_job)
print("no job id, same directory:              ", without_job)
# blog: start hide-input
assert with_job == [[1, 2], [1, 1]], with_job  # the second process compiles the dynamic graph at once
assert without_job == [[1, 2], [1, 2]], without_job  # no job id: no profile, the same two compiles again
# blog: end hide-input
# blog: start remove-input
glue("pgo.first", str(with_job[0]))
glue("pgo.second", str(with_job[1]))
# blog: end remove-input
