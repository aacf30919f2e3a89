# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# blog:
#   timeout: 600
# ---

# %% [markdown]
# The article's "use an arange mask instead of Python" pattern, fused by hand: a causal masked
# softmax in Triton, checked against eager PyTorch and compared with what torch.compile generates.

# %% name="setup" tags=["hide-input"]
import os

import torch

# blog: start remove-input
from perfblog.generator import glue, table, target_device

# blog: end remove-input
ON_GPU = torch.cuda.is_available()
DEVICE = "cuda" if ON_GPU else "cpu"
if not ON_GPU:
    # No GPU: run Triton kernels in its interpreter (numpy on the CPU). Must be set before triton is imported.
    os.environ["TRITON_INTERPRET"] = "1"

import triton
import triton.language as tl

print(f"device={DEVICE} torch={torch.__version__} triton={triton.__version__} "
      f"interpreter={os.environ.get('TRITON_INTERPRET') == '1'}")
# blog: start remove-input
assert target_device() == DEVICE
glue("torch", torch.__version__)
glue("triton", triton.__version__)
glue("device", DEVICE)
glue("interpreted", not ON_GPU)
# blog: end remove-input


# %% name="reference"
def causal_softmax_torch(scores):
    """The article's pattern in PyTorch: an arange mask, masked_fill, softmax."""
    t = scores.shape[-1]
    i = torch.arange(t, device=scores.device)
    causal = i.unsqueeze(0) <= i.unsqueeze(1)  # key position <= query position
    return torch.softmax(scores.masked_fill(~causal, float("-inf")).float(), dim=-1).to(scores.dtype)


# %% name="kernel"
@triton.jit
def causal_softmax_kernel(x_ptr, out_ptr, T, BLOCK: tl.constexpr):
    """One program per row of scores; the row's query position is row % T."""
    row = tl.program_id(0)
    query = row % T
    cols = tl.arange(0, BLOCK)
    in_row = cols < T
    visible = in_row & (cols <= query)
    # Masked-out scores are never read: they load as -inf, and exp(-inf) = 0.
    x = tl.load(x_ptr + row * T + cols, mask=visible, other=-float("inf"))
    x = x.to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    y = y.to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + row * T + cols, y, mask=in_row)


def causal_softmax_triton(scores):
    t = scores.shape[-1]
    x = scores.contiguous()
    out = torch.empty_like(x)
    block = triton.next_power_of_2(t)
    warps = 8 if block >= 2048 else 4
    causal_softmax_kernel[(x.numel() // t,)](x, out, t, BLOCK=block, num_warps=warps)
    return out


# %% name="correctness"
# Odd sizes on purpose: T that is not a power of two exercises the column mask.
if ON_GPU:
    shapes, dtype, tol = [(8, 16, 1000, 1000)], torch.bfloat16, dict(atol=1e-2, rtol=1e-2)
else:
    shapes = [(1, 1, 5, 5), (2, 3, 37, 37), (1, 2, 64, 64)]
    dtype, tol = torch.float32, dict(atol=1e-6, rtol=1e-5)
worst, checked = 0.0, []
for shape in shapes:
    scores = torch.randn(shape, device=DEVICE, dtype=dtype)
    expected = causal_softmax_torch(scores)
    got = causal_softmax_triton(scores)
    checked.append((got, expected))
    worst = max(worst, (got.float() - expected.float()).abs().max().item())
print(f"Triton kernel == eager on {len(shapes)} shapes; max abs error {worst:.2e}")
# blog: start hide-input
for got, expected in checked:
    torch.testing.assert_close(got, expected, **tol)
# blog: end hide-input
# blog: start remove-input
glue("matches_eager", True)
glue("max_abs_error", worst)
glue("shapes_checked", len(shapes))
# blog: end remove-input

# %% name="inductor_code"
from torch._inductor.utils import run_and_get_code

compiled = torch.compile(causal_softmax_torch, fullgraph=True)
probe = torch.randn(shapes[-1], device=DEVICE, dtype=dtype)
result, sources = run_and_get_code(compiled, probe)
torch.testing.assert_close(result, causal_softmax_torch(probe), **tol)
glue("compiled_matches_eager", True)


def triton_kernels(wrapper_source):
    """The @triton.jit kernels inside an Inductor wrapper module (GPU output only)."""
    kernels, rest = [], wrapper_source
    while "@triton.jit" in rest:
        start = rest.index("@triton.jit")
        end = rest.find("''', device_str=", start)  # where the wrapper's source string closes
        if end < 0:
            kernels.append(rest[start:].rstrip())
            break
        kernels.append(rest[start:end].rstrip())
        rest = rest[end:]
    return kernels


generated = [k for source in sources for k in triton_kernels(source)]
glue("inductor_kernels", len(generated) if ON_GPU else None)
if ON_GPU:
    print(f"# Inductor generated {len(generated)} Triton kernel(s) for causal_softmax_torch\n")
    print("\n\n".join(generated))
else:
    print("not applicable on CPU: for CPU tensors Inductor generates C++;")
    print("the Triton source it generates can only be captured on a GPU run.")

# %% name="timing"
if ON_GPU:
    from triton.testing import do_bench

    scores = torch.randn(shapes[-1], device=DEVICE, dtype=dtype)
    candidates = {
        "eager (masked_fill + softmax)": lambda: causal_softmax_torch(scores),
        "torch.compile(fullgraph=True)": lambda: compiled(scores),
        "hand-written Triton": lambda: causal_softmax_triton(scores),
    }
    medians, rows = [], []
    for name, fn in candidates.items():
        median, q1, q3 = do_bench(fn, warmup=25, rep=200, quantiles=[0.5, 0.25, 0.75])  # milliseconds
        medians.append(median)
        rows.append({"实现": name, "中位数 (µs)": round(median * 1e3, 2),
                     "IQR (µs)": round((q3 - q1) * 1e3, 2), "相对 eager": round(medians[0] / median, 2)})
    glue("speedup.compiled", medians[0] / medians[1])
    glue("speedup.triton", medians[0] / medians[2])
    glue("triton_vs_compiled", medians[1] / medians[2])
    caption = f"scores 形状 {tuple(shapes[-1])}，{dtype}；triton.testing.do_bench 的中位数与 IQR"
    caption_en = f"scores of shape {tuple(shapes[-1])}, {dtype}; median and IQR from triton.testing.do_bench"
else:
    names = ("eager (masked_fill + softmax)", "torch.compile(fullgraph=True)", "hand-written Triton")
    rows = [{"实现": name, "状态": "CPU 上不适用：Triton 只能解释执行，不能计时"} for name in names]
    for key in ("speedup.compiled", "speedup.triton", "triton_vs_compiled"):
        glue(key, None)
    caption, caption_en = "计时只在 GPU 上进行", "Timed on a GPU only"
table("timing", rows, caption=caption, translations={"en": {
    "实现": "implementation", "状态": "status", "中位数 (µs)": "median (µs)",
    "相对 eager": "speed-up over eager",
    "CPU 上不适用：Triton 只能解释执行，不能计时":
        "not applicable on CPU: Triton only runs interpreted, untimed",
    caption: caption_en}})
print(rows)
