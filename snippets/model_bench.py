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
#   timeout: 1800
# ---

# %% [markdown]
# A decoder-only transformer with random weights, measured end to end: prefill latency, per-token
# decode latency and memory under eager, torch.compile, fullgraph=True, fullgraph=True with CUDA graphs
# (mode="reduce-overhead", GPU only) and a gpt-fast style static KV cache. The harness times each
# compiled variant's first run cold (an empty Inductor cache of its own) and warm (that cache filled),
# split into Dynamo and Inductor time: one sample each. The variants' runs then take turns, and the
# harness gives each comparison with eager its interval and verdict. The GPU size is chosen so that
# this snippet fits its budget in bench/gpu-run-plan.tsv.

# %% name="setup"
import copy
import gc
import os
import tempfile
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.profiler import ProfilerActivity, profile

# This blog's harness (the perfblog package): the device the run asked for, compile timing, thread pinning.
from perfblog.generator import target_device
from perfblog.generator.bench import (
    TABLE_WORDS,
    first_calls,
    inductor_cache_dir,
    interleave,
    pin_threads,
    readable,
)

DEVICE = target_device()
ON_GPU = DEVICE == "cuda"
DTYPE = torch.bfloat16 if ON_GPU else torch.float32
torch.manual_seed(0)

if ON_GPU:  # about 0.34B parameters in bf16, batch 1: the decode regime gpt-fast measures. Four layers
    # keep the ten cold graph compilations within the GPU run's budget; the layer width is a 1B model's.
    CFG = dict(dim=2048, n_layers=4, n_heads=16, ffn_dim=5632, vocab=32000, max_seq=576)
    PROMPT_LEN, NEW_TOKENS, REPEATS = 512, 64, 10
else:  # tiny, so that every variant compiles and runs in minutes on two CPU cores
    CFG = dict(dim=128, n_layers=2, n_heads=4, ffn_dim=344, vocab=512, max_seq=64)
    PROMPT_LEN, NEW_TOKENS, REPEATS = 32, 16, 31
# The harness's CPU thread count (one), set before anything is compiled: Inductor bakes it into its C++.
pin_threads(DEVICE)

print(f"device={DEVICE} dtype={DTYPE} torch={torch.__version__} threads={torch.get_num_threads()}")
print(f"config={CFG} prompt={PROMPT_LEN} new_tokens={NEW_TOKENS} repeats={REPEATS}")
# blog: start remove-input
from perfblog.generator import chart, glue, table  # noqa: E402  (recording this page's values: not shown)

glue("torch", torch.__version__)
glue("device", DEVICE)
glue("dtype", str(DTYPE).removeprefix("torch."))
glue("prompt_len", PROMPT_LEN)
glue("new_tokens", NEW_TOKENS)
glue("repeats", REPEATS)
glue("threads", torch.get_num_threads() if not ON_GPU else None)
glue("layers", CFG["n_layers"])
glue("dim", CFG["dim"])
# blog: end remove-input


# %% name="kv_cache"
class StaticKVCache(nn.Module):
    """gpt-fast style: preallocated to max_seq, written in place, so decode shapes never change."""

    def __init__(self, batch, heads, max_seq, head_dim, dtype):
        super().__init__()
        shape = (batch, heads, max_seq, head_dim)
        self.register_buffer("k", torch.zeros(shape, dtype=dtype), persistent=False)
        self.register_buffer("v", torch.zeros(shape, dtype=dtype), persistent=False)

    def update(self, input_pos, k, v):
        # Written in place with index_put_, as gpt-fast does; the returned tensors always span max_seq.
        self.k[:, :, input_pos] = k
        self.v[:, :, input_pos] = v
        return self.k, self.v


