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
# A Python `if` on tensor data breaks the graph; `torch.where` (both branches computed, one selected
# per element) and `torch.cond` (one branch run, both traced) keep it whole. Same results, then timings.

# %% name="helpers" tags=["hide-input"]
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters

# blog: start remove-input
from perfblog.generator import glue, target_device

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


def first_line(text):
    return str(text).strip().splitlines()[0]


# %% name="setup"
N = 1 << 22 if DEVICE == "cuda" else 1 << 14
torch.manual_seed(0)
# Four rotating input sets, two with a positive sum and two with a negative one, so both branches run.
inputs = [(torch.randn(N, device=DEVICE) + shift,) for shift in (0.1, -0.1, 0.2, -0.2)]
# blog: start remove-input
glue("n", N)
# blog: end remove-input


def gate_if(x):
    if x.sum() > 0:
        return F.gelu(x) * 2
    return -x


def gate_where(x):
    return torch.where(x.sum() > 0, F.gelu(x) * 2, -x)


def gate_cond(x):
    return torch.cond(x.sum() > 0, lambda t: F.gelu(t) * 2, lambda t: -t, (x,))


# %% name="python_if"
torch._dynamo.reset()
compiled_if = torch.compile(gate_if, backend="eager")
stats = count_compiles(lambda: [compiled_if(*args) for args in inputs])
print(f"graphs={stats.graphs} breaks={stats.graph_breaks}")
print(first_line(stats.break_reasons[0]))
# blog: start hide-input
assert stats.graph_breaks >= 1 and stats.graphs >= 2, stats
assert first_line(stats.break_reasons[0]) == "Data-dependent branching", stats.break_reasons
# blog: end hide-input
# blog: start remove-input
glue("if.graphs", stats.graphs)
glue("if.breaks", stats.graph_breaks)
glue("if.reason", first_line(stats.break_reasons[0]))
# blog: end remove-input

# %% name="where"
where_eager = torch.compile(gate_where, fullgraph=True, backend="eager")
stats = count_compiles(lambda: [where_eager(*args) for args in inputs])
print(f"graphs={stats.graphs} breaks={stats.graph_breaks}")
# blog: start hide-input
assert (stats.graphs, stats.graph_breaks) == (1, 0), stats
for args in inputs:
    torch.testing.assert_close(torch.compile(gate_where, fullgraph=True)(*args), gate_if(*args))
# blog: end hide-input
# blog: start remove-input
glue("where.graphs", stats.graphs)
glue("where.breaks", stats.graph_breaks)
glue("where.matches_eager", True)
# blog: end remove-input

# %% name="cond"
cond_eager = torch.compile(gate_cond, fullgraph=True, backend="eager")
stats = count_compiles(lambda: [cond_eager(*args) for args in inputs])
print(f"graphs={stats.graphs} breaks={stats.graph_breaks}")
# blog: start hide-input
assert (stats.graphs, stats.graph_breaks) == (1, 0), stats
for args in inputs:
    torch.testing.assert_close(torch.compile(gate_cond, fullgraph=True)(*args), gate_if(*args))
# blog: end hide-input
# blog: start remove-input
glue("cond.graphs", stats.graphs)
glue("cond.breaks", stats.graph_breaks)
glue("cond.matches_eager", True)
# blog: end remove-input

# %% name="timing"
from perfblog.generator.bench import compare  # noqa: E402  (the blog's timing harness)

torch._dynamo.reset()
result = compare(
    {
        "eager · if": gate_if,
        "eager · where": gate_where,
        "编译 · if（断图）": torch.compile(gate_if),
        "编译 · where": torch.compile(gate_where, fullgraph=True),
        "编译 · cond": torch.compile(gate_cond, fullgraph=True),
    },
    inputs,
    min_run_time=1.0 if DEVICE == "cuda" else 0.3,
)
for row in result.rows():
    print(f"{row['candidate']:27} {row['median_us']:10.1f} us  x{row['speedup']:.2f}  "
          f"breaks={row['graph_breaks']}")
# blog: start hide-input
assert result["编译 · where"].compile.graph_breaks == 0
assert result["编译 · if（断图）"].compile.graph_breaks >= 1
# blog: end hide-input
# blog: start remove-input
result.record("timings", caption="Python if、torch.where 与 torch.cond", translations={"en": {
    "编译 · if（断图）": "compiled · if (graph break)", "编译 · where": "compiled · where",
    "编译 · cond": "compiled · cond",
    "Python if、torch.where 与 torch.cond": "Python if, torch.where and torch.cond"}})
result.record_verdict("where", "编译 · where")
result.record_verdict("cond", "编译 · cond")
result.record_verdict("where_over_eager_where", "编译 · where", over="eager · where")
# blog: end remove-input
