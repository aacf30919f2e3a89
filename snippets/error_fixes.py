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
# The source's third message, "Guard failure on data-dependent expression", comes with the advice to
# use a symbolic shape or to fix the dimension. The error is about a value, not a shape: Python branches
# on a number read from a tensor. Marking shapes dynamic changes nothing; what works is telling the
# compiler what you know (`torch._check`, which becomes a run-time check) or keeping the decision in the
# graph (`torch.cond`, `torch.where`) instead of branching on `.item()`.

# %% name="helpers" tags=["hide-input"]
import torch

# blog: start remove-input
from perfblog.generator import glue, table

glue("torch", torch.__version__)
# blog: end remove-input


def compile_error(fn, *args, **options):
    """Compile `fn` with fullgraph=True, call it, and return the compiler's error (fail if there is none)."""
    try:
        torch.compile(fn, fullgraph=True, **options)(*args)
    except torch._dynamo.exc.TorchDynamoException as exc:  # the base class: subclasses vary across versions
        return exc
    raise AssertionError(f"{fn.__name__} compiled with {options} and raised nothing")


def describe(exc):
    """The class name and the first line of the message: what the post quotes."""
    return {"exception": type(exc).__name__, "first_line": str(exc).strip().splitlines()[0]}


# %% name="setup"
torch.manual_seed(0)
many = torch.randn(16).abs() + 0.5  # 16 positive values
few = -many  # none


def clip_if_many(x):
    n = (x > 0).sum().item()  # a value read from the tensor...
    if n > 4:  # ...decides which code runs: Dynamo cannot pick a branch for every input
        return x.clamp(max=1.0)
    return x


# %% name="fails" raises=true
torch.compile(clip_if_many, fullgraph=True)(many)

# %% name="dynamic_does_not_help"
# The source's advice: make the shapes symbolic. The error stays, because n is data, not a shape.
# blog: start remove-input
rows = []
# blog: end remove-input
for dynamic in (None, True):
    torch._dynamo.reset()
    seen = describe(compile_error(clip_if_many, many, dynamic=dynamic, backend="eager"))
    print(f"dynamic={dynamic}: {seen['exception']}: {seen['first_line']}")
    # blog: start hide-input
    assert "Could not guard on data-dependent expression" in seen["first_line"], seen
    # blog: end hide-input
    # blog: start remove-input
    rows.append({"写法": f"if n > 4（dynamic={dynamic}）", "结果": seen["exception"],
                 "第一行": seen["first_line"]})
    # blog: end remove-input
# blog: start remove-input
glue("fails.message", rows[0]["第一行"])
glue("fails.exception", rows[0]["结果"])
# blog: end remove-input


# %% name="fixes"
def clip_checked(x):
    n = (x > 0).sum().item()
    torch._check(n > 4)  # "this always holds": the branch is decided at compile time, checked at run time
    if n > 4:
        return x.clamp(max=1.0)
    return x


def clip_cond(x):  # both branches traced into the graph; the tensor predicate picks one per call
    return torch.cond((x > 0).sum() > 4, lambda t: t.clamp(max=1.0), lambda t: t.clone(), (x,))


def clip_where(x):  # both branches computed, one selected: no host decision at all
    return torch.where((x > 0).sum() > 4, x.clamp(max=1.0), x)


# %% name="fixes_check"
outputs = {}
for fn, inputs in ((clip_checked, (many,)), (clip_cond, (many, few)), (clip_where, (many, few))):
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True)
    outputs[fn.__name__] = [(x, compiled(x)) for x in inputs]
    print(f"{fn.__name__}: compiles with fullgraph=True, equal to eager")
# blog: start hide-input
for pairs in outputs.values():
    for x, out in pairs:
        torch.testing.assert_close(out, clip_if_many(x))
# blog: end hide-input
# blog: start remove-input
for name, pairs in outputs.items():
    rows.append({"写法": name, "结果": "编译通过（fullgraph=True）",
                 "第一行": f"与 eager 一致（{'、'.join('n>4' if x is many else 'n≤4' for x, _ in pairs)}）"})
# blog: end remove-input
# torch._check is a promise, and the compiled code enforces it: an input that breaks it fails loudly.
torch._dynamo.reset()
try:
    torch.compile(clip_checked, fullgraph=True)(few)
except RuntimeError as exc:
    broken = str(exc).strip().splitlines()[0]
else:
    raise AssertionError("torch._check did not become a run-time check")
print(f"clip_checked(few): RuntimeError: {broken}")
# blog: start remove-input
rows.append({"写法": "clip_checked（n≤4 的输入）", "结果": "RuntimeError", "第一行": broken})
glue("check.runtime_error", broken)
caption = f"数据相关分支的报错与改法（torch {torch.__version__}）"
table("fixes", rows, caption=caption, translations={"en": {
    "写法": "code", "结果": "outcome", "第一行": "first line / check", **{
        f"if n > 4（dynamic={d}）": f"if n > 4 (dynamic={d})" for d in (None, True)},
    "编译通过（fullgraph=True）": "compiles (fullgraph=True)", "与 eager 一致（n>4）": "equal to eager (n>4)",
    "与 eager 一致（n>4、n≤4）": "equal to eager (n>4, n≤4)",
    "clip_checked（n≤4 的输入）": "clip_checked (input with n≤4)",
    caption: f"A data-dependent branch: the error and the fixes (torch {torch.__version__})"}})
# blog: end remove-input