# %% name="model" tags=["hide-input"]
class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rotate(x, cos, sin):
    """RoPE in the rotate-half form: real arithmetic only."""
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Attention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.wqkv = nn.Linear(dim, 3 * dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.cache = None  # a StaticKVCache, or None for the growing (torch.cat) cache

    def forward(self, x, cos, sin, input_pos, mask, past):
        b, t, d = x.shape
        q, k, v = self.wqkv(x).view(b, t, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        if self.cache is not None:  # static: attend over all max_seq slots, future ones masked
            k, v = self.cache.update(input_pos, k, v)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            present = None
        elif past is None:  # growing cache, prefill
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            present = (k, v)
        else:  # growing cache, one new token attends to everything before it
            k, v = torch.cat((past[0], k), dim=2), torch.cat((past[1], v), dim=2)
            y = F.scaled_dot_product_attention(q, k, v)
            present = (k, v)
        return self.wo(y.transpose(1, 2).reshape(b, t, d)), present


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w13 = nn.Linear(dim, 2 * hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        gate, up = self.w13(x).chunk(2, dim=-1)
        return self.w2(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, dim, n_heads, ffn_dim):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(dim), Attention(dim, n_heads)
        self.ffn_norm, self.ffn = RMSNorm(dim), SwiGLU(dim, ffn_dim)

    def forward(self, x, cos, sin, input_pos, mask, past):
        h, present = self.attn(self.attn_norm(x), cos, sin, input_pos, mask, past)
        x = x + h
        return x + self.ffn(self.ffn_norm(x)), present


class Transformer(nn.Module):
    def __init__(self, dim, n_layers, n_heads, ffn_dim, vocab, max_seq):
        super().__init__()
        self.max_seq, self.n_heads, self.head_dim = max_seq, n_heads, dim // n_heads
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block(dim, n_heads, ffn_dim) for _ in range(n_layers))
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(max_seq).float(), inv).repeat(1, 2)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        causal = torch.ones(max_seq, max_seq, dtype=torch.bool).tril()
        self.register_buffer("causal", causal, persistent=False)

    def use_static_cache(self, batch, enabled):
        for block in self.layers:
            block.attn.cache = (
                StaticKVCache(batch, self.n_heads, self.max_seq, self.head_dim, self.embed.weight.dtype)
                .to(self.embed.weight.device) if enabled else None
            )

    def forward(self, tokens, input_pos, past=None):
        x = self.embed(tokens)
        cos, sin = self.cos[input_pos].to(x.dtype), self.sin[input_pos].to(x.dtype)
        mask = self.causal[input_pos] if self.layers[0].attn.cache is not None else None
        presents = []
        for i, block in enumerate(self.layers):
            x, present = block(x, cos, sin, input_pos, mask, None if past is None else past[i])
            presents.append(present)
        return self.head(self.norm(x)), presents


# %% name="build"
model = Transformer(**CFG).to(device=DEVICE, dtype=DTYPE).eval()
for p in model.parameters():  # small random weights keep the logits in a sane range
    if p.dim() > 1:
        nn.init.normal_(p, std=0.02)
n_params = sum(p.numel() for p in model.parameters())
print(f"{n_params / 1e6:.1f}M parameters")
# The same weights with a preallocated cache: both models stay alive, so variants can take turns.
model_static = copy.deepcopy(model)
model_static.use_static_cache(1, True)
models = {"growing": model, "static": model_static}
# blog: start remove-input
glue("params_m", n_params / 1e6)
# blog: end remove-input

prompt = torch.randint(0, CFG["vocab"], (1, PROMPT_LEN), device=DEVICE)
prompt_pos = torch.arange(PROMPT_LEN, device=DEVICE)
# Teacher-forced decode tokens: every variant sees the same inputs, so logits are comparable. Made on
# the device in advance: a host-to-device copy inside the loop would synchronise the GPU every token.
follow = [torch.randint(0, CFG["vocab"], (1, 1), device=DEVICE) for _ in range(NEW_TOKENS)]
follow_pos = [torch.tensor([PROMPT_LEN + i], device=DEVICE) for i in range(NEW_TOKENS)]


# %% name="generate"
def call(step, static, tokens, input_pos, past, mark_step=False):
    """One model invocation: the prompt, or one new token."""
    if mark_step:  # CUDA graphs reuse output memory: mark each new model invocation
        torch.compiler.cudagraph_mark_step_begin()
    return step(tokens, input_pos) if static else step(tokens, input_pos, past)


def run(step, static, keep=False, mark_step=False):
    """Prefill the prompt, then decode NEW_TOKENS one at a time; returns (prefill_s, decode_s, logits)."""
    kept = []
    sync()
    t0 = time.perf_counter()
    logits, past = call(step, static, prompt, prompt_pos, None, mark_step)
    if keep:
        kept.append(logits[:, -1].float().clone())
    sync()
    t1 = time.perf_counter()
    for token, pos in zip(follow, follow_pos, strict=True):
        logits, presents = call(step, static, token, pos, past, mark_step)
        if keep:
            kept.append(logits[:, -1].float().clone())
        past = None if static else presents
    sync()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, (torch.stack(kept) if keep else None)


def sync():
    if ON_GPU:
        torch.cuda.synchronize()


# %% name="measure" hide=true
# Whole prefill + decode loops are timed here (the harness times single calls); its statistics and
# Dynamo counters are reused so that every table in the blog means the same thing.
VARIANTS = [  # (label, cache, compile options or None for eager, GPU only)
    ("eager", "growing", None, False),
    ("torch.compile", "growing", {}, False),
    ("compile fullgraph", "growing", {"fullgraph": True}, False),
    ("eager", "static", None, False),
    # gpt-fast compiles its static-cache decode with static shapes: prefill and decode, one graph each.
    ("compile fullgraph", "static", {"fullgraph": True, "dynamic": False}, False),
    ("fullgraph + reduce-overhead", "static",
     {"fullgraph": True, "dynamic": False, "mode": "reduce-overhead"}, True),
]
CACHE_ROOT = tempfile.mkdtemp(prefix="model-bench-inductor-")
SHORT = {"eager": "eager", "torch.compile": "compile", "compile fullgraph": "fullgraph",
         "fullgraph + reduce-overhead": "fullgraph+CG"}
CACHE = {"growing": "增长", "static": "静态"}
CACHE_EN = {"growing": "growing", "static": "static"}


def short_label(r, english=False):
    """The short name, shared by the table, the chart and the harness's comparisons."""
    return f"{SHORT[r['variant']]}·{(CACHE_EN if english else CACHE)[r['cache']]}"



def folder(name):
    """The variant's own Inductor and Triton cache: empty for its cold compile, warm afterwards."""
    return os.path.join(CACHE_ROOT, name)


def prepare(name, cache, options):
    """The variant's step, its first runs timed cold and warm by the harness, then warmed up: every shape
    compiled, CUDA graphs recorded (on a later call than the one that compiled)."""
    step = models[cache] if options is None else torch.compile(models[cache], **options)
    mark = options is not None and options.get("mode") == "reduce-overhead"
    first = first_calls(lambda: run(step, cache == "static", mark_step=mark), device=DEVICE,
                        cache_dir=folder(name))
    with inductor_cache_dir(folder(name)):
        run(step, cache == "static", mark_step=mark)
    return step, mark, first


def compiled_step(name, cache, options):
    """The variant's step compiled again from its warm cache, for the timing rounds."""
    step = models[cache] if options is None else torch.compile(models[cache], **options)
    mark = options is not None and options.get("mode") == "reduce-overhead"
    with inductor_cache_dir(folder(name)):
        for _ in range(2):
            run(step, cache == "static", mark_step=mark)
    return step, mark


def agreement(logits, reference):
    """Relative L2 error of the kept logits; the share of positions whose top-1 token is the reference's,
    and whose top-1 is among the reference's top 5 (random weights make near-ties common)."""
    error = ((logits - reference).norm() / reference.norm()).item()
    token = logits.argmax(-1, keepdim=True)
    top1 = (token == reference.argmax(-1, keepdim=True)).float().mean().item()
    in_top5 = (reference.topk(5, dim=-1).indices == token).any(-1).float().mean().item()
    return error, top1, in_top5


def decode_profile(step, static, mark):
    """Profile one decode step after a prefill: operators dispatched on the CPU, kernels on the GPU."""
    _, past = call(step, static, prompt, prompt_pos, None, mark)
    sync()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if ON_GPU else [])
    with profile(activities=activities) as prof:
        call(step, static, follow[0], follow_pos[0], None if static else past, mark)
        sync()
    events = prof.events()
    counts = {"aten_ops": sum(1 for e in events if e.name.startswith("aten::") and not _inside_aten(e))}
    if ON_GPU:
        counts["gpu_kernels"] = sum(1 for e in events if e.device_type == torch.autograd.DeviceType.CUDA
                                    and "memcpy" not in e.name.lower() and "memset" not in e.name.lower())
        counts["launches"] = sum(1 for e in events if e.name in LAUNCHES)
    return counts


