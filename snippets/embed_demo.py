# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# blog:
#   timeout: 300
# ---

# %% [markdown]
# The example post's snippet: sum of squares in a Python loop vs. one vectorised torch call, measured by
# the harness (threads pinned, interleaved timing rounds), with the speed ratio's 95 % interval and the
# verdict the post states. Checks and records run, but the post shows only the code a reader would write.

# %% name="setup"
import torch

# blog: start remove-input
from perfblog.generator import chart, glue, target_device

# blog: end remove-input
# compare() is this blog's measuring harness (the package perfblog); the .py download has it inlined.
from perfblog.generator.bench import compare

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# blog: start remove-input
assert target_device() == DEVICE
# blog: end remove-input
N = 100_000
torch.manual_seed(0)
values = torch.rand(N, device=DEVICE)
as_list = values.tolist()


def python_loop(x):
    total = 0.0
    for v in as_list:
        total += v * v
    return total


def torch_dot(x):
    return torch.dot(x, x).item()


print(f"device={DEVICE} N={N} torch={torch.__version__}")

# %% name="bench"
result = compare({"Python 循环": python_loop, "torch.dot": torch_dot}, [(values,)], rtol=1e-4, atol=0)
for m in result.measurements:
    print(f"{m.name:12s} median {m.timing.median_s * 1e6:10.1f} µs  IQR {m.timing.iqr_s * 1e6:8.1f} µs")
# blog: start hide-input
loop_sum, dot_sum = python_loop(values), torch_dot(values)
assert abs(loop_sum - dot_sum) / loop_sum < 1e-4, (loop_sum, dot_sum)  # the same sum, both ways
assert result.threads == 1 or DEVICE == "cuda"  # the harness pinned the CPU threads
# blog: end hide-input
# blog: start remove-input
result.record("timings", caption=f"{N} 个元素的平方和")
judged = result.record_verdict("dot", "torch.dot", expect="faster")
glue("confidence_pct", round(judged.interval.confidence * 100))
glue("delta_pct", round(judged.delta * 100))
loop_us, dot_us = (result[name].timing.median_s * 1e6 for name in ("Python 循环", "torch.dot"))
glue("n", N)
glue("loop_us", round(loop_us, 1), unit="µs")
glue("dot_us", round(dot_us, 1), unit="µs")
glue("threads", result.threads)
chart("timings_chart", x=["Python 循环", "torch.dot"], series={"中位数 (µs)": [loop_us, dot_us]},
      alt=f"Python 循环与 torch.dot 计算 {N} 个元素平方和的耗时中位数对比", y_label="µs",
      title="平方和耗时（中位数）")
# blog: end remove-input

# %% name="mismatch" raises=true
torch.ones(3) @ torch.ones(4)
