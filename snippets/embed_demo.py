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
# The example post's snippet: sum of squares in a Python loop vs. one vectorised torch call.
# Each variant is warmed up, then timed in repeated blocks; the post shows medians and spread.

# %% name="setup"
import statistics
import time

import torch

from perfblog.generator import chart, glue, table, target_device

DEVICE = target_device()
N = 100_000
torch.manual_seed(0)
values = torch.rand(N, device=DEVICE)
as_list = values.tolist()


def python_loop():
    total = 0.0
    for v in as_list:
        total += v * v
    return total


def torch_dot():
    result = torch.dot(values, values)
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    return result.item()


def measure(fn, repeats=15, number=5):
    """Median and interquartile range of the per-call time in microseconds, after a warm-up."""
    for _ in range(3):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number * 1e6)
    q1, median, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return median, q3 - q1


print(f"device={DEVICE} N={N} torch={torch.__version__}")

# %% name="check"
loop_result, dot_result = python_loop(), torch_dot()
print(f"python loop: {loop_result:.4f}")
print(f"torch.dot:   {dot_result:.4f}")
assert abs(loop_result - dot_result) / loop_result < 1e-3

# %% name="bench"
rows = []
for label, fn in (("Python 循环", python_loop), ("torch.dot", torch_dot)):
    median, iqr = measure(fn)
    rows.append({"实现": label, "中位数 (µs)": round(median, 1), "IQR (µs)": round(iqr, 1)})
    print(f"{label:12s} median {median:10.1f} µs  IQR {iqr:8.1f} µs")

# %% name="record" hide=true
speedup = rows[0]["中位数 (µs)"] / rows[1]["中位数 (µs)"]
glue("n", N)
glue("speedup", speedup)
glue("loop_us", rows[0]["中位数 (µs)"], unit="µs")
glue("dot_us", rows[1]["中位数 (µs)"], unit="µs")
table("timings", rows, caption=f"{N} 个元素的平方和，每种实现 15 组 × 5 次调用")
chart("timings_chart", x=[r["实现"] for r in rows], series={"中位数 (µs)": [r["中位数 (µs)"] for r in rows]},
      alt=f"Python 循环与 torch.dot 计算 {N} 个元素平方和的耗时中位数对比", y_label="µs",
      title="平方和耗时（中位数）")

# %% name="mismatch" raises=true
torch.ones(3) @ torch.ones(4)