def _inside_aten(event):
    """Whether an operator was called by another one (aten::linear calls aten::mm): count the outer only."""
    parent = event.cpu_parent
    while parent is not None and not parent.name.startswith("aten::"):
        parent = parent.cpu_parent
    return parent is not None


LAUNCHES = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
            "cudaGraphLaunch", "cuGraphLaunch"}

# The reference for every variant's logits: eager in float32 (on the GPU a float32 copy of the bf16
# weights; bf16 variants are compared by relative error and top-1 agreement, not elementwise).
with torch.no_grad():
    if ON_GPU:
        reference_model = copy.deepcopy(model).float()
        reference = run(reference_model, False, keep=True)[2]
        del reference_model
        gc.collect()
        torch.cuda.empty_cache()
    else:
        reference = run(model, False, keep=True)[2]

# What compiling costs only once per process (worker pool, imports, first lowerings) goes to a throwaway
# compile of the prefill in a cache of its own, so that every variant's cold compile is comparable.
with torch.no_grad(), inductor_cache_dir(folder("warm-up")):
    torch.compile(models["growing"])(prompt, prompt_pos)

# Pass 1, one variant at a time from a clean slate: cold compile, graphs, correctness, memory, kernels.
results = []
with torch.no_grad():
    for index, (label, cache, options, gpu_only) in enumerate(VARIANTS):
        row = {"variant": label, "cache": cache}
        if gpu_only and not ON_GPU:
            results.append(row | {"status": "not applicable on CPU: CUDA graphs need a CUDA device"})
            continue
        torch._dynamo.reset()
        for name, m in models.items():  # memory must not count the other model's weights
            m.to(DEVICE if name == cache else "cpu")
        step, mark, first = prepare(f"v{index}", cache, options)
        _, _, logits = run(step, cache == "static", keep=True, mark_step=mark)
        rel_error, top1, in_top5 = agreement(logits, reference)
        if ON_GPU:  # bf16 against float32: no worse than bf16 rounding through the model allows
            assert rel_error < 0.05 and in_top5 > 0.95, (label, cache, rel_error, top1, in_top5)
        else:  # float32 against float32: the same numbers up to summation order
            torch.testing.assert_close(logits, reference, atol=1e-3, rtol=1e-3)
        peak = reserved = activation = None
        if ON_GPU:  # allocated: what tensors use; reserved: also CUDA graph pools and allocator slack
            torch.cuda.empty_cache()
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            run(step, cache == "static", mark_step=mark)
            peak, reserved = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
            activation = peak - before  # what the call adds to weights, caches and graph pools
        compiled = first.stats if options is not None else None
        results.append(row | {
            "status": "measured", "options": options, "first": first, "first_call_s": first.cold.wall_s,
            "warm_call_s": first.warm.wall_s if first.warm else None,
            "peak_mib": None if peak is None else peak / 2**20,
            "reserved_mib": None if reserved is None else reserved / 2**20,
            "activation_mib": None if activation is None else activation / 2**20,
            "graphs": compiled and compiled.graphs, "breaks": compiled and compiled.graph_breaks,
            "recompiles": compiled and compiled.recompiles,
            "max_abs_diff": (logits - reference).abs().max().item(), "rel_error": rel_error, "top1": top1,
            "in_top5": in_top5,
            "index": index,
        })
        del step
        gc.collect()

