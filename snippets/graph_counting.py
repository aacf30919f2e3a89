# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# blog: {purpose: behaviour}
# ---

# %% [markdown]
# Three ways torch counts graphs and graph breaks, and where they disagree. `torch._dynamo.explain`
# counts the graphs that reached its backend and calls every gap between them a break
# (`graph_break_count = graph_count - 1`); `torch._dynamo.utils.counters` counts what Dynamo met while
# tracing, in two buckets (`graph_break`, and `unimplemented` for a break on tensor data); the compile
# metrics keep one record per frame Dynamo tried, failures included. Five functions, one break each.

# %% name="helpers" tags=["hide-input"]
import torch
from torch._dynamo.utils import clear_compilation_metrics, counters, get_compilation_metrics

# blog: start remove-input
from perfblog.generator import glue, table

glue("torch", torch.__version__)
# blog: end remove-input


def run_and_count(fn, *args):
    """Compile `fn`, call it once, and read what torch itself counted meanwhile."""
    torch._dynamo.reset()
    counters.clear()
    clear_compilation_metrics()
    torch.compile(fn, backend="eager")(*args)
    metrics = get_compilation_metrics()
    return {
        "graphs": counters["stats"]["unique_graphs"],
        "graph_break": sum(counters["graph_break"].values()),
        "unimplemented": sum(counters["unimplemented"].values()),
        "frames": len(metrics),
        "failed_frames": sum(m.fail_type is not None for m in metrics),
    }


def explain_counts(fn, *args):
    """What `torch._dynamo.explain` reports for one call of `fn`."""
    out = torch._dynamo.explain(fn)(*args)
    return {"graphs": out.graph_count, "breaks": out.graph_break_count, "reasons": len(out.break_reasons)}


# %% name="setup"
def log_between(x):
    x = x * 2
    print("step")  # a side effect: the graph breaks here
    return x.relu()


def branch_on_data(x):
    x = x * 2
    if x.sum() > 0:  # Python decides on tensor data
        return x + 1
    return x - 1


def nonzero_first(x):
    return x.nonzero() + 1  # the break comes before any op: the graph before it is empty


def log_in_loop(x):
    for i in range(3):
        x = x * 2 + i
        print("step", i)  # the same print, inside a loop
    return x.relu()


def helper(x):
    print("inside the helper")  # the break sits one call deeper
    return x.sin()


def nested(x):
    return helper(x * 2) + 1


FUNCTIONS = [log_between, branch_on_data, nonzero_first, log_in_loop, nested]

# %% name="count"
x = torch.randn(8)
seen = {}
for fn in FUNCTIONS:
    seen[fn.__name__] = {"explain": explain_counts(fn, x), "run": run_and_count(fn, x)}
    print(f"{fn.__name__:15} explain: {seen[fn.__name__]['explain']}")
    print(f"{'':15} run:     {seen[fn.__name__]['run']}")
# blog: start hide-input
# a break that leaves an empty graph before it: explain sees one graph and no break
assert seen["nonzero_first"]["explain"] == {"graphs": 1, "breaks": 0, "reasons": 0}
assert seen["nonzero_first"]["run"]["graph_break"] == 1
# a break inside a loop: nothing compiled, explain says -1 breaks, counters["graph_break"] 0; the break is
# in counters["unimplemented"] and the compile metrics keep the failed frame
assert seen["log_in_loop"]["explain"] == {"graphs": 0, "breaks": -1, "reasons": 0}
assert seen["log_in_loop"]["run"]["graphs"] == seen["log_in_loop"]["run"]["graph_break"] == 0
assert seen["log_in_loop"]["run"]["unimplemented"] > 0
assert seen["log_in_loop"]["run"]["failed_frames"] == 1
# a break on tensor data lands in counters["unimplemented"], not counters["graph_break"]
assert seen["branch_on_data"]["run"]["graph_break"] == 0
assert seen["branch_on_data"]["run"]["unimplemented"] == 1
assert seen["branch_on_data"]["explain"]["breaks"] == 1
# one break one call deeper: three graphs (before the call, the helper's resumed rest, after it)
assert seen["nested"]["explain"]["graphs"] == seen["nested"]["run"]["graphs"] == 3
assert seen["nested"]["explain"]["breaks"] == seen["nested"]["run"]["graph_break"] == 2
assert seen["nested"]["run"]["frames"] == 4  # nested, helper on its own, the rests of both after the break
assert seen["log_between"]["explain"] == {"graphs": 2, "breaks": 1, "reasons": 1}
# blog: end hide-input
# blog: start remove-input
zh, en = [], []
for name, row in seen.items():
    e, r = row["explain"], row["run"]
    zh.append({"函数": name, "explain 图数": e["graphs"], "explain 断裂数": e["breaks"],
               "counters 图数": r["graphs"], 'counters["graph_break"]': r["graph_break"],
               'counters["unimplemented"]': r["unimplemented"], "编译指标：帧": r["frames"],
               "其中失败": r["failed_frames"]})
    en.append({"function": name, "explain graphs": e["graphs"], "explain breaks": e["breaks"],
               "counters graphs": r["graphs"], 'counters["graph_break"]': r["graph_break"],
               'counters["unimplemented"]': r["unimplemented"], "compile metrics: frames": r["frames"],
               "of which failed": r["failed_frames"]})
    for key, value in {**{f"explain.{k}": v for k, v in e.items()}, **r}.items():
        glue(f"{name}.{key}", value)
table("counts", zh, caption=f"同一个断点，三种计数（torch {torch.__version__}，每个函数一次调用）")
table("counts.en", en, caption=f"One break, three counts (torch {torch.__version__}, one call per function)")
# blog: end remove-input

# %% name="reasons"
torch._dynamo.reset()
explained = torch._dynamo.explain(branch_on_data)(x)
print("explain:", explained.break_reasons[0].reason)
counters.clear()
torch._dynamo.reset()
torch.compile(branch_on_data, backend="eager")(x)
(reason,) = counters["unimplemented"]
print('counters["unimplemented"]:', reason.splitlines()[0])
print(reason.splitlines()[-1].strip())
# blog: start hide-input
assert explained.break_reasons[0].reason.startswith("generic_jump")
assert reason.startswith("Data-dependent branching")
assert "compile-graph-break-site/gb/gb" in reason.splitlines()[-1]
# blog: end hide-input
# blog: start remove-input
glue("branch.explain_reason", explained.break_reasons[0].reason)
glue("branch.counter_reason", reason.splitlines()[0])
# blog: end remove-input

# %% name="recompiles"
torch._dynamo.reset()
counters.clear()
compiled = torch.compile(log_between, backend="eager", dynamic=False)
for n in (8, 16, 32):
    compiled(torch.randn(n))  # each new size: the function is compiled again, break and all
run_graphs = counters["stats"]["unique_graphs"]
explained = torch._dynamo.explain(log_between)(torch.randn(8))
print("three sizes, run:", run_graphs, "graphs")
print("one call, explain:", explained.graph_count, "graphs")
# blog: start hide-input
assert run_graphs == 3 * explained.graph_count
# blog: end hide-input
# blog: start remove-input
glue("recompiles.run_graphs", run_graphs)
glue("recompiles.explain_graphs", explained.graph_count)
# blog: end remove-input
