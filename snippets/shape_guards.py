# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# `if x.shape[0] > 16:` is not a graph break. Shapes are known while tracing, so Dynamo takes the branch
# and installs a guard; when a later input fails the guard, the function is recompiled. Counted over the
# same batch sizes for dynamic=None, True and False, with the recompile reasons Dynamo gives.

# %% name="helpers" tags=["hide-input"]
import functools
from types import SimpleNamespace

import torch
from torch._dynamo.utils import clear_compilation_metrics, counters, get_compilation_metrics

# blog: start remove-input
from perfblog.generator import glue, table, target_device

# blog: end remove-input
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# blog: start remove-input
assert target_device() == DEVICE
glue("torch", torch.__version__)
# blog: end remove-input


def first_line(text):
    return str(text).strip().splitlines()[0]


def count_compiles(run):
    """Call `run()` and count what Dynamo did meanwhile: graphs compiled, graph breaks, recompilations."""
    counters.clear()
    clear_compilation_metrics()
    run()
    breaks = counters["graph_break"] + counters["unimplemented"]  # a break on tensor data lands in the latter
    reasons = [m.recompile_reason for m in get_compilation_metrics() if m.recompile_reason]  # failed guards
    return SimpleNamespace(graphs=counters["stats"]["unique_graphs"], graph_breaks=sum(breaks.values()),
                           recompile_reasons=reasons)


# %% name="setup"
SIZES = [8, 32, 4, 64, 12]
# blog: start remove-input
glue("sizes", str(SIZES))
# blog: end remove-input


def head(x):
    if x.shape[0] > 16:  # a shape, not data: a guard, not a graph break
        return x * 2
    return x + 1


def guard_text(reason):
    """A recompile reason without the source comment Dynamo appends (a temporary kernel file path)."""
    return first_line(reason).split("#")[0].strip()


def call_each_size(compiled):
    return [compiled(torch.randn(n, 4, device=DEVICE)) for n in SIZES]


# %% name="guards"
rows = {}
for dynamic in (None, True, False):
    torch._dynamo.reset()
    compiled = torch.compile(head, fullgraph=True, dynamic=dynamic, backend="eager")
    rows[dynamic] = stats = count_compiles(functools.partial(call_each_size, compiled))
    print(f"dynamic={dynamic!s:5} graphs={stats.graphs} breaks={stats.graph_breaks} "
          f"recompiles={len(stats.recompile_reasons)}")
    for reason in stats.recompile_reasons:
        print("    ", first_line(reason))
# blog: start hide-input
assert all(s.graph_breaks == 0 for s in rows.values())
assert (rows[None].graphs, rows[True].graphs, rows[False].graphs) == (3, 2, 5), rows
assert "size mismatch at index 0" in rows[None].recompile_reasons[0]
assert "x.size()[0]" in rows[None].recompile_reasons[1]
# blog: end hide-input
# blog: start remove-input
caption = f"if x.shape[0] > 16，fullgraph=True，backend='eager'，批大小依次为 {SIZES}"
table(
    "recompiles",
    [{"dynamic 设置": str(d), "图数": s.graphs, "图断裂": s.graph_breaks, "重编译": len(s.recompile_reasons),
      "重编译原因（失败的守卫）": "\n".join(guard_text(r) for r in s.recompile_reasons)}
     for d, s in rows.items()],
    caption=caption,
    translations={"en": {"dynamic 设置": "dynamic", "图数": "graphs", "图断裂": "graph breaks",
                         "重编译": "recompiles",
                         "重编译原因（失败的守卫）": "recompile reasons (failed guards)",
                         caption: f"if x.shape[0] > 16, fullgraph=True, backend='eager', batch sizes {SIZES} "
                                  "in turn"}},
)
glue("none.graphs", rows[None].graphs)
glue("true.graphs", rows[True].graphs)
glue("false.graphs", rows[False].graphs)
glue("breaks", 0)
glue("none.reason_1", guard_text(rows[None].recompile_reasons[0]))
glue("none.reason_2", guard_text(rows[None].recompile_reasons[1]))
# blog: end remove-input