# Pass 2, timing: all variants compiled side by side (each keeps its own cache entries; each compiles
# again from its own, now warm, Inductor cache) and measured in turns, so that a burst of load on a
# shared machine hits every variant alike instead of one.
torch._dynamo.reset()
torch._dynamo.config.recompile_limit = 64
for m in models.values():
    m.to(DEVICE)
measured = [r for r in results if r["status"] == "measured"]


def timed_run(step, static, mark):
    """One whole run for the harness's rounds: prefill seconds and decode seconds per token."""
    def go():
        prefill_s, decode_s, _ = run(step, static, mark_step=mark)
        return {"prefill": prefill_s, "decode": decode_s / NEW_TOKENS}
    return go


with torch.no_grad():
    steps = [compiled_step(f"v{r['index']}", r["cache"], r["options"]) for r in measured]
    runs = {short_label(r): timed_run(step, r["cache"] == "static", mark)
            for (step, mark), r in zip(steps, measured, strict=True)}
    timed = interleave(runs, repeats=REPEATS, device=DEVICE)
    for (step, mark), r in zip(steps, measured, strict=True):
        r.update(decode_profile(step, r["cache"] == "static", mark))
for r in measured:
    prefill, decode = timed["prefill"][short_label(r)].timing, timed["decode"][short_label(r)].timing
    r.update(prefill_ms=prefill.median_s * 1e3, prefill_iqr_ms=prefill.iqr_s * 1e3,
             decode_ms=decode.median_s * 1e3, decode_iqr_ms=decode.iqr_s * 1e3, tok_s=1 / decode.median_s)
    print(f"{r['variant']:28s} {r['cache']:8s} prefill {r['prefill_ms']:8.3f} ms  "
          f"decode {r['decode_ms']:7.3f} ms/token  first call {r['first_call_s']:6.1f} s  "
          f"rel.err {r['rel_error']:.1e} top1 {r['top1']:.3f}  aten ops/step {r['aten_ops']}")
del steps
torch._dynamo.reset()

# %% name="results"
eager = next(r for r in measured if r["variant"] == "eager" and r["cache"] == "growing")



def spread(median, iqr, language="zh"):
    """The median and, in brackets, the IQR to the same decimal places."""
    shown = readable(median)
    decimals = len(shown.partition(".")[2])
    return shown + TABLE_WORDS[language].bracket(f"{iqr:.{decimals}f}")


