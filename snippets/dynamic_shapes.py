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
# How many times does torch.compile compile one function over a sequence of batch sizes? Counted for
# dynamic=None (the default), True and False, and for torch._dynamo.mark_dynamic, with Inductor.

# %% name="helpers" tags=["hide-input"]
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters

# blog: start remove-input
from perfblog.generator import chart, glue, table, target_device

# blog: end remove-input
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# blog: start remove-input
assert target_device() == DEVICE
glue("torch", torch.__version__)
# blog: end remove-input


def count_compiles(run):
    """Call `run()` and count what Dynamo did meanwhile: graphs compiled, graph breaks and their reasons."""
    counters.clear()
    run()
    breaks = counters["graph_break"] + counters["unimplemented"]  # a break on tensor data lands in the latter
    return SimpleNamespace(graphs=counters["stats"]["unique_graphs"], graph_breaks=sum(breaks.values()),
                           break_reasons=list(breaks))


# %% name="setup"
SIZES = [2, 3, 5, 7, 11]
WIDTH = 64
# blog: start remove-input
glue("sizes", str(SIZES))
# blog: end remove-input


def activate(x):
    return F.gelu(x * 2 + 1).sum(-1)


def compilations(sizes, dynamic=None, mark=False, backend="inductor"):
    """Distinct graphs compiled while calling the function once per batch size."""
    torch._dynamo.reset()
    compiled = torch.compile(activate, dynamic=dynamic, backend=backend)

    def run():
        for n in sizes:
            x = torch.randn(n, WIDTH, device=DEVICE)
            if mark:
                torch._dynamo.mark_dynamic(x, 0)
            compiled(x)

    return count_compiles(run)


# %% name="count"
settings = {
    "dynamic=None": compilations(SIZES),
    "dynamic=True": compilations(SIZES, dynamic=True),
    "dynamic=False": compilations(SIZES, dynamic=False),
    "mark_dynamic(x, 0)": compilations(SIZES, mark=True),
}
for label, stats in settings.items():
    print(f"{label:20} compilations={stats.graphs} breaks={stats.graph_breaks}")
# blog: start hide-input
counts = {label: stats.graphs for label, stats in settings.items()}
assert counts == {"dynamic=None": 2, "dynamic=True": 1, "dynamic=False": 5, "mark_dynamic(x, 0)": 1}, counts
assert all(stats.graph_breaks == 0 for stats in settings.values())
# blog: end hide-input
# blog: start remove-input
glue("none.compilations", counts["dynamic=None"])
glue("true.compilations", counts["dynamic=True"])
glue("false.compilations", counts["dynamic=False"])
glue("mark_dynamic.compilations", counts["mark_dynamic(x, 0)"])
# blog: end remove-input

# %% name="size_one"
# Sizes 0 and 1 are specialised even under dynamic=True: a batch of one gets its own graph.
with_one = [4, 8, 1, 16]
stats = compilations(with_one, dynamic=True)
print(f"dynamic=True over {with_one}: compilations={stats.graphs}")
# blog: start hide-input
assert stats.graphs == 2, stats
# blog: end hide-input
# blog: start remove-input
glue("size_one.compilations", stats.graphs)
counts[f"dynamic=True，批大小 {with_one}"] = stats.graphs
# blog: end remove-input

# %% name="limit"
# dynamic=False compiles once per size until config.recompile_limit; later calls run eagerly.
limit = torch._dynamo.config.recompile_limit
many = list(range(2, 14))
stats = compilations(many, dynamic=False, backend="eager")
print(f"dynamic=False over {len(many)} sizes: compilations={stats.graphs}, recompile_limit={limit}")
# blog: start hide-input
assert stats.graphs == limit == 8, (stats.graphs, limit)
# blog: end hide-input
# blog: start remove-input
glue("limit.value", limit)
glue("limit.compilations", stats.graphs)
counts[f"dynamic=False，{len(many)} 种批大小"] = stats.graphs
# blog: end remove-input

# %% name="summary" hide=true
# Short chart labels, so that six bars' labels fit side by side.
short = ["None", "True", "False", "mark_dynamic", "True·含1", f"False·{len(many)}种"]
assert len(short) == len(counts)
caption = f"gelu(2x+1).sum(-1) 在批大小 {SIZES} 上的编译次数（另有注明的除外）"
alt = ("柱状图：各种动态形状设置下 torch.compile 编译的次数；“True·含1”为混入批大小 1 的 dynamic=True，"
       f"“False·{len(many)}种”为 {len(many)} 种批大小的 dynamic=False")
english = {
    "设置": "setting", "编译次数": "compilations", "True·含1": "True·with 1",
    f"False·{len(many)}种": f"False·{len(many)} sizes",
    "各 dynamic 设置的编译次数": "Compilations per dynamic setting", "dynamic 设置": "dynamic setting",
    f"dynamic=True，批大小 {with_one}": f"dynamic=True, sizes {with_one}",
    f"dynamic=False，{len(many)} 种批大小": f"dynamic=False, {len(many)} sizes",
    caption: f"Compilations of gelu(2x+1).sum(-1) over batch sizes {SIZES} (unless stated otherwise)",
    alt: "Bar chart: how many times torch.compile compiled under each dynamic-shape setting; 'True·with 1' "
         f"is dynamic=True with a batch of 1 mixed in, 'False·{len(many)} sizes' is dynamic=False over "
         f"{len(many)} batch sizes",
}
table("compilations", [{"设置": k, "编译次数": v} for k, v in counts.items()], caption=caption,
      translations={"en": english})
chart("compilations", x=short, series={"编译次数": list(counts.values())}, alt=alt,
      title="各 dynamic 设置的编译次数", x_label="dynamic 设置", y_label="编译次数",
      translations={"en": english})
