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
# "Compile part of the model first, then widen": regional compilation. A model built from one repeated
# block can be compiled block by block (`block.compile()`, each with `fullgraph=True` as a local check)
# instead of as a whole. Dynamo compiles the block's code once and reuses it for every layer, so the
# first call compiles one small graph instead of one graph that holds every layer. Compile time is
# measured by the harness: cold (an empty Inductor cache per variant) and warm, one sample each.

# %% name="setup"
import copy
import functools

import torch
import torch.nn.functional as F
from torch import nn

from perfblog.generator import glue, table, target_device
from perfblog.generator.bench import compare, count_compiles

DEVICE = target_device()
LAYERS, DIM, TOKENS = (8, 1024, 512) if DEVICE == "cuda" else (8, 128, 64)
torch.manual_seed(0)
# blog: start remove-input
glue("torch", torch.__version__)
glue("layers", LAYERS)
# blog: end remove-input


class Block(nn.Module):
    """Pre-norm MLP block with a residual: the repeated unit of a transformer-like stack."""

    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


model = nn.Sequential(*[Block(DIM) for _ in range(LAYERS)]).to(DEVICE).eval()
inputs = [(torch.randn(TOKENS, DIM, device=DEVICE),) for _ in range(3)]

# %% name="regional"
whole = torch.compile(copy.deepcopy(model), fullgraph=True)  # one graph holding every layer
regional = copy.deepcopy(model)
for block in regional:  # the same code for every layer: compiled once, reused
    block.compile(fullgraph=True)

# %% name="graphs"
rows = []
with torch.no_grad():
    for name, candidate in (("整个模型", whole), ("逐块（regional）", regional)):
        torch._dynamo.reset()
        stats = count_compiles(functools.partial(candidate, *inputs[0]))
        rows.append({"编译范围": name, "图": stats.graphs, "每张图的算子数": str(list(stats.graph_ops))})
        print(rows[-1])
        # blog: start hide-input
        torch.testing.assert_close(candidate(*inputs[0]), model(*inputs[0]))
        # blog: end hide-input
# blog: start hide-input
whole_row, regional_row = rows
assert whole_row["图"] == 1 and regional_row["图"] == 1, rows  # eight blocks, one compiled graph
whole_ops = int(whole_row["每张图的算子数"].strip("[]"))
block_ops = int(regional_row["每张图的算子数"].strip("[]"))
assert whole_ops >= LAYERS * block_ops, (whole_ops, block_ops)  # the whole graph holds every layer
# blog: end hide-input
# blog: start remove-input
caption = f"{LAYERS} 个相同的块；fullgraph=True；torch {torch.__version__}"
table("graphs", rows, caption=caption, translations={"en": {
    "编译范围": "what is compiled", "图": "graphs", "每张图的算子数": "ops per graph",
    "整个模型": "the whole model",
    "逐块（regional）": "block by block (regional)",
    caption: f"{LAYERS} identical blocks; fullgraph=True; torch {torch.__version__}"}})
glue("whole.ops", whole_ops)
glue("block.ops", block_ops)
# blog: end remove-input

# %% name="timing"
with torch.no_grad():
    result = compare({"eager": model, "整个模型编译": whole, "逐块编译": regional}, inputs,
                     min_run_time=1.0 if DEVICE == "cuda" else 0.3)
for row in result.rows():
    print(f"{row['candidate']:8} cold {row['cold_first_call_s']:7.3f} s  {row['median_us']:10.1f} us")
# blog: start hide-input
# One sample each, but one graph of 5 ops against one of 40: the block compiles in a fraction of the time.
assert result["逐块编译"].first_call_s < result["整个模型编译"].first_call_s, result.rows()
# blog: end hide-input
# blog: start remove-input
result.record("timings", caption=f"{LAYERS} 层 MLP 块，{TOKENS}×{DIM}", translations={"en": {
    "整个模型编译": "whole model compiled", "逐块编译": "compiled block by block",
    f"{LAYERS} 层 MLP 块，{TOKENS}×{DIM}": f"{LAYERS} MLP blocks, {TOKENS}×{DIM}"}})
result.record_verdict("whole", "整个模型编译")
result.record_verdict("regional", "逐块编译")
glue("whole.first_call_s", round(result["整个模型编译"].first_call_s, 2), unit="s")
glue("regional.first_call_s", round(result["逐块编译"].first_call_s, 2), unit="s")
glue("compile_ratio", result["整个模型编译"].first_call_s / result["逐块编译"].first_call_s)
glue("speedup.whole", result.speedup("整个模型编译"))
glue("speedup.regional", result.speedup("逐块编译"))
# blog: end remove-input