# The post's tables in each page language: the same numbers, headers and words per language.
HEADERS = {
    "zh": {"variant": "配置", "prefill": "prefill ms（IQR）", "decode": "解码 ms/token（IQR）",
           "speedup": "解码加速比（95 % 区间）", "peak": "峰值显存 MiB（分配/保留）",
           "activation": "激活显存 MiB",
           "graphs": "图/断裂/重编译", "cold": "同一进程·空缓存首次运行 s（Dynamo / Inductor）",
           "warm": "同一进程·缓存已满首次运行 s（Dynamo / Inductor）", "na": "不适用",
           "aten": "每步 aten 算子调用",
           "kernels": "每步 GPU 内核", "launches": "每步 CPU 发起的启动"},
    "en": {"variant": "variant", "prefill": "prefill ms (IQR)", "decode": "decode ms/token (IQR)",
           "speedup": "decode speed-up (95 % interval)", "peak": "peak memory MiB (allocated/reserved)",
           "activation": "activation memory MiB", "graphs": "graphs/breaks/recompiles",
           "cold": "same process, empty cache: first run s (Dynamo / Inductor)",
           "warm": "same process, filled cache: first run s (Dynamo / Inductor)",
           "na": "not applicable", "aten": "aten operator calls per step", "kernels": "GPU kernels per step",
           "launches": "launches issued by the CPU per step"},
}
CAPTIONS = {
    "decode": {
        "zh": (f"batch 1，prompt {PROMPT_LEN} tokens，再逐个解码 {NEW_TOKENS} tokens；"
               f"{DEVICE}{'' if ON_GPU else f' {torch.get_num_threads()} 线程'}，"
               f"各配置轮流计时 {REPEATS} 轮，中位数（IQR），加速比括号内为按轮自助法的 95 % 区间；"
               "同一进程·空缓存：进程一次性的编译器启动已付过之后，每个配置在自己的空 Inductor 缓存里、"
               "重置 Dynamo 后的第一次完整运行；同一进程·缓存已满：同一缓存填满后再次重置 Dynamo 的第一次运行"
               "（新进程的首次编译另见一张表）；"
               "括号内为 torch 编译指标中的 Dynamo 跟踪与 Inductor（含 AOTAutograd）时间；都只有一个样本。"
               "增长 / 静态：torch.cat 逐步变长 / 预分配的 KV cache（静态的编译配置用 dynamic=False）；"
               "CG：CUDA Graphs"
               + ("；激活显存 = 一次 prefill 加解码的峰值减去调用前已分配的显存"
                  "（权重、KV cache、CUDA Graph 内存池）。"
                  if ON_GPU else "，CPU 上不适用；CPU 上不测峰值内存。")),
        "en": (f"batch 1, a prompt of {PROMPT_LEN} tokens, then {NEW_TOKENS} tokens decoded one at a time; "
               f"{DEVICE}{'' if ON_GPU else f', {torch.get_num_threads()} thread'}; the variants take turns "
               f"for {REPEATS} rounds; median (IQR), the speed-up with its 95 % bootstrap interval over the "
               "rounds in brackets; same process, empty cache: each variant's first whole run after a Dynamo "
               "reset, in an empty Inductor cache of its own, with the process's one-off compiler start-up "
               "already paid; same process, filled cache: the first run after another reset with that cache "
               "filled (a new process's first compile is in a table of its own); in brackets the Dynamo "
               "tracing and Inductor (AOTAutograd included) time from torch's "
               "compile metrics; single samples. growing / static: a KV cache grown by torch.cat / "
               "preallocated (the static compiled variants use dynamic=False); CG: CUDA Graphs"
               + ("; activation memory = the peak during one prefill and decode minus what was allocated "
                  "before it (weights, KV caches, CUDA graph pools)." if ON_GPU
                  else ", not applicable on CPU; peak memory is not measured on CPU.")),
    },
    "kernels": {
        "zh": ("torch.profiler 记录的一个解码步（prefill 之后的第一个 token）：CPU 上分派的顶层 aten 算子"
               + ("、GPU 上执行的内核，以及 CPU 发起的内核或 CUDA Graph 启动次数。" if ON_GPU
                  else "（Inductor 生成的融合 C++ 内核不经过 aten，不计入）。")),
        "en": ("One decode step (the first token after the prefill) recorded by torch.profiler: top-level "
               "aten operators dispatched on the CPU"
               + (", kernels executed on the GPU, and kernel or CUDA graph launches issued by the CPU."
                  if ON_GPU else " (the fused C++ kernels Inductor generates bypass aten: not counted).")),
    },
}


