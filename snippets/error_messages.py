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
# triggers the situation the source describes and records what the installed torch really says, and the
# fix that works: each fix is compiled with fullgraph=True here and must give one graph, no break, and
# eager's result. (The source's fix for the third, "use a symbolic shape or fix the dimension", does not
# help: the error is about a value, not a shape; `error_fixes.py` shows it.)

# %% name="setup"
from types import SimpleNamespace

import numpy as np
import torch
from torch._dynamo.utils import counters

# blog: start remove-input
from perfblog.generator import glue, table

glue("torch", torch.__version__)
# blog: end remove-input
torch.manual_seed(0)
x = torch.randn(8)


def first_line(text):
    return str(text).strip().splitlines()[0]


def count_compiles(run):
    """Call `run()` and count what Dynamo did meanwhile: graphs compiled, graph breaks and their reasons."""
    counters.clear()
    run()
    breaks = counters["graph_break"] + counters["unimplemented"]  # a break on tensor data lands in the latter
    return SimpleNamespace(graphs=counters["stats"]["unique_graphs"], graph_breaks=sum(breaks.values()),
                           break_reasons=list(breaks))


def compile_error(fn, *args, **options):
    """Compile `fn` with fullgraph=True, call it, and return the compiler's error (fail if there is none)."""
    try:
        torch.compile(fn, fullgraph=True, **options)(*args)
    except torch._dynamo.exc.TorchDynamoException as exc:  # the base class: subclasses vary across versions
        return exc
    raise AssertionError(f"{fn.__name__} compiled with {options} and raised nothing")


def describe(exc):
    """The class name and the first line of the message: what the post quotes."""
    return {"exception": type(exc).__name__, "first_line": str(exc).strip().splitlines()[0]}


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


# The fixes: keep the value a tensor, keep randomness in torch, keep the decision in the graph.
def scale_tensor(x):
    return x * x.sum()


def torch_random(x):
    return x + torch.rand(())


def branch_where(x):
    return torch.where(x.sum() > 0, x * 2, -x)


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
    return {"exception": "无", "first_line": "编译通过：fullgraph=True 会捕获它"}


def one_graph(fix, reference=None):
    """The fix compiles with fullgraph=True into one graph without a break (and matches eager)."""
    torch._dynamo.reset()
    compiled = torch.compile(fix, fullgraph=True, backend="eager")
    stats = count_compiles(lambda: compiled(x))
    assert (stats.graphs, stats.graph_breaks) == (1, 0), (fix.__name__, stats)
    if reference is not None:
        torch.testing.assert_close(compiled(x), reference(x))
    return True


# %% name="capture"
rows = []


def add(source, code, setting, exception, line, fix):
    rows.append({"原文的报错": source, "代码": code, "设置": setting, "结果": exception, "实际的第一行": line,
                 "可行的改法（已用 fullgraph=True 编译验证）": fix})
    print(f"{code:28} {setting:15} {exception:12} {line}")


add("Unsupported op: Tensor.item", "x * x.sum().item()", "默认配置", "图断裂", break_reason(scale),
    "x * x.sum()：保持为张量，不回到主机")
seen = fullgraph_outcome(scale)
add("Unsupported op: Tensor.item", "x * x.sum().item()", "fullgraph=True", seen["exception"],
    seen["first_line"], "无需改动；整数标量仍会同步（见 host_syncs）")
assert seen["exception"] == "无", seen
add("Graph break at torch.ops.xxx", "x.nonzero() + 1", "默认配置", "图断裂",
    break_reason(nonzero_plus_one), "fullgraph=True 或 capture_dynamic_output_shape_ops=True 会捕获它")
add("Graph break at torch.ops.xxx", "x + np.random.rand()", "默认配置", "图断裂",
    break_reason(numpy_random), "x + torch.rand(())：随机数留在 torch 里")
seen = describe(compile_error(branch_on_item, x, backend="eager"))
add("Guard failure on data-dependent expression", "if x.sum().item() > 0:", "fullgraph=True",
    seen["exception"], seen["first_line"],
    "torch.where(x.sum() > 0, x * 2, -x)，或 torch.cond、torch._check；不要按 .item() 分支")
assert "Could not guard on data-dependent expression" in seen["first_line"], seen
assert rows[0]["实际的第一行"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False", rows[0]
assert rows[2]["实际的第一行"].startswith("Dynamic shape operator"), rows[2]
assert rows[3]["实际的第一行"] == "Data dependent operator", rows[3]
assert not any(row["实际的第一行"].startswith(row["原文的报错"]) for row in rows)
# Every fix in the last column compiles into one graph with fullgraph=True.
assert one_graph(scale_tensor, lambda t: t * t.sum())
assert one_graph(nonzero_plus_one, lambda t: t.nonzero() + 1)
assert one_graph(torch_random)
assert one_graph(branch_where, lambda t: t * 2 if t.sum() > 0 else -t)
caption = f"原文的报错信息与 torch {torch.__version__} 实际打印的第一行（backend='eager'）"
table("messages", rows, caption=caption, translations={"en": {
    "原文的报错": "the article's message", "代码": "code", "设置": "setting", "结果": "outcome",
    "实际的第一行": "first line torch prints", "可行的改法（已用 fullgraph=True 编译验证）":
        "a fix that works (compiled with fullgraph=True here)",
    "默认配置": "default", "图断裂": "graph break", "无": "none",
    "编译通过：fullgraph=True 会捕获它": "compiles: fullgraph=True captures it",
    "x * x.sum()：保持为张量，不回到主机": "x * x.sum(): keep it a tensor, off the host",
    "无需改动；整数标量仍会同步（见 host_syncs）":
        "none needed; an integer scalar still syncs (see host_syncs)",
    "fullgraph=True 或 capture_dynamic_output_shape_ops=True 会捕获它":
        "fullgraph=True or capture_dynamic_output_shape_ops=True captures it",
    "x + torch.rand(())：随机数留在 torch 里": "x + torch.rand(()): keep randomness in torch",
    "torch.where(x.sum() > 0, x * 2, -x)，或 torch.cond、torch._check；不要按 .item() 分支":
        "torch.where(x.sum() > 0, x * 2, -x), or torch.cond, torch._check; never branch on .item()",
    caption: f"The article's error messages against the first line torch {torch.__version__} prints "
             "(backend='eager')"}})
