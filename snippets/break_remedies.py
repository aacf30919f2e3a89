# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# blog: {purpose: behaviour}
# ---

# %% [markdown]
# A graph break that `torch.where`, `torch.cond` or `torch._check` cannot remove: a helper calls code
# Dynamo's skip rules forbid it to trace (numpy's Gauss-Legendre quadrature). Four remedies, each with
# the graphs and breaks before and after: `torch.compiler.disable` (the break stays, made explicit),
# `torch.library.custom_op` with a fake implementation (an opaque op in the graph), and
# `torch._dynamo.nonstrict_trace` / `torch.compiler.allow_in_graph` (Dynamo skips the body, AOTAutograd
# traces it). The break message links its page on the graph-break site.

# %% name="helpers" tags=["hide-input"]
import numpy as np
import torch

# blog: start remove-input
from IPython.display import Markdown, display

# blog: end remove-input
from torch._dynamo.utils import counters

# blog: start remove-input
from perfblog.generator import glue, table

glue("torch", torch.__version__)
# blog: end remove-input


def graphs_and_breaks(fn, *args, fullgraph=False):
    """Compile `fn` with a backend that keeps each graph Dynamo hands it; call it once."""
    torch._dynamo.reset()
    counters.clear()
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    out = torch.compile(fn, backend=keep, fullgraph=fullgraph)(*args)
    breaks = sum(counters["graph_break"].values()) + sum(counters["unimplemented"].values())
    return out, graphs, breaks, list(counters["graph_break"]) + list(counters["unimplemented"])


# %% name="setup"
def quad_weights(x):
    """Weigh the last dimension by Gauss-Legendre quadrature weights (numpy: Dynamo will not trace it)."""
    _, w = np.polynomial.legendre.leggauss(x.shape[-1])
    return x * torch.from_numpy(w).to(x.dtype)


def make_model(weigh):
    def model(x):
        y = torch.sin(x) + 1
        return weigh(y).sum(-1)

    return model


x = torch.randn(4, 16)
expected = make_model(quad_weights)(x)

# %% name="before"
out, graphs, breaks, reasons = graphs_and_breaks(make_model(quad_weights), x)
print(f"{len(graphs)} graphs, {breaks} breaks")
message = reasons[0].splitlines()
print(message[0])
print(message[1].strip())
print(message[-1].strip())  # every break message ends with its page on the graph-break site
# blog: start hide-input
torch.testing.assert_close(out, expected)
assert len(graphs) == 3 and breaks >= 1
before_breaks = breaks
assert message[0] == "Attempted to call function marked as skipped"
assert "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb" in message[-1]
# blog: end hide-input
# blog: start remove-input
url = message[-1].split()[-1]
gb = url.rsplit("/", 1)[-1].removesuffix(".html")
display(Markdown(f"[{gb}]({url})"))
rows = [("原样", "as written", len(graphs), breaks, False)]
glue("before.graphs", len(graphs))
glue("before.breaks", breaks)
glue("before.reason", message[0])
glue("before.gb", gb)
# blog: end remove-input

# %% name="fullgraph_refuses" raises=true
torch.compile(make_model(quad_weights), fullgraph=True, backend="eager")(x)

# %% name="disable"
weigh_eagerly = torch.compiler.disable(quad_weights)
out, graphs, breaks, reasons = graphs_and_breaks(make_model(weigh_eagerly), x)
print(f"{len(graphs)} graphs, {breaks} breaks:", reasons[0].splitlines()[0])
# blog: start hide-input
torch.testing.assert_close(out, expected)
assert len(graphs) == 2 and 1 <= breaks < before_breaks  # Dynamo no longer looks inside the helper
assert reasons[0].startswith("Skip calling `torch.compiler.disable()`d function")
# blog: end hide-input
# blog: start remove-input
rows.append(("torch.compiler.disable", "torch.compiler.disable", len(graphs), breaks, False))
glue("disable.graphs", len(graphs))
glue("disable.breaks", breaks)
glue("disable.reason", reasons[0].splitlines()[0])
# blog: end remove-input


# %% name="custom_op"
@torch.library.custom_op("blog::quad_weights", mutates_args=())
def quad_weights_op(x: torch.Tensor) -> torch.Tensor:
    return quad_weights(x)  # runs eagerly, any Python inside


@quad_weights_op.register_fake
def _(x):
    return torch.empty_like(x)  # only the output's shape, dtype and device, for tracing


out, graphs, breaks, _ = graphs_and_breaks(make_model(quad_weights_op), x, fullgraph=True)
print(f"{len(graphs)} graph, {breaks} breaks")
print(graphs[0].code.strip())
# blog: start hide-input
torch.testing.assert_close(out, expected)
assert len(graphs) == 1 and breaks == 0
assert "torch.ops.blog.quad_weights.default" in graphs[0].code
# blog: end hide-input
# blog: start remove-input
rows.append(("torch.library.custom_op", "torch.library.custom_op", len(graphs), breaks, True))
glue("custom_op.graphs", len(graphs))
glue("custom_op.breaks", breaks)
# blog: end remove-input

# %% name="nonstrict"
if hasattr(torch._dynamo, "nonstrict_trace"):  # the newer API, where this torch has it
    skip_dynamo = torch._dynamo.nonstrict_trace(quad_weights)
else:
    skip_dynamo = torch.compiler.allow_in_graph(quad_weights)
out, graphs, breaks, _ = graphs_and_breaks(make_model(skip_dynamo), x, fullgraph=True)
print(f"{skip_dynamo.__name__}: {len(graphs)} graph, {breaks} breaks")
print("\n".join(line for line in graphs[0].code.splitlines() if "quad_weights" in line))
# blog: start hide-input
torch.testing.assert_close(out, expected)
assert len(graphs) == 1 and breaks == 0
# blog: end hide-input
# blog: start remove-input
used = "torch._dynamo.nonstrict_trace" if hasattr(torch._dynamo, "nonstrict_trace") else "allow_in_graph"
rows.append((used, used, len(graphs), breaks, True))
glue("nonstrict.api", used)
glue("nonstrict.graphs", len(graphs))
glue("nonstrict.breaks", breaks)
# blog: end remove-input

# %% name="inductor"
# The same remedies under the default backend (Inductor), as a whole graph:
for name, weigh in {"custom_op": quad_weights_op, "nonstrict_trace": skip_dynamo}.items():
    torch._dynamo.reset()
    compiled = torch.compile(make_model(weigh), fullgraph=True)
    print(name, "matches eager:", torch.allclose(compiled(x), expected))
# blog: start hide-input
    torch.testing.assert_close(compiled(x), expected)
# blog: end hide-input
# blog: start remove-input
zh = [{"写法": a, "图": g, "断裂": b, "fullgraph=True": "通过" if ok else "报错"} for a, _, g, b, ok in rows]
en = [{"remedy": e, "graphs": g, "breaks": b, "fullgraph=True": "compiles" if ok else "raises"}
      for _, e, g, b, ok in rows]
table("remedies", zh, caption=f"同一个断点的几种处理（torch {torch.__version__}）")
table("remedies.en", en, caption=f"One break and its remedies (torch {torch.__version__})")
# blog: end remove-input