def decode_rows(language):
    words, english = HEADERS[language], language == "en"
    rows = []
    for r in results:
        if r["status"] != "measured":
            rows.append({words["variant"]: short_label(r, english), words["prefill"]: words["na"]})
            continue
        row = {
            words["variant"]: short_label(r, english),
            words["prefill"]: spread(r["prefill_ms"], r["prefill_iqr_ms"], language),
            words["decode"]: spread(r["decode_ms"], r["decode_iqr_ms"], language),
            words["speedup"]: timed["decode"].speedup_text(short_label(r), over=short_label(eager),
                                                           language=language),
        }
        if ON_GPU:  # memory is measured on CUDA only
            row[words["peak"]] = f"{r['peak_mib']:.0f}/{r['reserved_mib']:.0f}"
            row[words["activation"]] = f"{r['activation_mib']:.0f}"
        is_compiled = r["graphs"] is not None
        row[words["graphs"]] = f"{r['graphs']}/{r['breaks']}/{r['recompiles']}" if is_compiled else "—"
        warm = r["first"].warm
        row[words["cold"]] = r["first"].cold.summary(language) if warm else "—"
        row[words["warm"]] = warm.summary(language) if warm else "—"
        rows.append(row)
    return rows


def kernel_rows(language):
    words, english = HEADERS[language], language == "en"
    rows = []
    for r in measured:
        row = {words["variant"]: short_label(r, english), words["aten"]: r["aten_ops"]}
        if ON_GPU:
            row |= {words["kernels"]: r["gpu_kernels"], words["launches"]: r["launches"]}
        rows.append(row)
    return rows


for language in ("zh", "en"):
    suffix = "" if language == "zh" else f".{language}"
    table(f"decode{suffix}", decode_rows(language), caption=CAPTIONS["decode"][language])
    table(f"kernels{suffix}", kernel_rows(language), caption=CAPTIONS["kernels"][language])

METRICS = ("prefill_ms", "decode_ms", "tok_s", "first_call_s", "warm_call_s", "graphs", "max_abs_diff",
           "rel_error", "top1", "aten_ops")
for r in results:  # every variant gets the same names on every device; None where not applicable
    key = f"{r['variant'].replace(' ', '_').replace('+', 'plus').replace('.', '_')}.{r['cache']}"
    ok = r["status"] == "measured"
    for metric in METRICS:
        glue(f"{key}.{metric}", r[metric] if ok else None)
    glue(f"{key}.decode_speedup", eager["decode_ms"] / r["decode_ms"] if ok else None)
    glue(f"{key}.prefill_speedup", eager["prefill_ms"] / r["prefill_ms"] if ok else None)
    glue(f"{key}.peak_mib", r["peak_mib"] if ok else None)
    glue(f"{key}.activation_mib", r["activation_mib"] if ok else None)
    glue(f"{key}.gpu_kernels", r.get("gpu_kernels") if ok else None)
    glue(f"{key}.launches", r.get("launches") if ok else None)
glue("reduce_overhead.applicable", ON_GPU)
# This model has no graph breaks, so fullgraph=True changes nothing in what gets compiled: same graphs.
compiled_rows = [r for r in measured if r["graphs"] is not None]
assert all(r["breaks"] == 0 for r in compiled_rows), compiled_rows
growing = {r["variant"]: r for r in compiled_rows if r["cache"] == "growing"}
assert growing["torch.compile"]["graphs"] == growing["compile fullgraph"]["graphs"], growing
# A cache that grows by torch.cat changes shapes: it recompiles (more than one graph), it never breaks.
assert growing["compile fullgraph"]["graphs"] > 1 and growing["compile fullgraph"]["recompiles"] > 0, growing
glue("compiled.breaks", 0)
best = min(measured, key=lambda r: r["decode_ms"])
glue("best.decode_variant", short_label(best))  # as the table and the chart name it
glue("best.decode_variant.en", short_label(best, english=True))
glue("best.decode_speedup", eager["decode_ms"] / best["decode_ms"])
timed["decode"].record_verdict("best_decode", short_label(best), over=short_label(eager))
glue("all_match_eager", True)  # reached only if every logits check above passed
glue("first_call.samples", 1)  # one cold compile per variant: a single sample, never a distribution
# Fusion shows in what runs: fewer operators dispatched per decode step than eager, on every device.
assert all(r["aten_ops"] < eager["aten_ops"] for r in compiled_rows), [r["aten_ops"] for r in measured]

alt = (f"fullgraph 整图编译与 eager 的模型延迟对比：{DEVICE} 上各配置的 prefill 与逐 token 解码延迟中位数；"
       "“增长”指 torch.cat 逐步变长的 KV cache，“静态”指预分配的 KV cache，CG 指 CUDA Graphs")
