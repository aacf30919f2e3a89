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
# `mode="reduce-overhead"` records the compiled graph as CUDA graphs and replays them, removing the
# per-kernel launch cost. With Inductor's graph partitioning (`torch._inductor.config.graph_partition`,
# on by default in torch 2.11 and 2.13), what cannot be recorded (CPU ops, device copies, ops that bind an
# unbacked symbol such as an integer `.item()`) splits the graph into partitions, and the partitions around
# it are still recorded; the whole graph is skipped only for `torch.cond` and for input mutation. Without
# partitioning, any of them skips the whole graph. The assertions branch on the runtime value, so the
# snippet holds on either setting. On a CPU nothing is recorded: the snippet records the skips Inductor
# counts instead of a time.

# %% name="setup"
import logging
import re

import torch
from torch import nn
from torch._dynamo.utils import counters
from torch._inductor.utils import run_and_get_code

# This blog's harness (the perfblog package): the device the run asked for, and interleaved timing.
from perfblog.generator import target_device
from perfblog.generator.bench import compare

DEVICE = target_device()  # "cuda" or "cpu"
PARTITION = torch._inductor.config.graph_partition
print(f"device={DEVICE} graph_partition={PARTITION}")
torch.manual_seed(0)
LAYERS, WIDTH, BATCH = 24, 256, 8
model = nn.Sequential(*[layer for _ in range(LAYERS) for layer in (nn.Linear(WIDTH, WIDTH), nn.GELU())])
model = model.to(DEVICE).eval()
inputs = [(torch.randn(BATCH, WIDTH, device=DEVICE),) for _ in range(3)]
# blog: start remove-input
from perfblog.generator import glue, table  # noqa: E402  (recording this page's values: not shown)

glue("torch", torch.__version__)
glue("workload", f"{LAYERS} x (Linear({WIDTH}, {WIDTH}) + GELU), batch {BATCH}")
glue("applicable", DEVICE == "cuda")
glue("graph_partition", PARTITION)
# blog: end remove-input


def forward(x):
    with torch.no_grad():
        return model(x)


