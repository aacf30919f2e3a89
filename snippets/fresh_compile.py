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
# What a same-process compile time leaves out: a new process's first compile, which pays the imports of
# Dynamo and Inductor and the compiler's start-up once. One tiny function timed four ways: in a new
# interpreter (the harness starts it with this kernel's sys.executable) with an empty Inductor cache and
# with the cache that run filled, and in this process, cold and warm cache. Compiling is CPU work, so it is
# measured on the CPU on every machine (the GPU run leaves this result alone). One sample each: shown, never
# asserted.

# %% name="compile_cost"
import torch

# This blog's harness (the perfblog package): first calls timed in this process and in new processes.
from perfblog.generator.bench import TABLE_WORDS, first_calls, fresh_first_calls, readable

TINY = "lambda t: torch.relu(t) * 2 + 1"
fresh = fresh_first_calls(f"tiny = torch.compile({TINY})\nx = torch.randn(64, 64)", "tiny(x)", device="cpu")
tiny = torch.compile(eval(TINY))
same = first_calls(lambda: tiny(torch.randn(64, 64)), device="cpu")
cost = {"fresh.cold": fresh.cold, "fresh.warm": fresh.warm, "same.cold": same.cold, "same.warm": same.warm}
for name, first in cost.items():
    print(f"{name:10} {first.wall_s:7.3f} s")
print(f"import torch in the new process: {fresh.cold.import_s:.2f} s")
# blog: start remove-input
from perfblog.generator import glue, table  # noqa: E402  (recording this page's values: not shown)

COST_WORDS = {
    "zh": {"where": "在哪里编译", "cache": "Inductor 缓存", "first": "首次调用 s（Dynamo / Inductor）",
           "fresh": "新进程", "same": "同一进程（编译器已启动）", "cold": "空", "warm": "已填满",
           "caption": f"torch.compile({TINY}) 在 64×64 输入上的首次调用（cpu，单次测量）；新进程里 "
                      f"import torch 另用了 {fresh.cold.import_s:.2f} s"},
    "en": {"where": "where it compiles", "cache": "Inductor cache",
           "first": "first call s (Dynamo / Inductor)",
           "fresh": "a new process", "same": "the same process (compiler started)", "cold": "empty",
           "warm": "filled",
           "caption": f"The first call of torch.compile({TINY}) on a 64×64 input (cpu, single samples); "
                      f"import torch took another {fresh.cold.import_s:.2f} s in the new process"},
}
for language, words in COST_WORDS.items():
    rows = []
    for name, first in cost.items():
        where, cache = name.split(".")
        split = TABLE_WORDS[language].bracket(f"{readable(first.dynamo_s)} / {readable(first.inductor_s)}")
        rows.append({words["where"]: words[where], words["cache"]: words[cache],
                     words["first"]: f"{readable(first.wall_s)}{split}"})
    table("compile_cost" if language == "zh" else f"compile_cost.{language}", rows, caption=words["caption"])
glue("torch", torch.__version__)
for name, first in cost.items():
    glue(f"{name}_s", first.wall_s, unit="s")
glue("import_s", fresh.cold.import_s, unit="s")
# blog: end remove-input