title = f"prefill 与 decode 延迟（{DEVICE}，越低越好）"
chart(
    "latency",
    x=[short_label(r) for r in measured],
    series={"prefill (ms)": [r["prefill_ms"] for r in measured],
            "decode (ms/token)": [r["decode_ms"] for r in measured]},
    alt=alt,
    title=title,
    x_label="配置",
    y_label="毫秒",
    translations={"en": {short_label(r): short_label(r, english=True) for r in measured} | {
        alt: f"Model latency, fullgraph compilation against eager: median prefill and per-token decode "
             f"latency of each variant on {DEVICE}; 'growing' is a KV cache grown by torch.cat, 'static' a "
             "preallocated one, CG is CUDA Graphs",
        title: f"Prefill and decode latency ({DEVICE}, lower is better)", "配置": "variant", "毫秒": "ms"}},
)
print(f"eager growing-cache decode: {eager['decode_ms']:.3f} ms/token")

# %% name="anchors"
# Published figures, typed from their sources: shown beside the measurements, never measured here.
ANCHORS = [
    {"来源": "PyTorch 2 论文（Ansel et al., ASPLOS 2024）", "设置": "A100，180 多个模型，推理",
     "指标": "TorchInductor 相对 eager 的几何平均加速比", "数值": 2.27, "性质": "已发表，非本文实测"},
    {"来源": "gpt-fast（PyTorch 博客）", "设置": "Llama-7B，batch 1，A100-80GB（330 W）",
     "指标": "eager 解码 tokens/s", "数值": 25.5, "性质": "已发表，非本文实测"},
    {"来源": "gpt-fast（PyTorch 博客）", "设置": "同上，compile + CUDA Graphs + 静态 KV cache",
     "指标": "解码 tokens/s", "数值": 107.0, "性质": "已发表，非本文实测"},
]
table("anchors", ANCHORS, caption="已发表的参考数字（非本文实测）", translations={"en": {
    "来源": "source", "设置": "setting", "指标": "metric", "数值": "value", "性质": "nature",
    "PyTorch 2 论文（Ansel et al., ASPLOS 2024）": "PyTorch 2 paper (Ansel et al., ASPLOS 2024)",
    "A100，180 多个模型，推理": "A100, 180+ models, inference",
    "TorchInductor 相对 eager 的几何平均加速比": "TorchInductor's geometric-mean speed-up over eager",
    "已发表，非本文实测": "published, not measured here",
    "gpt-fast（PyTorch 博客）": "gpt-fast (PyTorch blog)",
    "Llama-7B，batch 1，A100-80GB（330 W）": "Llama-7B, batch 1, A100-80GB (330 W)",
    "eager 解码 tokens/s": "eager decode tokens/s",
    "同上，compile + CUDA Graphs + 静态 KV cache": "the same, compile + CUDA Graphs + static KV cache",
    "解码 tokens/s": "decode tokens/s",
    "已发表的参考数字（非本文实测）": "Published figures (not measured here)"}})
glue("anchor.pt2_inference_geomean", 2.27)
glue("anchor.gptfast_eager_tok_s", 25.5)
glue("anchor.gptfast_compiled_tok_s", 107.0)
glue("anchor.gptfast_speedup", 107.0 / 25.5)

# %% name="claim"
# The source article: "on a 14B model, fullgraph + inductor cut latency 30-45% and memory 10-15%".
CLAIM = {"model_b": 14, "latency_low": 30, "latency_high": 45, "memory_low": 10, "memory_high": 15}
for k, v in CLAIM.items():
    glue(f"claim.{k}", v)
full = next(r for r in measured if r["variant"] == "compile fullgraph" and r["cache"] == "growing")
cuts = {}
for phase in ("decode", "prefill"):
    # The cut is 1 - 1/speed ratio: its interval follows from the ratio's, and so does the verdict.
    judged = timed[phase].record_verdict(phase, short_label(full), over=short_label(eager))
    cuts[phase] = [100 * (1 - 1 / x) for x in (judged.interval.ratio, judged.interval.low,
                                                judged.interval.high)]
    glue(f"claim.{phase}_cut_pct", cuts[phase][0])
    glue(f"claim.{phase}_cut_low_pct", cuts[phase][1])
    glue(f"claim.{phase}_cut_high_pct", cuts[phase][2])
decode_cut, prefill_cut = cuts["decode"][0], cuts["prefill"][0]
# Total peak includes the weights, which compiling does not shrink; what fusion can save is activations.
memory_cut = 100 * (1 - full["peak_mib"] / eager["peak_mib"]) if ON_GPU else None
activation_cut = 100 * (1 - full["activation_mib"] / eager["activation_mib"]) if ON_GPU else None
glue("claim.memory_cut_pct", memory_cut)
glue("claim.activation_cut_pct", activation_cut)
if ON_GPU:
    glue("claim.memory_note", f"整图编译后峰值显存降低 {memory_cut:.1f}%，激活显存降低 {activation_cut:.1f}%"
         "（各为单次测量，没有区间）")
    glue("claim.memory_note.en", f"with fullgraph compilation the peak memory fell by {memory_cut:.1f}% and "
         f"the activation memory by {activation_cut:.1f}% (single measurements, no interval)")
