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
# Host round-trips that survive `fullgraph=True`, read from the code Inductor generates. `torch.cond`
# compiles into a wrapper that fetches the predicate to the host (`.item()`) before it picks a branch,
# and on CUDA Inductor will not record such a graph as a CUDA graph. A scalar taken with `.item()` is
# captured into the graph under fullgraph: a float used only in tensor arithmetic is folded back into a
# kernel, an integer stays a host value (`u0 = buf.item()`), a device-to-host copy on every call.

# %% name="setup"
import torch
import torch.nn.functional as F
from _inspect import excerpt, matching, output_code, torch_logs
from torch._dynamo.utils import counters

from perfblog.generator import glue, table, target_device

DEVICE = target_device()
torch.manual_seed(0)
x = torch.randn(4096, device=DEVICE) + 0.1
# blog: start remove-input
glue("torch", torch.__version__)
glue("device", DEVICE)
# blog: end remove-input


def gate_cond(x):
    return torch.cond(x.sum() > 0, lambda t: F.gelu(t) * 2, lambda t: -t, (x,))


def scale_float(x):
    return x * x.sum().item()  # a Python float, used only in tensor arithmetic


def scale_int(x):
    return x * x.abs().max().int().item()  # a Python int: Dynamo makes it a SymInt


def cudagraph_skips(fn, pattern):
    """Compile ``fn`` with mode="reduce-overhead" (CUDA graphs), call it three times; return how often
    Inductor skipped CUDA graphs and the logged lines (TORCH_LOGS=cudagraphs) that match ``pattern``."""
    torch._dynamo.reset()
    counters.clear()
    with torch_logs(cudagraphs=True, perf_hints=True) as said:
        compiled = torch.compile(fn, mode="reduce-overhead", fullgraph=True)
        for _ in range(3):
            out = compiled(x)
            # blog: start hide-input
            torch.testing.assert_close(out, fn(x))
            # blog: end hide-input
    skips, reasons = counters["inductor"]["cudagraph_skips"], matching(said, pattern)
    print(f"device={DEVICE} cudagraph_skips={skips}")
    print("\n".join(reasons) or "(nothing logged)")
    return skips, reasons


# %% name="cond_code"
torch._dynamo.reset()
out, sources = output_code(torch.compile(gate_cond, fullgraph=True), x)
predicate = excerpt(sources, r"^\s*if \w+\.item\(\):", before=1, after=0)
print(predicate)
# blog: start hide-input
torch.testing.assert_close(out, gate_cond(x))
assert predicate, "the wrapper no longer reads the cond predicate with .item()"
# blog: end hide-input
# blog: start remove-input
glue("cond.predicate_read", predicate.splitlines()[-1].strip())
# blog: end remove-input

# %% name="cond_cudagraphs"
# mode="reduce-overhead" asks for CUDA graphs; Inductor says why it skips them (TORCH_LOGS=cudagraphs).
skips, reasons = cudagraph_skips(gate_cond, r"torch\.cond|skipping cudagraphs")
# blog: start hide-input
assert skips >= 1, skips
if DEVICE == "cuda":
    assert any("control flow operator: torch.cond" in r for r in reasons), reasons
else:  # a CPU graph is never a CUDA graph, and the skip is not logged
    assert not reasons, reasons
# blog: end hide-input
# blog: start remove-input
glue("cond.cudagraph_skips", skips)
glue("cond.skip_reason", reasons[0].strip() if reasons else None)
# blog: end remove-input

# %% name="scalar_code"
# blog: start remove-input
rows = []
# blog: end remove-input
for fn in (scale_float, scale_int):
    torch._dynamo.reset()
    out, sources = output_code(torch.compile(fn, fullgraph=True), x)
    reads = [line.strip() for source in sources for line in matching(source.splitlines(), r"\.item\(\)")]
    print(f"{fn.__name__}: {reads or 'no .item() in the generated code'}")
    # blog: start hide-input
    torch.testing.assert_close(out, fn(x))
    # blog: end hide-input
    # blog: start remove-input
    rows.append({"函数": fn.__name__, "标量": "float" if fn is scale_float else "int",
                 "生成代码里的 .item()": "; ".join(reads) or "无"})
    glue(f"{fn.__name__}.item_lines", len(reads))
    glue(f"{fn.__name__}.item_code", reads[0] if reads else None)
    # blog: end remove-input
# blog: start hide-input
float_row, int_row = rows
assert float_row["生成代码里的 .item()"] == "无", float_row  # folded into a kernel: no host read
assert any(line.startswith("u0 = ") for line in int_row["生成代码里的 .item()"].split("; ")), int_row
# blog: end hide-input
# blog: start remove-input
caption = f"fullgraph=True 下 Inductor 生成的代码（{DEVICE}，torch {torch.__version__}）"
table("scalars", rows, caption=caption, translations={"en": {
    "函数": "function", "标量": "scalar", "生成代码里的 .item()": ".item() in the generated code",
    "无": "none",
    caption: f"The code Inductor generates under fullgraph=True ({DEVICE}, torch {torch.__version__})"}})
# blog: end remove-input

# %% name="sync_debug"
# On CUDA, ask torch to raise on every synchronising call after compiling: only the int version syncs.
if DEVICE == "cuda":
    outcomes = {}
    for fn in (scale_float, scale_int):
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
    print(outcomes)
    # blog: start hide-input
    assert outcomes["scale_float"] == "no sync", outcomes
    assert "synchroniz" in outcomes["scale_int"], outcomes
    # blog: end hide-input
    # blog: start remove-input
    glue("sync.float", outcomes["scale_float"])
    glue("sync.int", outcomes["scale_int"])
    # blog: end remove-input
else:
    print("not applicable on CPU: torch.cuda.set_sync_debug_mode only checks CUDA synchronisations")
    # blog: start remove-input
    glue("sync.float", None)
    glue("sync.int", None)
    # blog: end remove-input

# %% name="scalar_cudagraphs"
# And the int version under reduce-overhead: a graph with a host integer in it is not a CUDA graph.
skips, reasons = cudagraph_skips(scale_int, r"cudagraph")
# blog: start hide-input
assert skips >= 1, skips
if DEVICE == "cuda":
    assert reasons, "no CUDA-graph skip reason was logged"
# blog: end hide-input
# blog: start remove-input
glue("int.cudagraph_skips", skips)
glue("int.skip_reason", reasons[0].strip() if reasons else None)
# blog: end remove-input
