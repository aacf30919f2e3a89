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
# Where compiled memory savings come from. The source says memory falls because "intermediate tensors
# can be reused". What a call allocates beyond what already exists (activation memory: the peak during
# the call minus what was allocated before it) is measured for one transformer MLP block, eager and
# compiled. Eager materialises every intermediate of RMSNorm and SwiGLU; Inductor fuses the pointwise
# chains into kernels that never write them. The weights are the same in both and are not counted: in a
# whole model they dominate the total peak and hide this difference.

# %% name="setup"
import torch
import torch.nn.functional as F

# blog: start remove-input
from perfblog.generator import glue, table, target_device

# blog: end remove-input
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
TOKENS, DIM, HIDDEN = (4096, 2048, 5632) if DEVICE == "cuda" else (256, 256, 688)
torch.manual_seed(0)
x = torch.randn(TOKENS, DIM, device=DEVICE, dtype=DTYPE)
w_norm = torch.ones(DIM, device=DEVICE, dtype=DTYPE)
w13 = torch.randn(DIM, 2 * HIDDEN, device=DEVICE, dtype=DTYPE) * 0.02
w2 = torch.randn(HIDDEN, DIM, device=DEVICE, dtype=DTYPE) * 0.02
# blog: start remove-input
assert target_device() == DEVICE
glue("torch", torch.__version__)
glue("shape", f"{TOKENS}×{DIM}，隐藏层 {HIDDEN}，{str(DTYPE).removeprefix('torch.')}")
glue("shape.en", f"{TOKENS}×{DIM}, hidden size {HIDDEN}, {str(DTYPE).removeprefix('torch.')}")
# blog: end remove-input


def mlp_block(x, w_norm, w13, w2):
    """RMSNorm, then SwiGLU, plus the residual: one block's feed-forward half."""
    x32 = x.float()
    h = (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(x) * w_norm
    gate, up = (h @ w13).chunk(2, dim=-1)
    return x + (F.silu(gate) * up) @ w2


# %% name="measure" hide=true
def activation_cuda(fn):
    """Peak allocated during the call minus allocated before it, and the number of allocations."""
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    count = torch.cuda.memory_stats()["allocation.all.allocated"]
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    allocations = torch.cuda.memory_stats()["allocation.all.allocated"] - count
    return torch.cuda.max_memory_allocated() - before, allocations


def activation_cpu(fn):
    """The same from the profiler's memory timeline: torch's CPU allocator keeps no peak counter."""
    from torch.profiler import ProfilerActivity, profile
    from torch.profiler._memory_profiler import Action

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
                 with_stack=True) as prof:
        fn()
    live = peak = allocations = 0
    for _, action, (key, _version), size in prof._memory_profile().timeline:
        if key.device.type != "cpu":
            continue
        if action == Action.CREATE:
            live, allocations = live + size, allocations + 1
        elif action == Action.DESTROY:
            live -= size
        peak = max(peak, live)
    return peak, allocations


activation = activation_cuda if DEVICE == "cuda" else activation_cpu
method = ("torch.cuda.max_memory_allocated() − 调用前的 memory_allocated()" if DEVICE == "cuda"
          else "torch.profiler 的内存时间线（profile_memory=True）")
method_en = ("torch.cuda.max_memory_allocated() − memory_allocated() before the call" if DEVICE == "cuda"
             else "the memory timeline of torch.profiler (profile_memory=True)")
compiled = torch.compile(mlp_block, fullgraph=True)
with torch.no_grad():
    torch.testing.assert_close(compiled(x, w_norm, w13, w2), mlp_block(x, w_norm, w13, w2),
                               **({"atol": 2e-2, "rtol": 2e-2} if DEVICE == "cuda" else {}))
    measured = {name: activation(lambda f=f: f(x, w_norm, w13, w2))
                for name, f in (("eager", mlp_block), ("compiled", compiled))}
print(measured)

# %% name="results"
out_bytes = x.numel() * x.element_size()
rows = [{"写法": name, "激活内存 MiB": round(peak / 2**20, 2), "相当于几个输出": round(peak / out_bytes, 1),
         "分配次数": count} for name, (peak, count) in measured.items()]
caption = f"一个 MLP 块（{TOKENS}×{DIM}），{DEVICE}；激活内存 = {method}；不含权重，单次调用"
table("activation", rows, caption=caption, translations={"en": {
    "写法": "variant", "激活内存 MiB": "activation memory MiB", "相当于几个输出": "in outputs' worth",
    "分配次数": "allocations",
    caption: f"One MLP block ({TOKENS}×{DIM}), {DEVICE}; activation memory = {method_en}; weights not "
             "counted, one call"}})
eager_peak, compiled_peak = measured["eager"][0], measured["compiled"][0]
assert compiled_peak < eager_peak, measured  # fused pointwise chains never materialise their intermediates
assert measured["compiled"][1] < measured["eager"][1], measured
glue("eager.activation_mib", eager_peak / 2**20)
glue("compiled.activation_mib", compiled_peak / 2**20)
glue("eager.allocations", measured["eager"][1])
glue("compiled.allocations", measured["compiled"][1])
glue("saving_pct", 100 * (1 - compiled_peak / eager_peak))
glue("method", method)
glue("method.en", method_en)

# %% name="buffers"
# What the compiled block allocates: every buffer the generated wrapper creates, in order.
from torch._inductor.utils import run_and_get_code

compiled = torch.compile(mlp_block, fullgraph=True)
with torch.no_grad():
    _, sources = run_and_get_code(compiled, x, w_norm, w13, w2)  # the result, and Inductor's Python modules
allocs = [line.strip() for source in sources for line in source.splitlines()
          if line.strip().startswith("buf") and "= empty_strided" in line]
reuses = [line.strip() for source in sources for line in source.splitlines() if "# reuse" in line]
print("\n".join(allocs))
print(f"buffers reused by Inductor's memory planning: {len(reuses)}")
# blog: start hide-input
assert allocs, "no buffer allocations found in the generated code"
# blog: end hide-input
# blog: start remove-input
glue("compiled.buffers", len(allocs))
glue("compiled.reused", len(reuses))
# blog: end remove-input
