# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# blog:
#   timeout: 1200
# ---

# %% [markdown]
# `torch.compiler.nested_compile_region`: a block repeated in a model is traced into one subgraph that
# every layer calls, and Inductor generates its code once. The whole model is still one graph (no break,
# `fullgraph=True` holds), unlike regional compilation, which compiles the block alone. Asserted by what
# Dynamo hands the backend (subgraphs and calls) and by the code Inductor generates; the compile times
# are single samples from the harness, recorded, not asserted.

# %% name="setup"
import re

import torch
import torch.nn.functional as F
from torch import nn
from torch._inductor.utils import run_and_get_code

# blog: start remove-input
from perfblog.generator import glue, table, target_device

# blog: end remove-input
# The blog's timing harness (cold and warm first calls, interleaved rounds, 95 % intervals):
# `pip install` this blog's repository, or take the downloaded file, which has it inlined.
from perfblog.generator.bench import compare

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# blog: start remove-input
assert target_device() == DEVICE  # what `blog run --device` chose, and what torch sees
# blog: end remove-input
LAYERS, DIM, TOKENS = (8, 1024, 512) if DEVICE == "cuda" else (8, 128, 64)
HAS_REGION = hasattr(torch.compiler, "nested_compile_region")  # not in older torch versions
region = torch.compiler.nested_compile_region if HAS_REGION else (lambda fn: fn)
torch.manual_seed(0)
# blog: start remove-input
glue("torch", torch.__version__)
glue("layers", LAYERS)
# blog: end remove-input


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class RegionBlock(Block):
    @region  # the same code for every layer: traced and compiled once, called LAYERS times
    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


plain = nn.Sequential(*[Block(DIM) for _ in range(LAYERS)]).to(DEVICE).eval()
nested = nn.Sequential(*[RegionBlock(DIM) for _ in range(LAYERS)]).to(DEVICE).eval()
nested.load_state_dict(plain.state_dict())
x = torch.randn(TOKENS, DIM, device=DEVICE)

# %% name="graphs"
def dynamo_graph(model):
    """The one FX graph Dynamo hands the backend for `model` (fullgraph=True: exactly one)."""
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend=keep, fullgraph=True)(x)
    (graph,) = graphs  # fullgraph=True: exactly one
    return graph


found = {}
for name, model in (("plain", plain), ("nested_compile_region", nested)):
    gm = dynamo_graph(model)
    subgraphs = [child for child, _ in gm.named_children() if child.startswith("subgraph")]
    invoke = getattr(torch.ops.higher_order, "invoke_subgraph", None)
    calls = [n for n in gm.graph.nodes if n.target is invoke]
    ops = [n for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module")]
    found[name] = {"subgraphs": len(subgraphs), "invoke_subgraph calls": len(calls), "ops": len(ops)}
    print(f"{name:22} {found[name]}")
# blog: start hide-input
assert found["plain"]["subgraphs"] == 0 and found["plain"]["invoke_subgraph calls"] == 0, found
if HAS_REGION:  # one subgraph, one call per layer: the block was traced once
    region_found = found["nested_compile_region"]
    assert region_found["subgraphs"] == 1 and region_found["invoke_subgraph calls"] == LAYERS, found
    assert region_found["ops"] < found["plain"]["ops"], found
# blog: end hide-input
# blog: start remove-input
caption = f"{LAYERS} 个相同的块，fullgraph=True，Dynamo 交给后端的图"
table("graphs", [{"写法": name, "子图": row["subgraphs"],
                  "invoke_subgraph 调用": row["invoke_subgraph calls"], "图中的算子": row["ops"]}
                 for name, row in found.items()],
      caption=caption, translations={"en": {
          "写法": "model", "子图": "subgraphs", "invoke_subgraph 调用": "invoke_subgraph calls",
          "图中的算子": "ops in the graph",
          caption: f"{LAYERS} identical blocks, fullgraph=True, the graph Dynamo hands the backend"}})
glue("plain.ops", found["plain"]["ops"])
glue("nested.ops", found["nested_compile_region"]["ops"])
glue("nested.subgraphs", found["nested_compile_region"]["subgraphs"])
glue("nested.calls", found["nested_compile_region"]["invoke_subgraph calls"])
# blog: end remove-input

# %% name="inductor_code"
codes, outputs = {}, {}
for name, model in (("plain", plain), ("nested_compile_region", nested)):
    torch._dynamo.reset()
    with torch.no_grad():
        out, sources = run_and_get_code(torch.compile(model, fullgraph=True), x)
    outputs[name] = out
    codes[name] = "\n".join(sources)
    defined = re.findall(r"^def (repeated_subgraph\w*)\(", codes[name], re.M)
    called = re.findall(r"\b(repeated_subgraph\w*)\(", codes[name])
    print(f"{name:22} subgraph functions defined={defined} calls={len(called) - len(defined)}")
# blog: start hide-input
for out in outputs.values():
    torch.testing.assert_close(out, plain(x))
assert not re.search(r"^def repeated_subgraph", codes["plain"], re.M)
if HAS_REGION:  # Inductor generated the block's code once, and the wrapper calls it once per layer
    defined = re.findall(r"^def (repeated_subgraph\w*)\(", codes["nested_compile_region"], re.M)
    assert defined == ["repeated_subgraph0"], defined
    assert len(re.findall(r"\brepeated_subgraph0\(", codes["nested_compile_region"])) == LAYERS + 1
# blog: end hide-input
# blog: start remove-input
glue("code.plain_lines", len(codes["plain"].splitlines()))
glue("code.nested_lines", len(codes["nested_compile_region"].splitlines()))
# blog: end remove-input

# %% name="timing"
with torch.no_grad():
    result = compare({"eager": plain, "compile": torch.compile(plain, fullgraph=True),
                      "compile + region": torch.compile(nested, fullgraph=True)}, [(x,)], device=DEVICE,
                     min_run_time=0.3)
for name in ("compile", "compile + region"):
    first = result[name].first
    print(f"{name:17} first call: cold {first.cold.wall_s:6.2f} s, warm cache {first.warm.wall_s:6.2f} s")
# blog: start remove-input
result.record("timings", caption=f"{LAYERS} 个块，{TOKENS}×{DIM}；编译时间为单次测量",
              translations={"en": {f"{LAYERS} 个块，{TOKENS}×{DIM}；编译时间为单次测量":
                                   f"{LAYERS} blocks, {TOKENS}×{DIM}; compile times are single samples"}})
region_verdict = result.record_verdict("region_over_compile", "compile + region", over="compile")
# blog: end remove-input
