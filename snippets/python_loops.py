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
# A Python loop over the elements of a tensor does not break the graph: Dynamo unrolls it, so the graph
# grows with the length and every new length is a new graph. The vectorised form is one small graph.

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


def count_compiles(run):
    """Call `run()` and count what Dynamo did meanwhile: graphs compiled, their sizes, graph breaks."""
    counters.clear()
    clear_compilation_metrics()
    run()
    breaks = counters["graph_break"] + counters["unimplemented"]  # a break on tensor data lands in the latter
    ops = [m.graph_op_count for m in get_compilation_metrics() if m.graph_op_count]  # per graph, in order
    return SimpleNamespace(graphs=counters["stats"]["unique_graphs"], graph_breaks=sum(breaks.values()),
                           graph_ops=ops)


# %% name="setup"
torch.manual_seed(0)


def loop_sum_squares(x):
    total = torch.zeros((), device=x.device)
    for value in x:  # unrolled at trace time: one add and one mul per element
        total = total + value * value
    return total


def vectorised_sum_squares(x):
    return (x * x).sum()


# %% name="loop"
LENGTHS = [8, 9, 10, 11]


def call_each_length(compiled):
    return [compiled(torch.randn(n, device=DEVICE)) for n in LENGTHS]


found = {}
for fn in (loop_sum_squares, vectorised_sum_squares):
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, backend="eager")
    found[fn.__name__] = stats = count_compiles(functools.partial(call_each_length, compiled))
    print(f"{fn.__name__}: graphs={stats.graphs} breaks={stats.graph_breaks} ops={list(stats.graph_ops)}")
# blog: start hide-input
loop, vector = found["loop_sum_squares"], found["vectorised_sum_squares"]
assert loop.graphs == len(LENGTHS) and loop.graph_breaks == 0, loop
assert vector.graphs == 2, vector  # static first, then one dynamic graph for every length
assert list(loop.graph_ops) == sorted(loop.graph_ops) and loop.graph_ops[0] < loop.graph_ops[-1], loop
# blog: end hide-input
# blog: start remove-input
caption = "fullgraph=True，每个长度调用一次，默认 dynamic=None"
table("graphs_per_length", [
    {"函数": name, "长度": str(LENGTHS), "图": s.graphs, "图断裂": s.graph_breaks,
     "每张图的算子数": str(list(s.graph_ops))} for name, s in found.items()
], caption=caption, translations={"en": {
    "函数": "function", "长度": "lengths", "图": "graphs", "图断裂": "graph breaks",
    "每张图的算子数": "ops per graph", caption: "fullgraph=True, one call per length, default dynamic=None"}})
glue("loop.graphs", loop.graphs)
glue("loop.ops_8", loop.graph_ops[0])
glue("loop.ops_11", loop.graph_ops[-1])
glue("vectorised.graphs", vector.graphs)
# blog: end remove-input

# %% name="timing"
from perfblog.generator.bench import compare  # noqa: E402  (the blog's timing harness)

N = 256 if DEVICE == "cuda" else 64
torch._dynamo.reset()
inputs = [(torch.randn(N, device=DEVICE),) for _ in range(3)]
result = compare(
    {
        "eager · 循环": loop_sum_squares,
        "编译 · 循环": torch.compile(loop_sum_squares, fullgraph=True),
        "eager · 向量化": vectorised_sum_squares,
        "编译 · 向量化": torch.compile(vectorised_sum_squares, fullgraph=True),
    },
    inputs,
    min_run_time=1.0 if DEVICE == "cuda" else 0.3,
)
for row in result.rows():
    print(f"{row['candidate']:20} cold {row['cold_first_call_s']:7.3f} s {row['median_us']:10.1f} us")
# blog: start remove-input
result.record("timings", caption=f"{N} 个元素的平方和", translations={"en": {
    "eager · 循环": "eager · loop", "编译 · 循环": "compiled · loop", "eager · 向量化": "eager · vectorised",
    "编译 · 向量化": "compiled · vectorised", f"{N} 个元素的平方和": f"Sum of squares of {N} elements"}})
result.record_verdict("vectorised_over_loop", "编译 · 向量化", over="编译 · 循环")
glue("n", N)
glue("loop.cold_first_call_s", round(result["编译 · 循环"].first_call_s, 3))
glue("vectorised.cold_first_call_s", round(result["编译 · 向量化"].first_call_s, 3))
# blog: end remove-input
