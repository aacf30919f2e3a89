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
# `.item()` and `.tolist()`: a graph break with its reason under the default config; one graph with
# `capture_scalar_outputs=True`; and one graph under `fullgraph=True`, which in current PyTorch turns
# that capture on by itself (PR #163121). Branching on the captured value is what still fails.

# %% name="helpers" tags=["hide-input"]
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters

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
    """Call `run()` and count what Dynamo did meanwhile: graphs compiled, graph breaks and their reasons."""
    counters.clear()
    run()
    breaks = counters["graph_break"] + counters["unimplemented"]  # a break on tensor data lands in the latter
    return SimpleNamespace(graphs=counters["stats"]["unique_graphs"], graph_breaks=sum(breaks.values()),
                           break_reasons=list(breaks))


# %% name="setup"
N = 1 << 22 if DEVICE == "cuda" else 1 << 12
torch.manual_seed(0)
x = torch.randn(N, device=DEVICE)
short = x[:8]  # .tolist() makes one Python int (one symbol when captured) per element: keep it short


def scale_by_mean(x):
    mean = x.sum().item() / x.numel()  # a Python float: the value leaves the tensor world
    return F.gelu(x) * mean


def int_list(x):
    return torch.tensor(x.int().tolist(), device=x.device) + 1


def graphs_and_breaks(fn, *args, **options):
    torch._dynamo.reset()
    stats = count_compiles(lambda: torch.compile(fn, backend="eager", **options)(*args))
    reason = first_line(stats.break_reasons[0]) if stats.break_reasons else ""
    return {"graphs": stats.graphs, "breaks": stats.graph_breaks, "reason": reason}


# blog: start remove-input
rows = []


def row(code, setting, seen):
    return {"代码": code, "设置": setting, "图": seen["graphs"], "断裂": seen["breaks"],
            "原因": seen["reason"]}


# blog: end remove-input

# %% name="default"
seen = graphs_and_breaks(scale_by_mean, x)
print(seen)
tolist = graphs_and_breaks(int_list, short)
print(tolist)
# blog: start hide-input
assert (seen["graphs"], seen["breaks"]) == (2, 1), seen
assert seen["reason"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False", seen
assert (tolist["graphs"], tolist["breaks"]) == (2, 1), tolist
assert tolist["reason"] == "Data dependent operator", tolist
# blog: end hide-input
# blog: start remove-input
rows.append(row(".item()", "默认配置", seen))
rows.append(row(".tolist()（整数）", "默认配置", tolist))
glue("default.graphs", seen["graphs"])
glue("default.breaks", seen["breaks"])
glue("default.reason", seen["reason"])
glue("tolist_default.reason", tolist["reason"])
# blog: end remove-input

# %% name="capture"
with torch._dynamo.config.patch(capture_scalar_outputs=True):
    seen = graphs_and_breaks(scale_by_mean, x)
    captured_list = graphs_and_breaks(int_list, short)
print(seen)
print(captured_list)
# blog: start hide-input
assert (seen["graphs"], seen["breaks"]) == (1, 0), seen
assert (captured_list["graphs"], captured_list["breaks"]) == (1, 0), captured_list
# blog: end hide-input
# blog: start remove-input
rows.append(row(".item()", "capture_scalar_outputs=True", seen))
rows.append(row(".tolist()（整数）", "capture_scalar_outputs=True", captured_list))
glue("capture.graphs", seen["graphs"])
glue("capture.breaks", seen["breaks"])
# blog: end remove-input

# %% name="fullgraph"
print(torch._dynamo.config.capture_scalar_outputs)  # the default is untouched...
seen = graphs_and_breaks(scale_by_mean, x, fullgraph=True)  # ...and fullgraph=True captures anyway
print(seen)
tolist = graphs_and_breaks(int_list, short, fullgraph=True)
print(tolist)
# blog: start hide-input
assert torch._dynamo.config.capture_scalar_outputs is False
assert (seen["graphs"], seen["breaks"]) == (1, 0), seen
assert (tolist["graphs"], tolist["breaks"]) == (1, 0), tolist
torch.testing.assert_close(torch.compile(scale_by_mean, fullgraph=True)(x), scale_by_mean(x))
# blog: end hide-input
# blog: start remove-input
rows.append(row(".item()", "fullgraph=True", seen))
rows.append(row(".tolist()（整数）", "fullgraph=True", tolist))
glue("fullgraph.graphs", seen["graphs"])
glue("fullgraph.breaks", seen["breaks"])
glue("fullgraph.raised", False)
caption = f"图数与图断裂（backend='eager'，torch {torch.__version__}）"
table("modes", rows, caption=caption, translations={"en": {
    "代码": "code", "设置": "setting", "图": "graphs", "断裂": "breaks", "原因": "reason",
    "默认配置": "default", ".tolist()（整数）": ".tolist() (int)",
    caption: f"Graphs and graph breaks (backend='eager', torch {torch.__version__})"}})
# blog: end remove-input


# %% name="branch_on_item" raises=true
def branch_on_item(x):
    if x.sum().item() > 0:  # control flow on a captured value: Dynamo cannot pick a branch
        return x * 2
    return -x


torch.compile(branch_on_item, fullgraph=True, backend="eager")(x)

# %% name="branch_on_item_check"

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


seen = describe(compile_error(branch_on_item, x, backend="eager"))
print(seen)
# blog: start hide-input
assert "Could not guard on data-dependent expression" in seen["first_line"], seen
# blog: end hide-input
# blog: start remove-input
glue("branch_on_item.exception", seen["exception"])
glue("branch_on_item.message", seen["first_line"])
# blog: end remove-input

# %% name="timing"
from perfblog.generator.bench import compare  # noqa: E402  (the blog's timing harness)

torch._dynamo.reset()
inputs = [(torch.randn(N, device=DEVICE),) for _ in range(3)]
result = compare(
    {
        "eager": scale_by_mean,
        "编译（断图）": torch.compile(scale_by_mean),
        "编译（fullgraph=True）": torch.compile(scale_by_mean, fullgraph=True),
    },
    inputs,
    min_run_time=1.0 if DEVICE == "cuda" else 0.3,
)
for row in result.rows():
    print(f"{row['candidate']:26} {row['median_us']:10.1f} us  x{row['speedup']:.2f}  graphs={row['graphs']}")
# blog: start hide-input
assert result["编译（fullgraph=True）"].compile.graph_breaks == 0
# blog: end hide-input
# blog: start remove-input
result.record("timings", caption=".item() 断图与被捕获两种情况", translations={"en": {
    "编译（断图）": "compiled (graph break)", "编译（fullgraph=True）": "compiled (fullgraph=True)",
    ".item() 断图与被捕获两种情况": ".item() breaking the graph, and captured"}})
result.record_verdict("break", "编译（断图）")
result.record_verdict("fullgraph", "编译（fullgraph=True）")
# blog: end remove-input
