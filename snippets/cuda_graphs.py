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
# `mode="reduce-overhead"` records the compiled graph as a CUDA graph and replays it, removing the
# per-kernel launch cost. Measured on a launch-bound workload (many tiny layers, batch 8): eager, the
# default mode and reduce-overhead. On a CPU there is nothing to measure: the snippet records that, and
# the skip Inductor counts, instead of a number.

# %% name="setup"
import contextlib
import io

import torch
from torch import nn
from torch._dynamo.utils import counters

from perfblog.generator import glue, table, target_device
from perfblog.generator.bench import compare

DEVICE = target_device()
torch.manual_seed(0)
LAYERS, WIDTH, BATCH = 24, 256, 8
model = nn.Sequential(*[layer for _ in range(LAYERS) for layer in (nn.Linear(WIDTH, WIDTH), nn.GELU())])
model = model.to(DEVICE).eval()
inputs = [(torch.randn(BATCH, WIDTH, device=DEVICE),) for _ in range(3)]
# blog: start remove-input
glue("torch", torch.__version__)
glue("workload", f"{LAYERS} x (Linear({WIDTH}, {WIDTH}) + GELU), batch {BATCH}")
glue("applicable", DEVICE == "cuda")
# blog: end remove-input


def forward(x):
    with torch.no_grad():
        return model(x)


# %% name="run"
torch._dynamo.reset()
counters.clear()
reduce_overhead = torch.compile(forward, mode="reduce-overhead", fullgraph=True)

# TORCH_LOGS=perf_hints, written into a buffer: torch's log handlers take the stderr of when they are set.
with contextlib.redirect_stderr(io.StringIO()) as said:
    torch._logging.set_logs(perf_hints=True)
    out = reduce_overhead(*inputs[0]).clone()
torch._logging.set_logs()
perf_hints = [line for line in said.getvalue().splitlines() if "cudagraph" in line.lower()]
skips = counters["inductor"]["cudagraph_skips"]
print(f"device={DEVICE} cudagraph_skips={skips}")
# blog: start hide-input
torch.testing.assert_close(out, forward(*inputs[0]))
# blog: end hide-input
# blog: start remove-input
glue("cudagraph_skips", skips)
# blog: end remove-input

if DEVICE == "cuda":
    # blog: start hide-input
    assert skips == 0, "the workload must be CUDA-graph friendly"
    # blog: end hide-input
    result = compare(
        {
            "eager": forward,
            "default": torch.compile(forward, fullgraph=True),
            "reduce-overhead": torch.compile(forward, mode="reduce-overhead", fullgraph=True),
        },
        inputs,
        min_run_time=1.0,
    )
    for row in result.rows():
        print(f"{row['candidate']:16} {row['median_us']:10.1f} us  x{row['speedup']:.2f}")
    # blog: start remove-input
    caption = "启动开销主导的 MLP：eager、default 与 reduce-overhead（CUDA Graphs）"
    result.record("timings", caption=caption, translations={"en": {
        caption: "A launch-bound MLP: eager, default and reduce-overhead (CUDA Graphs)"}})
    result.record_verdict("default", "default")
    result.record_verdict("reduce_overhead", "reduce-overhead", over="default")
    glue("status", "measured")
    glue("speedup.default", round(result.speedup("default"), 2))  # for the GPU run's summary
    glue("speedup.reduce_overhead", round(result.speedup("reduce-overhead"), 2))
    # blog: end remove-input
else:
    # Observed on CPU: reduce-overhead compiles and runs correctly, CUDA graphs are skipped silently.
    status = "CPU 上不适用：CUDA Graphs 需要 CUDA 设备"
    status_en = "not applicable on CPU: CUDA graphs need a CUDA device"
    print(status_en)
    # blog: start hide-input
    assert skips == 1, skips
    assert not perf_hints, perf_hints  # ... and silently: nothing tells the user CUDA graphs were skipped
    # blog: end hide-input
    # blog: start remove-input
    glue("status", status)
    glue("status.en", status_en)
    glue("speedup.default", None)
    glue("speedup.reduce_overhead", None)
    table("timings", [{"模式": mode, "设备": DEVICE, "状态": status}
                      for mode in ("eager", "default", "reduce-overhead")],
          caption="没有 CUDA 设备：未测量任何耗时", translations={"en": {
              "模式": "mode", "设备": "device", "状态": "status", status: status_en,
              "没有 CUDA 设备：未测量任何耗时": "No CUDA device: no time was measured"}})
    # blog: end remove-input
