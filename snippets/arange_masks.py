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
# The source's broken example, made real: masks built from `torch.arange(...).unsqueeze(...)` instead
# of Python loops or `.item()`. Causal and padding masks, fullgraph=True, equal to eager, then timed.
#
# What the source printed (not valid Python):
# `@torch.compile def forward: seq_len = x.shape # ... mask = torch.arange.unsqueeze`

# %% name="setup" tags=["hide-input"]
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

# blog: start remove-input
from perfblog.generator import glue, target_device

# blog: end remove-input
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
B, H, T, D = (8, 16, 1024, 64) if DEVICE == "cuda" else (2, 2, 64, 16)
torch.manual_seed(0)
# blog: start remove-input
assert target_device() == DEVICE
glue("torch", torch.__version__)
glue("shape", f"B={B} H={H} T={T} D={D}")
# blog: end remove-input


def count_compiles(run):
    """Call `run()` and count what Dynamo did meanwhile: graphs compiled, graph breaks and their reasons."""
    counters.clear()
    run()
    breaks = counters["graph_break"] + counters["unimplemented"]  # a break on tensor data lands in the latter
    return SimpleNamespace(graphs=counters["stats"]["unique_graphs"], graph_breaks=sum(breaks.values()),
                           break_reasons=list(breaks))


# %% name="causal"
def causal_scores(q, k):
    """Attention weights where position i sees positions <= i."""
    seq_len = q.shape[-2]  # a shape, not data: no .item() needed
    i = torch.arange(seq_len, device=q.device)
    mask = i.unsqueeze(0) <= i.unsqueeze(1)  # (T, T), True on and below the diagonal
    scores = (q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5
    return scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)


q, k = (torch.randn(B, H, T, D, device=DEVICE) for _ in range(2))
stats = count_compiles(lambda: torch.compile(causal_scores, fullgraph=True)(q, k))
print(f"causal: graphs={stats.graphs} breaks={stats.graph_breaks}")
# blog: start hide-input
torch.testing.assert_close(torch.compile(causal_scores, fullgraph=True)(q, k), causal_scores(q, k))
assert (stats.graphs, stats.graph_breaks) == (1, 0), stats
# blog: end hide-input
# blog: start remove-input
glue("causal.graphs", stats.graphs)
glue("causal.breaks", stats.graph_breaks)
glue("causal.matches_eager", True)
# blog: end remove-input

# %% name="padding"
def padded_mean(x, lengths):
    """Mean over the valid positions of each sequence; `lengths` is a tensor, never a Python list."""
    positions = torch.arange(x.shape[1], device=x.device)
    valid = positions.unsqueeze(0) < lengths.unsqueeze(1)  # (B, T)
    total = (x * valid.unsqueeze(-1)).sum(dim=1)
    return total / lengths.unsqueeze(1)


x = torch.randn(B, T, D, device=DEVICE)
lengths = torch.randint(1, T + 1, (B,), device=DEVICE)
stats = count_compiles(lambda: torch.compile(padded_mean, fullgraph=True)(x, lengths))
print(f"padding: graphs={stats.graphs} breaks={stats.graph_breaks}")
# blog: start hide-input
expected = torch.stack([x[b, : int(n)].mean(dim=0) for b, n in enumerate(lengths)])  # the loop it replaces
torch.testing.assert_close(torch.compile(padded_mean, fullgraph=True)(x, lengths), expected)
assert (stats.graphs, stats.graph_breaks) == (1, 0), stats
# blog: end hide-input
# blog: start remove-input
glue("padding.graphs", stats.graphs)
glue("padding.breaks", stats.graph_breaks)
glue("padding.matches_eager", True)
# blog: end remove-input

# %% name="builtin"
def sdpa_causal(q, k, v):
    """The built-in causal mask: SDPA builds it (or skips the masked blocks) itself."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def causal_mask(b, h, q_idx, kv_idx):
    """FlexAttention's mask_mod: which (query, key) pairs are kept, as a function of their indices."""
    return q_idx >= kv_idx


block_mask = create_block_mask(causal_mask, B=None, H=None, Q_LEN=T, KV_LEN=T, device=DEVICE)


def flex_causal(q, k, v):
    """FlexAttention with the causal block mask, built once outside the compiled function and reused."""
    return flex_attention(q, k, v, block_mask=block_mask)


v = torch.randn(B, H, T, D, device=DEVICE)
arange_attention = causal_scores(q, k) @ v  # the arange mask from the "causal" cell
for name, attend in {"sdpa": sdpa_causal, "flex": flex_causal}.items():
    compiled_attend = torch.compile(attend, fullgraph=True)
    stats = count_compiles(lambda fn=compiled_attend: fn(q, k, v))
    print(f"{name}: graphs={stats.graphs} breaks={stats.graph_breaks}")
    # blog: start hide-input
    torch.testing.assert_close(compiled_attend(q, k, v), arange_attention)
    assert (stats.graphs, stats.graph_breaks) == (1, 0), stats
    # blog: end hide-input
    # blog: start remove-input
    glue(f"{name}.graphs", stats.graphs)
    glue(f"{name}.breaks", stats.graph_breaks)
    glue(f"{name}.matches_arange", True)
    # blog: end remove-input

# %% name="timing"
from perfblog.generator.bench import compare  # noqa: E402  (the blog's timing harness)

inputs = [tuple(torch.randn(B, H, T, D, device=DEVICE) for _ in range(2)) for _ in range(3)]
result = compare(
    {"eager": causal_scores, "编译（fullgraph）": torch.compile(causal_scores, fullgraph=True)},
    inputs,
    min_run_time=1.0 if DEVICE == "cuda" else 0.3,
)
for row in result.rows():
    print(f"{row['candidate']:20} {row['median_us']:10.1f} us  x{row['speedup']:.2f}")
# blog: start remove-input
result.record("timings", caption="由 arange 掩码计算因果注意力权重", translations={"en": {
    "编译（fullgraph）": "compiled (fullgraph)",
    "由 arange 掩码计算因果注意力权重": "Causal attention weights from an arange mask"}})
result.record_verdict("compiled", "编译（fullgraph）")
# blog: end remove-input