else:
    glue("claim.memory_note", "这次运行在 CPU 上，torch 的 CPU 分配器没有可重置的峰值计数器，"
         "显存留给 GPU 运行测量")
    glue("claim.memory_note.en", "this run was on a CPU, whose torch allocator keeps no resettable peak "
         "counter; memory is left to a GPU run")
# A CPU run of a toy model says nothing about a 14B model on a GPU: the claim is tested only on a GPU, and
# even there against a model far smaller than 14B, which the sentence says.
glue("claim.tested", ON_GPU)
size = f"{n_params / 1e6:.1f}M"
glue("claim.untested_reason", None if ON_GPU else
     f"本次运行在 CPU 上，模型约 {size} 参数、单线程、float32，与原文的 14B 模型和 GPU 相去太远")
glue("claim.untested_reason.en", None if ON_GPU else
     f"this run was on a CPU, with a model of about {size} parameters, one thread and float32: too far "
     "from the article's 14B model on a GPU")
glue("claim.scope", f"下表把原文的说法与本次 GPU 运行对照；这里的模型约 {size} 参数，远小于原文的 14B，"
     "数字只说明这个模型在这块 GPU 上的情况" if ON_GPU else
     f"本文没有检验这一说法：本次运行在 CPU 上，模型约 {size} 参数、单线程、float32，与原文的 14B 模型和 GPU "
     "相去太远，下表因此只列出原文的数字")
glue("claim.scope.en", f"the table sets the article's claim against this GPU run; the model here has about "
     f"{size} parameters, far fewer than the article's 14B, so the numbers describe this model on this GPU "
     "only" if ON_GPU else
     f"this post does not test the claim: this run was on a CPU, with a model of about {size} parameters, "
     "one thread and float32, too far from the article's 14B model on a GPU, so the table lists the "
     "article's numbers only")


CLAIM_WORDS = {
    "zh": {"metric": "指标", "claimed": "文章声称", "seen": "本次实测（95 % 区间）",
           "decode": "decode 延迟降幅 (%)", "prefill": "prefill 延迟降幅 (%)", "peak": "峰值显存降幅 (%)",
           "activation": "激活显存降幅 (%)",
           "untested": "未检验（CPU 上的小模型）", "single": "（单次）",
           "caption": f"文章的说法（{CLAIM['model_b']}B 模型，fullgraph + inductor）对照本次运行（fullgraph、"
                      "增长 KV cache，相对 eager；负数表示变慢或变大）"},
    "en": {"metric": "metric", "claimed": "the article claims", "seen": "measured here (95 % interval)",
           "decode": "decode latency cut (%)", "prefill": "prefill latency cut (%)",
           "peak": "peak memory cut (%)", "activation": "activation memory cut (%)",
           "untested": "untested (a small model on a CPU)", "single": " (single)",
           "caption": f"The article's claim ({CLAIM['model_b']}B model, fullgraph + inductor) against this "
                      "run (fullgraph, growing KV cache, relative to eager; negative means slower or "
                      "larger)"},
}


def claim_rows(language):
    words, bracket = CLAIM_WORDS[language], TABLE_WORDS[language].bracket
    latency = f"{CLAIM['latency_low']}–{CLAIM['latency_high']}"

    def seen(values):  # a cut with its interval; or one sample; measured on a GPU only
        if not ON_GPU:
            return words["untested"]
        if isinstance(values, float):
            return f"{values:.1f}{words['single']}"
        return f"{values[0]:.1f}" + bracket(f"{values[1]:.1f}–{values[2]:.1f}")

    return [{words["metric"]: words[name], words["claimed"]: claimed, words["seen"]: seen(values)}
            for name, claimed, values in (
                ("decode", latency, cuts["decode"]), ("prefill", latency, cuts["prefill"]),
                ("peak", f"{CLAIM['memory_low']}–{CLAIM['memory_high']}", memory_cut),
                ("activation", "—", activation_cut))]


for language in ("zh", "en"):
    table("claim" if language == "zh" else f"claim.{language}", claim_rows(language),
          caption=CLAIM_WORDS[language]["caption"])
print(f"fullgraph vs eager: decode {decode_cut:+.1f}%  prefill {prefill_cut:+.1f}%  memory {memory_cut}")
