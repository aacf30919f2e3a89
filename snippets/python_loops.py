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

# %% name="setup"
import torch
from _common import pin_cpu_threads

from perfblog.generator import glue, table, target_device
from perfblog.generator.bench import compare, count_compiles

DEVICE = target_device()
pin_cpu_threads(DEVICE)  # one thread on CPU: see _common.py
torch.manual_seed(0)
glue("torch", torch.__version__)


def loop_sum_squares(x):
    total = torch.zeros((), device=x.device)
    for value in x:  # unrolled at trace time: one add and one mul per element
        total = total + value * value
    return total


def vectorised_sum_squares(x):
    return (x * x).sum()


# %% name="loop"
LENGTHS = [8, 9, 10, 11]
rows = []
for fn in (loop_sum_squares, vectorised_sum_squares):
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True, backend="eager")
    stats = count_compiles(lambda: [compiled(torch.randn(n, device=DEVICE)) for n in LENGTHS])  # noqa: B023
    rows.append({"function": fn.__name__, "lengths": str(LENGTHS), "graphs": stats.graphs,
                 "graph_breaks": stats.graph_breaks, "ops per graph": str(list(stats.graph_ops))})
    print(rows[-1])
table("graphs_per_length", rows, caption="fullgraph=True, one call per length, default dynamic=None")
loop_row, vector_row = rows
assert loop_row["graphs"] == len(LENGTHS) and loop_row["graph_breaks"] == 0, loop_row
assert vector_row["graphs"] == 2, vector_row  # static first, then one dynamic graph for every length
loop_ops = [int(n) for n in loop_row["ops per graph"].strip("[]").split(",")]
assert loop_ops == sorted(loop_ops) and loop_ops[0] < loop_ops[-1], loop_ops  # it grows with the length
glue("loop.graphs", loop_row["graphs"])
glue("loop.ops_8", loop_ops[0])
glue("loop.ops_11", loop_ops[-1])
glue("vectorised.graphs", vector_row["graphs"])

# %% name="timing"
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
result.record("timings", caption=f"{N} 个元素的平方和")
for row in result.rows():
    print(f"{row['candidate']:20} first {row['first_call_s']:7.3f} s {row['median_us']:10.1f} us")
glue("n", N)
glue("loop.first_call_s", round(result["编译 · 循环"].first_call_s, 3))
glue("vectorised.first_call_s", round(result["编译 · 向量化"].first_call_s, 3))
glue("speedup", round(result.speedup("编译 · 向量化", over="编译 · 循环"), 2))
