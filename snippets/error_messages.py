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
# The source article lists three error messages. None of them is what torch prints today. Each row
# triggers the situation the source describes and records what the installed torch really says.

# %% name="setup"
import numpy as np
import torch
from _common import compile_error, describe

from perfblog.generator import glue, table
from perfblog.generator.bench import count_compiles, first_line

torch.manual_seed(0)
x = torch.randn(8)
glue("torch", torch.__version__)


def scale(x):
    return x * x.sum().item()


def nonzero_plus_one(x):
    return x.nonzero() + 1


def branch_on_item(x):
    if x.sum().item() > 0:
        return x * 2
    return -x


def numpy_random(x):
    return x + np.random.rand()


def break_reason(fn):
    torch._dynamo.reset()
    stats = count_compiles(lambda: torch.compile(fn, backend="eager")(x))
    assert stats.graph_breaks == 1, (fn.__name__, stats)
    return first_line(stats.break_reasons[0])


def fullgraph_outcome(fn):
    torch._dynamo.reset()
    try:
        torch.compile(fn, fullgraph=True, backend="eager")(x)
    except torch._dynamo.exc.TorchDynamoException as exc:
        return describe(exc)
    return {"exception": "none", "first_line": "compiles: fullgraph=True captures it"}


# %% name="capture"
rows = []


def add(source, code, setting, exception, line):
    rows.append({"source_message": source, "code": code, "setting": setting, "exception": exception,
                 "first_line": line})
    print(f"{code:28} {setting:15} {exception:12} {line}")


add("Unsupported op: Tensor.item", "x * x.sum().item()", "default", "graph break", break_reason(scale))
seen = fullgraph_outcome(scale)
add("Unsupported op: Tensor.item", "x * x.sum().item()", "fullgraph=True", seen["exception"],
    seen["first_line"])
assert seen["exception"] == "none", seen
add("Graph break at torch.ops.xxx", "x.nonzero() + 1", "default", "graph break",
    break_reason(nonzero_plus_one))
add("Graph break at torch.ops.xxx", "x + np.random.rand()", "default", "graph break",
    break_reason(numpy_random))
seen = describe(compile_error(branch_on_item, x, backend="eager"))
add("Guard failure on data-dependent expression", "if x.sum().item() > 0:", "fullgraph=True",
    seen["exception"], seen["first_line"])
assert "Could not guard on data-dependent expression" in seen["first_line"], seen
assert rows[0]["first_line"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False", rows[0]
assert rows[2]["first_line"].startswith("Dynamic shape operator"), rows[2]
assert rows[3]["first_line"] == "Data dependent operator", rows[3]
assert not any(row["first_line"].startswith(row["source_message"]) for row in rows)
table("messages", rows, caption=f"first lines printed by torch {torch.__version__}, backend='eager'")