class Said(logging.Handler):
    """What Inductor logs under TORCH_LOGS=cudagraphs, one message per item."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def cudagraph_report(fn, make_args, calls=3):
    """Compile ``fn`` with mode="reduce-overhead", call it ``calls`` times on ``make_args()``; return the
    first output, the CUDA-graph skips Inductor counted, the partitions in its code and its skip reasons."""
    torch._dynamo.reset()
    counters.clear()
    said, logger = Said(), logging.getLogger("torch._inductor")
    logger.addHandler(said)
    torch._logging.set_logs(cudagraphs=True)
    try:
        compiled = torch.compile(fn, mode="reduce-overhead", fullgraph=True)
        out, sources = run_and_get_code(compiled, *make_args())
        out = out.clone()  # a CUDA-graph output is overwritten by the next replay
        for _ in range(calls - 1):
            compiled(*make_args())
    finally:
        torch._logging.set_logs()
        logger.removeHandler(said)
    partitions = sum(len(re.findall(r"^def partition_\d+\(", source, re.M)) for source in sources)
    reasons = [line.splitlines()[0] for line in said.lines if "cudagraph" in line.lower()]
    return out, counters["inductor"]["cudagraph_skips"], partitions, reasons


# %% name="run"
out, skips, partitions, reasons = cudagraph_report(forward, lambda: inputs[0])
print(f"cudagraph_skips={skips} partitions={partitions} reasons={reasons or 'none logged'}")
# blog: start hide-input
torch.testing.assert_close(out, forward(*inputs[0]))
if DEVICE == "cuda":
    assert skips == 0, reasons  # the workload is CUDA-graph friendly: recorded, nothing skipped
else:
    assert skips == 1, skips  # a CPU graph is never a CUDA graph ...
    assert not reasons, reasons  # ... and nothing tells the user: the skip is logged for CUDA graphs only
# blog: end hide-input
# blog: start remove-input
glue("cudagraph_skips", skips)
# blog: end remove-input

# %% name="timing"
if DEVICE == "cuda":
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
    glue("speedup.default", round(result.speedup("default"), 2))  # for the GPU run's summary
    glue("speedup.reduce_overhead", round(result.speedup("reduce-overhead"), 2))
    # blog: end remove-input
else:
    print("not applicable on CPU: CUDA graphs need a CUDA device")
    # blog: start remove-input
    status = "CPU 上不适用：CUDA Graphs 需要 CUDA 设备"
    status_en = "not applicable on CPU: CUDA graphs need a CUDA device"
    glue("speedup.default", None)
    glue("speedup.reduce_overhead", None)
    table("timings", [{"模式": mode, "设备": DEVICE, "状态": status}
                      for mode in ("eager", "default", "reduce-overhead")],
          caption="没有 CUDA 设备：未测量任何耗时", translations={"en": {
              "模式": "mode", "设备": "device", "状态": "status", status: status_en,
              "没有 CUDA 设备：未测量任何耗时": "No CUDA device: no time was measured"}})
    # blog: end remove-input

# %% name="partitions"
# Two functions that fullgraph=True compiles into one graph each. A host round-trip in the middle splits
# the graph into partitions when graph_partition is on; writing into an input skips the whole graph.
w = torch.randn(WIDTH, WIDTH, device=DEVICE) / WIDTH**0.5


def host_step(x):
    y = torch.relu(x @ w)
    scale = y.cpu().abs().mean()  # a copy to the host and a CPU op in the middle of the graph
    return y * scale.to(y.device)


def mutate_input(x):
    x.add_(1)  # writes into the caller's tensor: an input mutation
    return torch.relu(x @ w)


report = {}
for fn in (host_step, mutate_input):
    out, skips, partitions, reasons = cudagraph_report(fn, lambda: (inputs[0][0].clone(),))
    report[fn.__name__] = {"skips": skips, "partitions": partitions, "reasons": reasons}
    print(f"{fn.__name__}: cudagraph_skips={skips} partitions={partitions} reasons={reasons or 'none'}")
# blog: start hide-input
host, mutation = report["host_step"], report["mutate_input"]
if DEVICE == "cuda" and PARTITION:  # the host step is cut out; the partitions around it are recorded
    assert host["skips"] == 0 and host["partitions"] >= 2, host
elif DEVICE == "cuda":  # no partitioning: the CPU op skips the whole graph
    assert host["skips"] >= 1 and any("cpu device" in r for r in host["reasons"]), host
else:  # a CPU graph is never a CUDA graph, and nothing is logged
    assert host["skips"] >= 1 and not host["reasons"], host
if DEVICE == "cuda":  # input mutation skips the graph with or without partitioning
    assert mutation["skips"] >= 1 and any("mutated inputs" in r for r in mutation["reasons"]), mutation
else:
    assert mutation["skips"] >= 1 and not mutation["reasons"], mutation
# blog: end hide-input
# blog: start remove-input
rows = [{"函数": name, "CUDA Graph 跳过次数": r["skips"], "分区数": r["partitions"],
         "跳过原因": r["reasons"][0] if r["reasons"] else "（未记录）"} for name, r in report.items()]
caption = (f"图分区与 CUDA Graph 跳过：mode=\"reduce-overhead\"，graph_partition={PARTITION}"
           f"（{DEVICE}，torch {torch.__version__}）")
table("partitions", rows, caption=caption, translations={"en": {
    "函数": "function", "CUDA Graph 跳过次数": "CUDA graph skips", "分区数": "partitions",
    "跳过原因": "skip reason", "（未记录）": "(none logged)",
    caption: f"Graph partitions and CUDA graph skips: mode=\"reduce-overhead\", graph_partition={PARTITION} "
             f"({DEVICE}, torch {torch.__version__})"}})
for name, r in report.items():
    glue(f"{name}.cudagraph_skips", r["skips"])
    glue(f"{name}.partitions", r["partitions"])
# blog: end remove-input
