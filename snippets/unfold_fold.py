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
# Cutting an image into patches: a hand-written double loop of slices against `F.unfold`, and the way
# back with `F.fold`. Same output; then the cost of compiling each (the harness compiles each cold, from
# an empty Inductor cache, then warm) and their steady-state run time.

# %% name="helpers" tags=["hide-input"]
import functools
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
# blog: end remove-input


def count_compiles(run):
    """Call `run()` and count what Dynamo did meanwhile: graphs compiled, graph breaks and their reasons."""
    counters.clear()
    run()
    breaks = counters["graph_break"] + counters["unimplemented"]  # a break on tensor data lands in the latter
    return SimpleNamespace(graphs=counters["stats"]["unique_graphs"], graph_breaks=sum(breaks.values()),
                           break_reasons=list(breaks))


# %% name="setup"
B, C, S = (64, 3, 64) if DEVICE == "cuda" else (4, 3, 16)
P = 4  # patch size and stride: non-overlapping patches
torch.manual_seed(0)
# blog: start remove-input
glue("torch", torch.__version__)
glue("shape", f"B={B} C={C} H=W={S} patch={P}")
glue("patches", (S // P) ** 2)
# blog: end remove-input


def patches_loop(x):
    """(B, C*P*P, L) by slicing, in unfold's order; Dynamo unrolls both loops."""
    cols = []
    for i in range(0, x.shape[2] - P + 1, P):
        for j in range(0, x.shape[3] - P + 1, P):
            cols.append(x[:, :, i : i + P, j : j + P].reshape(x.shape[0], -1))
    return torch.stack(cols, dim=-1)


def patches_unfold(x):
    return F.unfold(x, kernel_size=P, stride=P)


def roundtrip(x):
    return F.fold(F.unfold(x, kernel_size=P, stride=P), output_size=x.shape[-2:], kernel_size=P, stride=P)


# %% name="equal"
x = torch.randn(B, C, S, S, device=DEVICE)
print(torch.equal(patches_loop(x), patches_unfold(x)))  # the same patches, in the same order
print(torch.equal(roundtrip(x), x))  # exact for non-overlapping patches
found = {}
for fn in (patches_loop, patches_unfold, roundtrip):
    stats = count_compiles(functools.partial(torch.compile(fn, fullgraph=True, backend="eager"), x))
    found[fn.__name__] = (stats.graphs, stats.graph_breaks)
    print(f"{fn.__name__}: graphs={stats.graphs} breaks={stats.graph_breaks}")
# blog: start hide-input
torch.testing.assert_close(patches_loop(x), patches_unfold(x), rtol=0, atol=0)
torch.testing.assert_close(roundtrip(x), x, rtol=0, atol=0)
assert all(counts == (1, 0) for counts in found.values()), found  # one graph each, no break
# blog: end hide-input
# blog: start remove-input
glue("unfold.matches_loop", True)
glue("fold.roundtrip", True)
# blog: end remove-input

# %% name="timing"
from perfblog.generator.bench import compare  # noqa: E402  (the blog's timing harness)

inputs = [(torch.randn(B, C, S, S, device=DEVICE),) for _ in range(3)]
result = compare(
    {
        "eager · 切片循环": patches_loop,
        "eager · unfold": patches_unfold,
        "编译 · 切片循环": torch.compile(patches_loop, fullgraph=True),
        "编译 · unfold": torch.compile(patches_unfold, fullgraph=True),
    },
    inputs,
    min_run_time=1.0 if DEVICE == "cuda" else 0.3,
)
for row in result.rows():
    print(f"{row['candidate']:16} cold {row['cold_first_call_s']:7.3f} s {row['median_us']:10.1f} us")
# blog: start remove-input
result.record("timings", caption="切片循环与 F.unfold 切分图块", translations={"en": {
    "eager · 切片循环": "eager · slicing loop", "编译 · 切片循环": "compiled · slicing loop",
    "编译 · unfold": "compiled · unfold",
    "切片循环与 F.unfold 切分图块": "Patches by a slicing loop and by F.unfold"}})
result.record_verdict("unfold_over_loop", "编译 · unfold", over="编译 · 切片循环")
result.record_verdict("eager_unfold_over_loop", "eager · unfold", over="eager · 切片循环")
for label, key in (("编译 · 切片循环", "loop"), ("编译 · unfold", "unfold")):
    cold = result[label].first.cold
    glue(f"{key}.cold_s", round(cold.wall_s, 3), unit="s")
    glue(f"{key}.cold_inductor_s", round(cold.inductor_s, 3), unit="s")
# blog: end remove-input
