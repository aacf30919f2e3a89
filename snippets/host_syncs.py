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
# Host round-trips that survive `fullgraph=True`, read from the code Inductor generates, and what a
# compiled call costs before any kernel runs. `torch.cond` compiles into a wrapper that fetches the
# predicate to the host (`.item()`) before it picks a branch; the FX graph cache does not store a graph
# that holds it, and on CUDA Inductor records no CUDA graph for it. A scalar taken with `.item()` is
# captured under fullgraph: a float used only in tensor arithmetic is folded back into a kernel, an
# integer stays a host value (`u0 = buf.item()`), a device-to-host read on every call; with graph
# partitioning (`torch._inductor.config.graph_partition`) that read is cut out of the graph and the
# rest is still recorded as CUDA graphs. Finally the floor: a compiled call of a trivial function
# against the same call in eager, the guards and the wrapper that every compiled call pays.

# %% name="setup"
import logging
import re

import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters
from torch._inductor.utils import run_and_get_code

# This blog's harness (the perfblog package): the device the run asked for, and interleaved timing.
from perfblog.generator import target_device
from perfblog.generator.bench import compare

DEVICE = target_device()  # "cuda" or "cpu"
PARTITION = torch._inductor.config.graph_partition
torch.manual_seed(0)
x = torch.randn(4096, device=DEVICE) + 0.1
# blog: start remove-input
from perfblog.generator import glue, table  # noqa: E402  (recording this page's values: not shown)

glue("torch", torch.__version__)
glue("device", DEVICE)
glue("graph_partition", PARTITION)
# blog: end remove-input


def gate_cond(x):
    return torch.cond(x.sum() > 0, lambda t: F.gelu(t) * 2, lambda t: -t, (x,))


def scale_float(x):
    return x * x.sum().item()  # a Python float, used only in tensor arithmetic


def scale_int(x):
    return x * x.abs().max().int().item()  # a Python int: Dynamo makes it a SymInt


def lines_matching(sources, pattern):
    """The lines of Inductor's generated modules that match the regex ``pattern``, stripped."""
    return [line.strip() for source in sources for line in source.splitlines() if re.search(pattern, line)]


