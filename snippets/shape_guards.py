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

# %% name="setup"
import functools

import torch

from perfblog.generator import glue, table, target_device
from perfblog.generator.bench import count_compiles, first_line

DEVICE = target_device()
SIZES = [8, 32, 4, 64, 12]
# blog: start remove-input
glue("torch", torch.__version__)
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
          f"recompiles={stats.recompiles}")
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
    [{"dynamic 设置": str(d), "图数": s.graphs, "图断裂": s.graph_breaks, "重编译": s.recompiles,
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
