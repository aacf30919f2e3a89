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
# What `fullgraph=True` refuses, with the exception the installed torch really raises: data-dependent
# branching, `print`, and `.tolist()` on a float tensor. The `raises=true` cells show the error as a
# reader would see it; the `catch` cell records class and first line and asserts what the post says.

# %% name="setup"
import torch

# blog: start remove-input
from perfblog.generator import glue, table

glue("torch", torch.__version__)
# blog: end remove-input
torch.manual_seed(0)
x = torch.randn(8)


def branch(x):
    if x.sum() > 0:  # Python decides on tensor data: not traceable into one graph
        return x * 2
    return -x


def shout(x):
    print("hello")  # a side effect Dynamo cannot put into a graph
    return x + 1


def float_list(x):
    return torch.tensor(x.tolist())  # float values leave the graph as Python floats


# %% name="branch" raises=true
torch.compile(branch, fullgraph=True, backend="eager")(x)

# %% name="print" raises=true
torch.compile(shout, fullgraph=True, backend="eager")(x)

# %% name="tolist" raises=true
torch.compile(float_list, fullgraph=True, backend="eager")(x)

# %% name="catch"
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


expected = {  # pattern -> (function, code shown in the post, first line the post quotes)
    "branch": (branch, "if x.sum() > 0:", "Data-dependent branching"),
    "print": (shout, 'print("hello")', "Failed to trace builtin operator"),
    "tolist": (float_list, "torch.tensor(x.tolist())", "Tensor.tolist() with non-integer tensor"),
}
rows = []
for pattern, (fn, code, first) in expected.items():
    exc = compile_error(fn, x, backend="eager")
    seen = describe(exc)
    assert isinstance(exc, torch._dynamo.exc.TorchDynamoException)
    assert isinstance(exc, RuntimeError), "the post says every one of these is a RuntimeError"
    assert seen["exception"] == "Unsupported", seen
    assert seen["first_line"] == first, seen
    glue(f"{pattern}.exception", seen["exception"])
    glue(f"{pattern}.message", seen["first_line"])
    rows.append({"写法": pattern, "代码": code, "异常": seen["exception"], "报错第一行": seen["first_line"]})
    print(f"{pattern:7} {seen['exception']}: {seen['first_line']}")
glue("base_class", "TorchDynamoException")
caption = f"fullgraph=True 下的报错（torch {torch.__version__}，backend='eager'）"
table("errors", rows, caption=caption, translations={"en": {
    "写法": "pattern", "代码": "code", "异常": "exception", "报错第一行": "first line of the message",
    caption: f"What fullgraph=True raises (torch {torch.__version__}, backend='eager')"}})

# %% name="print_fix"
# print can stay in a full graph when Dynamo may move it after the graph: a logging function.
torch._dynamo.reset()
torch._dynamo.config.reorderable_logging_functions.add(print)
try:
    out = torch.compile(shout, fullgraph=True, backend="eager")(x)
finally:
    torch._dynamo.config.reorderable_logging_functions.discard(print)
# blog: start hide-input
torch.testing.assert_close(out, x + 1)
# blog: end hide-input
# blog: start remove-input
glue("print_fix.works", True)
# blog: end remove-input