class Said(logging.Handler):
    """What Inductor logs under TORCH_LOGS=cudagraphs, one message per item."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def cudagraph_report(fn, calls=3):
    """Compile ``fn`` with mode="reduce-overhead", call it ``calls`` times on ``x``; return the first
    output, the CUDA-graph skips Inductor counted, the partitions in its code and its skip reasons."""
    torch._dynamo.reset()
    counters.clear()
    said, logger = Said(), logging.getLogger("torch._inductor")
    logger.addHandler(said)
    torch._logging.set_logs(cudagraphs=True)
    try:
        compiled = torch.compile(fn, mode="reduce-overhead", fullgraph=True)
        out, sources = run_and_get_code(compiled, x)
        out = out.clone()  # a CUDA-graph output is overwritten by the next replay
        for _ in range(calls - 1):
            compiled(x)
    finally:
        torch._logging.set_logs()
        logger.removeHandler(said)
    partitions = len(lines_matching(sources, r"^def partition_\d+\("))
    reasons = [line.splitlines()[0] for line in said.lines if "cudagraph" in line.lower()]
    print(f"device={DEVICE} graph_partition={PARTITION} cudagraph_skips="
          f"{counters['inductor']['cudagraph_skips']} partitions={partitions}")
    print("\n".join(reasons) or "(nothing logged)")
    return out, counters["inductor"]["cudagraph_skips"], partitions, reasons


# %% name="cond_code"
torch._dynamo.reset()
out, sources = run_and_get_code(torch.compile(gate_cond, fullgraph=True), x)
predicate = lines_matching(sources, r"^\s*if \w+\.item\(\):")
print(predicate)
# blog: start hide-input
torch.testing.assert_close(out, gate_cond(x))
assert predicate, "the wrapper no longer reads the cond predicate with .item()"
# blog: end hide-input
# blog: start remove-input
glue("cond.predicate_read", predicate[0])
# blog: end remove-input

# %% name="cond_cache"
# The FX graph cache (and AOTAutograd's) stores no graph that holds torch.cond: a warm cache recompiles it.
torch._dynamo.reset()
counters.clear()
torch.compile(gate_cond, fullgraph=True)(x)
cacheable = torch.ops.higher_order.cond.cacheable()
bypass = counters["inductor"]["fxgraph_cache_bypass"]
print(f"cond cacheable: {cacheable}; FX graph cache bypassed: {bypass}")
# blog: start hide-input
assert not cacheable and bypass >= 1, (cacheable, bypass)
# blog: end hide-input
# blog: start remove-input
glue("cond.cacheable", cacheable)
glue("cond.cache_bypass", bypass)
# blog: end remove-input

# %% name="cond_cudagraphs"
# mode="reduce-overhead" asks for CUDA graphs; Inductor says why it skips them (TORCH_LOGS=cudagraphs).
out, skips, partitions, reasons = cudagraph_report(gate_cond)
# blog: start hide-input
torch.testing.assert_close(out, gate_cond(x))
assert skips >= 1, skips  # cond skips the whole graph, with or without graph partitioning
if DEVICE == "cuda":
    assert any("control flow operator: torch.cond" in r for r in reasons), reasons
else:  # a CPU graph is never a CUDA graph, and the skip is not logged
    assert not reasons, reasons
# blog: end hide-input
# blog: start remove-input
glue("cond.cudagraph_skips", skips)
glue("cond.skip_reason", reasons[0] if reasons else None)
# blog: end remove-input

# %% name="scalar_code"
reads, outputs = {}, {}
for fn in (scale_float, scale_int):
    torch._dynamo.reset()
    outputs[fn.__name__], sources = run_and_get_code(torch.compile(fn, fullgraph=True), x)
    reads[fn.__name__] = lines_matching(sources, r"\.item\(\)")
    print(f"{fn.__name__}: {reads[fn.__name__] or 'no .item() in the generated code'}")
# blog: start hide-input
for fn in (scale_float, scale_int):
    torch.testing.assert_close(outputs[fn.__name__], fn(x))
assert reads["scale_float"] == [], reads  # folded into a kernel: no host read
assert any(line.startswith("u0 = ") for line in reads["scale_int"]), reads  # a host read on every call
# blog: end hide-input
# blog: start remove-input
for name, found in reads.items():
    glue(f"{name}.item_lines", len(found))
    glue(f"{name}.item_code", found[0] if found else None)
caption = f"fullgraph=True 下 Inductor 生成的代码（{DEVICE}，torch {torch.__version__}）"
table("scalars", [{"函数": name, "标量": "float" if name == "scale_float" else "int",
                   "生成代码里的 .item()": "; ".join(found) or "无"} for name, found in reads.items()],
      caption=caption, translations={"en": {
          "函数": "function", "标量": "scalar", "生成代码里的 .item()": ".item() in the generated code",
          "无": "none",
          caption: f"Inductor's code under fullgraph=True ({DEVICE}, torch {torch.__version__})"}})
# blog: end remove-input

# %% name="sync_debug"
# On CUDA, ask torch to raise on every synchronising call after compiling: only the int version syncs.
outcomes = {}
for fn in (scale_float, scale_int) if DEVICE == "cuda" else ():
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True)
    compiled(x)  # compile (and autotune) outside the checked region
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        compiled(x)
        outcomes[fn.__name__] = "no sync"
    except RuntimeError as exc:
        outcomes[fn.__name__] = str(exc).splitlines()[0]
    finally:
        torch.cuda.set_sync_debug_mode("default")
print(outcomes or "not applicable on CPU: torch.cuda.set_sync_debug_mode only checks CUDA synchronisations")
# blog: start hide-input
if DEVICE == "cuda":
    assert outcomes["scale_float"] == "no sync", outcomes
    assert "synchroniz" in outcomes["scale_int"], outcomes
# blog: end hide-input
# blog: start remove-input
glue("sync.float", outcomes.get("scale_float"))
glue("sync.int", outcomes.get("scale_int"))
# blog: end remove-input

# %% name="scalar_cudagraphs"
# The int version under reduce-overhead. With graph partitioning the host read is cut out of the graph
# and the partitions around it are recorded; without it, the whole graph is skipped.
out, skips, partitions, reasons = cudagraph_report(scale_int)
# blog: start hide-input
torch.testing.assert_close(out, scale_int(x))
if DEVICE == "cuda" and PARTITION:
    assert skips == 0 and partitions >= 2, (skips, partitions, reasons)
elif DEVICE == "cuda":
    assert skips >= 1 and reasons, (skips, reasons)
else:  # a CPU graph is never a CUDA graph, and the skip is not logged
    assert skips >= 1 and not reasons, (skips, reasons)
# blog: end hide-input
# blog: start remove-input
glue("int.cudagraph_skips", skips)
glue("int.partitions", partitions)
glue("int.skip_reason", reasons[0] if reasons else None)
# blog: end remove-input

# %% name="floor"
# The floor of a compiled call: a function with almost nothing to compute, compiled and in eager. What the
# compiled call adds is Dynamo's guard check and Inductor's wrapper, paid on every call.


def add_one(t):
    return t + 1


tiny = [(torch.randn(8, device=DEVICE),) for _ in range(3)]
floor = compare({"eager": add_one, "compiled": torch.compile(add_one, fullgraph=True)}, tiny,
                min_run_time=1.0 if DEVICE == "cuda" else 0.5)
for row in floor.rows():
    print(f"{row['candidate']:9} {row['median_us']:8.2f} us")
# blog: start remove-input
eager_us, compiled_us = (floor[name].timing.median_s * 1e6 for name in ("eager", "compiled"))
caption = f"8 个元素的 t + 1：每次调用的底价（{DEVICE}）"
floor.record("floor", caption=caption, translations={"en": {
    "compiled": "compiled", caption: f"t + 1 on 8 elements: the per-call floor ({DEVICE})"}})
floor.record_verdict("floor", "compiled")
glue("floor.eager_us", eager_us, unit="µs")
glue("floor.compiled_us", compiled_us, unit="µs")
glue("floor.extra_us", compiled_us - eager_us, unit="µs")
# blog: end remove-input
