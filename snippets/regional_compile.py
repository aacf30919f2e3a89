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
# measured by the harness in this process: cold (an empty Inductor cache per variant) and warm, one sample
# each, so it is shown, not asserted.

# %% name="setup"
import copy
import functools

import torch
import torch.nn.functional as F
from torch import nn

# This blog's harness (the perfblog package): the device the run asked for, counting graphs, timing.
from perfblog.generator import target_device
from perfblog.generator.bench import compare, count_compiles

DEVICE = target_device()  # "cuda" or "cpu"
LAYERS, DIM, TOKENS = (8, 1024, 512) if DEVICE == "cuda" else (8, 128, 64)
torch.manual_seed(0)
# blog: start remove-input
from perfblog.generator import glue, table  # noqa: E402  (recording this page's values: not shown)

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
    for name, candidate in (("whole model", whole), ("block by block", regional)):
        torch._dynamo.reset()
        stats = count_compiles(functools.partial(candidate, *inputs[0]))
        rows.append({"compiled": name, "graphs": stats.graphs, "ops per graph": list(stats.graph_ops)})
        print(rows[-1])
        # blog: start hide-input
        torch.testing.assert_close(candidate(*inputs[0]), model(*inputs[0]))
        # blog: end hide-input
# blog: start hide-input
whole_row, regional_row = rows
assert whole_row["graphs"] == 1 and regional_row["graphs"] == 1, rows  # eight blocks, one compiled graph
[whole_ops], [block_ops] = whole_row["ops per graph"], regional_row["ops per graph"]
assert whole_ops >= LAYERS * block_ops, (whole_ops, block_ops)  # the whole graph holds every layer
# blog: end hide-input
# blog: start remove-input
caption = f"{LAYERS} 个相同的块；fullgraph=True；torch {torch.__version__}"
zh_rows = [{"编译范围": {"whole model": "整个模型", "block by block": "逐块（regional）"}[r["compiled"]],
            "图": r["graphs"], "每张图的算子数": str(r["ops per graph"])} for r in rows]
table("graphs", zh_rows, caption=caption, translations={"en": {
    "编译范围": "what is compiled", "图": "graphs", "每张图的算子数": "ops per graph",
    "整个模型": "the whole model",
    "逐块（regional）": "block by block (regional)",
    caption: f"{LAYERS} identical blocks; fullgraph=True; torch {torch.__version__}"}})
glue("whole.ops", whole_ops)
glue("block.ops", block_ops)
# blog: end remove-input

# %% name="timing"
with torch.no_grad():
    result = compare({"eager": model, "whole": whole, "regional": regional}, inputs,
                     min_run_time=1.0 if DEVICE == "cuda" else 0.3)
for row in result.rows():
    print(f"{row['candidate']:8} cold {row['cold_first_call_s']:7.3f} s  {row['median_us']:10.1f} us")
# One cold sample per variant: shown, never asserted (what is asserted is the graph sizes above).
# blog: start remove-input
result.record("timings", caption=f"{LAYERS} 层 MLP 块，{TOKENS}×{DIM}", translations={
    "zh": {"whole": "整个模型编译", "regional": "逐块编译"}, "en": {
    "whole": "whole model compiled", "regional": "compiled block by block",
    f"{LAYERS} 层 MLP 块，{TOKENS}×{DIM}": f"{LAYERS} MLP blocks, {TOKENS}×{DIM}"}})
result.record_verdict("whole", "whole")
result.record_verdict("regional", "regional")
glue("whole.first_call_s", round(result["whole"].first_call_s, 2), unit="s")
glue("regional.first_call_s", round(result["regional"].first_call_s, 2), unit="s")
glue("compile_ratio", result["whole"].first_call_s / result["regional"].first_call_s)
glue("speedup.whole", result.speedup("whole"))
glue("speedup.regional", result.speedup("regional"))
# blog: end remove-input
