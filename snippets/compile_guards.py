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
# Seeing and stopping what the compiler does behind your back. `TORCH_LOGS=graph_breaks,recompiles`
# says where a graph broke and why a function was compiled again (captured here, not pasted); a break
# inside a loop makes Dynamo give up on the whole function; and two guards turn silent fallbacks into
# errors, as a CI job wants them: `torch.compiler.set_stance("fail_on_recompile")` and
# `torch._dynamo.error_on_graph_break(True)`.

# %% name="helpers" tags=["hide-input"]
import contextlib
import functools
import io
import re
from types import SimpleNamespace

import torch
from torch._dynamo.utils import counters

# blog: start remove-input
from perfblog.generator import glue, table

glue("torch", torch.__version__)
# blog: end remove-input
#: torch's log prefix (level, time, process id, source line) changes on every run: it is cut off.
LOG_PREFIX = re.compile(r"^[A-Z]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] ")
#: What remains before a message: the frame id and the artifact, "[0/1] [__recompiles] ".
LOG_TAGS = re.compile(r"^(\[[^\]]*\] )+")


@contextlib.contextmanager
def torch_logs(**artifacts):
    """What TORCH_LOGS=<artifacts> prints inside the block, one list item per line, prefixes removed."""
    lines = []
    with contextlib.redirect_stderr(io.StringIO()) as buffer:
        torch._logging.set_logs(**artifacts)  # its handlers write to the stderr of this moment: the buffer
    try:
        yield lines
    finally:
        torch._logging.set_logs()
        lines.extend(LOG_PREFIX.sub("", line) for line in buffer.getvalue().splitlines())


def matching(lines, pattern):
    return [line for line in lines if re.search(pattern, line)]


def message(line):
    """A logged line without its frame id and artifact tags: the words torch logged."""
    return LOG_TAGS.sub("", line).strip()


def first_line(text):
    return str(text).strip().splitlines()[0]


def count_compiles(run):
    """Call `run()` and count what Dynamo did meanwhile: graphs compiled, graph breaks and their reasons."""
    counters.clear()
    run()
    breaks = counters["graph_break"] + counters["unimplemented"]  # a break on tensor data lands in the latter
    return SimpleNamespace(graphs=counters["stats"]["unique_graphs"], graph_breaks=sum(breaks.values()),
                           break_reasons=list(breaks))


# %% name="setup"
torch.manual_seed(0)


def shout(x):
    x = x * 2
    print("step")  # a side effect: the graph breaks here
    return x.relu()


def shout_in_loop(x):
    for i in range(3):
        x = x * 2 + i
        print("step", i)  # the same break, inside a loop
    return x.relu()


# %% name="logs"
torch._dynamo.reset()
compiled = torch.compile(shout, backend="eager", dynamic=False)
with torch_logs(graph_breaks=True, recompiles=True) as logged:
    compiled(torch.randn(8))
    compiled(torch.randn(32))  # another size: a recompile, and the logs say which guard failed
breaks = matching(logged, r"Graph break in user code|Graph Break Reason")
recompiles = matching(logged, r"Recompiling function|size mismatch")
print("\n".join(breaks + recompiles))
# blog: start hide-input
assert breaks and recompiles, logged
assert any("size mismatch at index 0. expected 8, actual 32" in line for line in recompiles), recompiles
# blog: end hide-input
# blog: start remove-input
glue("logs.break_reason", message(breaks[-1]))
guard = next(line for line in recompiles if "expected 8, actual 32" in line)
glue("logs.recompile_reason", message(guard).removeprefix("- "))
# blog: end remove-input

# %% name="loop_skip"
found = {}
for fn in (shout, shout_in_loop):
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager")
    with torch_logs(graph_breaks=True) as logged:
        stats = count_compiles(functools.partial(compiled, torch.randn(8)))
    gave_up = [message(line) for line in matching(logged, r"falling back to eager")]
    found[fn.__name__] = (stats.graphs, gave_up)
    print(f"{fn.__name__}: graphs={stats.graphs}", *gave_up)
# blog: start hide-input
assert found["shout"] == (2, []), found  # before and after the break: two graphs
graphs, gave_up = found["shout_in_loop"]
assert graphs == 0, found  # the break is inside a loop: nothing compiled, the frame runs eagerly
assert "falling back to eager" in gave_up[0], found
# blog: end hide-input
# blog: start remove-input
caption = f"同一个 print 断点，放在循环外与循环内（torch {torch.__version__}）"
table("loop_skip", [{"函数": name, "图": graphs, "日志": logs[0] if logs else "—"}
                    for name, (graphs, logs) in found.items()],
      caption=caption, translations={"en": {
          "函数": "function", "图": "graphs", "日志": "log (TORCH_LOGS=graph_breaks)",
          caption: f"The same print break, outside and inside a loop (torch {torch.__version__})"}})
glue("loop.graphs", found["shout_in_loop"][0])
glue("straight.graphs", found["shout"][0])
glue("loop.log", found["shout_in_loop"][1][0])
# blog: end remove-input


# %% name="fail_on_recompile"
def scale(x):
    return x * 2


torch._dynamo.reset()
compiled = torch.compile(scale, backend="eager", dynamic=False)
compiled(torch.randn(8))  # the shapes a deployment expects, compiled once
with torch.compiler.set_stance("fail_on_recompile"):
    compiled(torch.randn(8))  # same shape: fine
    try:
        compiled(torch.randn(16))
    except RuntimeError as exc:
        recompile_error = first_line(str(exc))
    else:
        raise AssertionError("fail_on_recompile let a recompile through")
print(recompile_error)
# blog: start hide-input
assert recompile_error.startswith("Detected recompile when torch.compile stance is 'fail_on_recompile'")
# blog: end hide-input
# blog: start remove-input
glue("stance.error", recompile_error.split(". filename")[0])
# blog: end remove-input

# %% name="error_on_graph_break"
torch._dynamo.reset()
lenient = torch.compile(shout, backend="eager")  # no fullgraph: breaks would be silent
try:
    with torch._dynamo.error_on_graph_break(True):
        lenient(torch.randn(8))
except torch._dynamo.exc.TorchDynamoException as exc:
    break_error = f"{type(exc).__name__}: {first_line(str(exc))}"
else:
    raise AssertionError("error_on_graph_break(True) let a graph break through")
print(break_error)
torch._dynamo.reset()
lenient(torch.randn(8))  # outside the block the same function breaks quietly again
# blog: start hide-input
assert break_error == "Unsupported: Failed to trace builtin operator", break_error
# blog: end hide-input
# blog: start remove-input
glue("error_on_graph_break.error", break_error)
# blog: end remove-input
