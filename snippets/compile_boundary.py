# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# blog:
#   timeout: 1500
# ---

# %% [markdown]
# Where to put the compile boundary. Every call of a compiled function pays a floor before any kernel
# runs: Dynamo checks the guards of the cached graph, then the wrapper Inductor generated allocates the
# outputs and calls the kernels. Measured here: the same elementwise chain, eager and compiled, at
# growing sizes (how the ratio moves with the work per call), and a tiny step called in a Python loop
# with the boundary inside the loop (one compiled call per step) or around it (one call for the loop).
# Timings come from the harness `compare` (warm-up, interleaved rounds, median and 95 % interval);
# only behaviour is asserted, timing verdicts are recorded.

# %% name="setup"
import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters

# blog: start remove-input
from perfblog.generator import glue, table, target_device

# blog: end remove-input
# The blog's timing harness (warm-up, interleaved rounds, median and a 95 % interval of the ratio):
# `pip install` this blog's repository, or take the downloaded file, which has it inlined.
from perfblog.generator.bench import compare

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# blog: start remove-input
assert target_device() == DEVICE  # what `blog run --device` chose, and what torch sees
# blog: end remove-input
SIZES = [1, 1 << 10, 1 << 16, 1 << 20] if DEVICE == "cpu" else [1, 1 << 14, 1 << 20, 1 << 24]
torch.manual_seed(0)
# blog: start remove-input
glue("torch", torch.__version__)
glue("sizes", ", ".join(f"{n:,}" for n in SIZES))
# blog: end remove-input


def chain(x):
    """Five elementwise ops: eager launches five kernels, Inductor fuses them into one."""
    return F.gelu(2 * x + 1) * torch.sigmoid(x) - torch.tanh(x)


# %% name="sizes"
# blog: start remove-input
rows = []
# blog: end remove-input
for n in SIZES:
    inputs = [(torch.randn(n, device=DEVICE),) for _ in range(3)]
    result = compare({"eager": chain, "compiled": torch.compile(chain)}, inputs, device=DEVICE,
                     min_run_time=0.3)
    eager_us = result["eager"].timing.median_s * 1e6
    compiled_us = result["compiled"].timing.median_s * 1e6
    print(f"{n:>10,} elements: eager {eager_us:9.2f} µs, compiled {compiled_us:9.2f} µs per call")
    # blog: start remove-input
    interval = result.interval("compiled")
    rows.append({"元素数": f"{n:,}", "eager（µs）": round(eager_us, 2), "编译后（µs）": round(compiled_us, 2),
                 "编译后的速度": f"{interval.ratio:.2f}× ({interval.low:.2f}–{interval.high:.2f})"})
    # blog: end remove-input
    # blog: start hide-input
    assert result["compiled"].compile.graphs == 1 and result["compiled"].compile.graph_breaks == 0
    # blog: end hide-input
    # blog: start remove-input
    result.record_verdict(f"n{SIZES.index(n)}", "compiled")
    glue(f"n{SIZES.index(n)}.elements", f"{n:,}")
    if n == SIZES[0]:
        glue("floor.compiled_us", round(compiled_us, 1), unit="µs")
        glue("floor.eager_us", round(eager_us, 1), unit="µs")
    # blog: end remove-input
# blog: start remove-input
caption = ("gelu(2x+1)·sigmoid(x) − tanh(x)，每行一次独立的比较；"
           "速度为 eager 中位耗时 ÷ 编译后中位耗时（95 % 区间）")
table("sizes", rows, caption=caption, translations={"en": {
    "元素数": "elements", "eager（µs）": "eager (µs)", "编译后（µs）": "compiled (µs)",
    "编译后的速度": "compiled speed (95 % interval)",
    caption: "gelu(2x+1)·sigmoid(x) − tanh(x), one separate comparison per row; speed is the eager "
             "median over the compiled median (95 % interval)"}})
# blog: end remove-input

# %% name="boundary_setup"
STEPS = 16
N = 64 if DEVICE == "cpu" else 1024


def step(x):
    """A tiny step: a few microseconds of work, less than the floor of a compiled call."""
    return torch.tanh(x) * 0.5 + x


def loop(x):
    for _ in range(STEPS):
        x = step(x)
    return x


compiled_step = torch.compile(step)


def loop_over_compiled_step(x):
    """The boundary inside the loop: STEPS compiled calls, each with its guards and wrapper."""
    for _ in range(STEPS):
        x = compiled_step(x)
    return x


compiled_loop = torch.compile(loop)  # the boundary around the loop: one call, one fused kernel

# %% name="boundary"
inputs = [(torch.randn(N, device=DEVICE),) for _ in range(3)]
result = compare({"eager": loop, "compile(step)": loop_over_compiled_step, "compile(loop)": compiled_loop},
                 inputs, device=DEVICE, min_run_time=0.3)
for name in ("eager", "compile(step)", "compile(loop)"):
    print(f"{name:14} {result[name].timing.median_s * 1e6:9.2f} µs per call of the loop")
# blog: start hide-input
# Each compiled wrapper is one graph: the step's graph is reused STEPS times per loop, the loop's graph
# holds every step (unrolled), so the number of compiled calls per loop is STEPS against one.
for fn in (loop_over_compiled_step, compiled_loop):
    torch._dynamo.reset()
    counters.clear()
    torch.testing.assert_close(fn(*inputs[0]), loop(*inputs[0]))
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])
    assert not counters["graph_break"], dict(counters["graph_break"])
# blog: end hide-input
# blog: start remove-input
result.record("boundary", caption=f"{STEPS} 步的循环，{N} 个元素", translations={"en": {
    f"{STEPS} 步的循环，{N} 个元素": f"a loop of {STEPS} steps, {N} elements"}})
result.record_verdict("step_over_eager", "compile(step)")
result.record_verdict("loop_over_eager", "compile(loop)")
result.record_verdict("loop_over_step", "compile(loop)", over="compile(step)")
glue("steps", STEPS)
glue("step.us", round(result["compile(step)"].timing.median_s * 1e6 / STEPS, 1), unit="µs")
# blog: end remove-input
