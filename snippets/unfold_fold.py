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
# back with `F.fold`. Same output; then the cost of compiling each (caches disabled, so the first call
# really compiles) and their steady-state run time.

# %% name="setup"
import torch
import torch.nn.functional as F
from _common import pin_cpu_threads

from perfblog.generator import glue, target_device
from perfblog.generator.bench import compare, count_compiles

DEVICE = target_device()
pin_cpu_threads(DEVICE)  # one thread on CPU: see _common.py
B, C, S = (64, 3, 64) if DEVICE == "cuda" else (4, 3, 16)
P = 4  # patch size and stride: non-overlapping patches
torch.manual_seed(0)
torch._inductor.config.force_disable_caches = True  # report real compile times, not cache hits
# Inductor's one-off start-up cost in a fresh process goes to an unrelated function, not to either side.
torch.compile(lambda t: torch.relu(t) * 2 + 1)(torch.randn(64, 64, device=DEVICE))
glue("torch", torch.__version__)
glue("shape", f"B={B} C={C} H=W={S} patch={P}")
glue("patches", (S // P) ** 2)


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
torch.testing.assert_close(patches_loop(x), patches_unfold(x), rtol=0, atol=0)
torch.testing.assert_close(roundtrip(x), x, rtol=0, atol=0)  # exact for non-overlapping patches
for fn in (patches_loop, patches_unfold, roundtrip):
    stats = count_compiles(lambda: torch.compile(fn, fullgraph=True, backend="eager")(x))  # noqa: B023
    assert (stats.graphs, stats.graph_breaks) == (1, 0), (fn.__name__, stats)
glue("unfold.matches_loop", True)
glue("fold.roundtrip", True)

# %% name="timing"
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
result.record("timings", caption="切片循环与 F.unfold 切分图块，关闭 Inductor 缓存")
for row in result.rows():
    print(f"{row['candidate']:16} first {row['first_call_s']:7.3f} s {row['median_us']:10.1f} us")
loop_first = result["编译 · 切片循环"].first_call_s
unfold_first = result["编译 · unfold"].first_call_s
glue("loop.first_call_s", round(loop_first, 3))
glue("unfold.first_call_s", round(unfold_first, 3))
glue("compile_ratio", round(loop_first / unfold_first, 2))
glue("speedup", round(result.speedup("编译 · unfold", over="编译 · 切片循环"), 2))
