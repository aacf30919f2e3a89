# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# blog:
#   purpose: behaviour
#   timeout: 1200
# ---

# %% [markdown]
# Sizes 0 and 1 under dynamic shapes. A backed symbol (dynamic=True, mark_dynamic, maybe_mark_dynamic,
# automatic dynamic) has a hint, the first size seen, and Dynamo specialises 0 and 1: such a size gets a
# graph of its own. An unbacked symbol (torch._dynamo.decorators.mark_unbacked) has no hint and is not
# specialised; neither is a backed one under torch.fx.experimental._config.backed_size_oblivious. The
# price of no hint: code that branches on the size cannot be traced. Counted with Inductor.

# %% name="setup"
import os
import tempfile

import torch
import torch.fx.experimental._config as fx_config
import torch.nn.functional as F
from torch._dynamo.utils import counters

# blog: start remove-input
from perfblog.generator import glue, table

# blog: end remove-input
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SIZES = [4, 8, 1, 0]
# blog: start remove-input
glue("torch", torch.__version__)
glue("sizes", str(SIZES))
# blog: end remove-input


def activate(x):
    return F.gelu(x * 2 + 1).sum(-1)


def graphs_after_each_call(mark=None, dynamic=None, oblivious=False, sizes=SIZES, cache_dir=None):
    """Graphs compiled so far after each call over `sizes`, the batch dimension marked with `mark`.

    Each count starts in an empty Inductor cache directory unless given one: what an earlier compile left
    in the FX graph cache can change the count (the cell cache_key).
    """
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir or tempfile.mkdtemp(prefix="inductor-")
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(activate, dynamic=dynamic)
    seen = []
    with fx_config.patch(backed_size_oblivious=oblivious):
        for n in sizes:
            x = torch.randn(n, 16, device=DEVICE)
            if mark is not None:
                mark(x, 0)
            out = compiled(x)
            # blog: start remove-input
            torch.testing.assert_close(out, activate(x))
            # blog: end remove-input
            seen.append(counters["stats"]["unique_graphs"])
    return seen


# %% name="counts"
settings = {
    "default (dynamic=None)": graphs_after_each_call(),
    "dynamic=True": graphs_after_each_call(dynamic=True),
    "mark_dynamic": graphs_after_each_call(mark=torch._dynamo.mark_dynamic),
    "maybe_mark_dynamic": graphs_after_each_call(mark=torch._dynamo.maybe_mark_dynamic),
    "mark_unbacked": graphs_after_each_call(mark=torch._dynamo.decorators.mark_unbacked),
    "backed_size_oblivious": graphs_after_each_call(oblivious=True),
    "backed_size_oblivious + dynamic=True": graphs_after_each_call(dynamic=True, oblivious=True),
}
for label, seen in settings.items():
    print(f"{label:38} graphs after each size {SIZES}: {seen}")
# blog: start hide-input
# Backed symbols: 4 and 8 share a graph, then 1 and 0 each get their own.
for label in ("dynamic=True", "mark_dynamic", "maybe_mark_dynamic"):
    assert settings[label] == [1, 1, 2, 3], (label, settings[label])
assert settings["default (dynamic=None)"] == [1, 2, 3, 4], settings  # static first, then as above
# No hint, no 0/1 specialisation: one graph for every size.
assert settings["mark_unbacked"] == [1, 1, 1, 1], settings
assert settings["backed_size_oblivious + dynamic=True"] == [1, 1, 1, 1], settings
assert settings["backed_size_oblivious"] == [1, 2, 2, 2], settings  # static first, then one dynamic graph
# blog: end hide-input
# blog: start remove-input
caption = f"依次以批大小 {SIZES} 调用，每次调用后已编译的图数（Inductor，每行一个空的缓存目录）"
table("counts", [{"设置": label, **{f"批大小 {n} 之后": count for n, count in zip(SIZES, seen, strict=True)}}
                 for label, seen in settings.items()],
      caption=caption,
      translations={"en": {"设置": "setting", **{f"批大小 {n} 之后": f"after size {n}" for n in SIZES},
                           caption: f"Graphs compiled so far after each call with batch sizes {SIZES} in "
                                    "turn (Inductor, an empty cache directory per row)"}})
for label, key in (("dynamic=True", "backed"), ("mark_unbacked", "unbacked"),
                   ("backed_size_oblivious + dynamic=True", "oblivious"),
                   ("default (dynamic=None)", "default")):
    glue(f"{key}.graphs", settings[label][-1])
# blog: end remove-input

# %% name="cache_key"
# backed_size_oblivious is not part of the FX graph cache's key: a graph cached by a compile without it
# is found again with it, and brings back the guard that made size 1 a graph of its own.
shared = tempfile.mkdtemp(prefix="inductor-")
graphs_after_each_call(dynamic=True, sizes=[4, 8], cache_dir=shared)  # fills the cache, no oblivious
again = graphs_after_each_call(dynamic=True, oblivious=True, cache_dir=shared)
print(f"backed_size_oblivious + dynamic=True after a compile without it: {again}")
print("FX graph cache:", dict(counters["inductor"]))
# blog: start hide-input
assert counters["inductor"]["fxgraph_cache_hit"] >= 1, dict(counters["inductor"])
assert again == [1, 1, 2, 2], again  # size 1 compiled again; size 0 reuses that graph
# blog: end hide-input
# blog: start remove-input
glue("cache_key.graphs", again[-1])
# blog: end remove-input

# %% name="mark_vs_maybe"
def pick(x):
    if x.shape[0] == 4:  # specialises the size: a guard x.size(0) == 4
        return x * 2
    return x + 1


torch._dynamo.reset()
x = torch.randn(4, 16, device=DEVICE)
torch._dynamo.maybe_mark_dynamic(x, 0)
torch.compile(pick, backend="eager")(x)  # maybe_mark_dynamic: a hint, dropped quietly
torch._dynamo.reset()
x = torch.randn(4, 16, device=DEVICE)
torch._dynamo.mark_dynamic(x, 0)
try:
    torch.compile(pick, backend="eager")(x)  # mark_dynamic: a promise, checked
except torch.fx.experimental.symbolic_shapes.ConstraintViolationError as error:
    mark_dynamic_error = str(error)
else:
    raise AssertionError("mark_dynamic let the size be specialised")
print(mark_dynamic_error.splitlines()[0])
print(next(line for line in mark_dynamic_error.splitlines() if "maybe_mark_dynamic" in line).strip())
# blog: start hide-input
assert "Constraints violated" in mark_dynamic_error, mark_dynamic_error
# blog: end hide-input
# blog: start remove-input
glue("mark_dynamic.error", mark_dynamic_error.splitlines()[0].split("!")[0])
# blog: end remove-input

# %% name="unbacked_branch"
def clip_long(x):
    if x.shape[0] > 1:  # needs the size's value: with an unbacked size there is none at trace time
        return x[:1]
    return x


torch._dynamo.reset()
x = torch.randn(4, 16, device=DEVICE)
torch._dynamo.decorators.mark_unbacked(x, 0)
try:
    torch.compile(clip_long, backend="eager", fullgraph=True)(x)
except torch._dynamo.exc.UserError as error:
    unbacked_error = str(error)
else:
    raise AssertionError("a branch on an unbacked size compiled")
print(unbacked_error.splitlines()[0])
# blog: start hide-input
assert "Could not guard on data-dependent expression" in unbacked_error, unbacked_error
# blog: end hide-input
# blog: start remove-input
glue("unbacked.error", unbacked_error.splitlines()[0])
# blog: end remove-input
