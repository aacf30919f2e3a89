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
# A graph break in a training step splits the backward too. AOTAutograd builds one backward graph per
# forward graph, so a forward broken in two gives two backward graphs, run by the autograd engine with
# Python between them. Compiled autograd (`torch._dynamo.config.compiled_autograd = True`) traces the
# whole backward, as the autograd engine sees it, into one graph of its own. Graphs are counted with a
# backend that keeps each forward and backward graph AOTAutograd hands it; gradients match eager.

# %% name="helpers" tags=["hide-input"]
import copy

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._dynamo.utils import counters
from torch._functorch.aot_autograd import make_boxed_func

# blog: start remove-input
from perfblog.generator import glue, table

glue("torch", torch.__version__)
# blog: end remove-input


def counting_backend():
    """A backend like aot_eager that keeps every forward and backward graph AOTAutograd compiles."""
    kept = {"forward": [], "backward": []}

    def keep(kind):
        def compiler(gm, example_inputs):
            kept[kind].append(gm)
            return make_boxed_func(gm.forward)

        return compiler

    return aot_autograd(fw_compiler=keep("forward"), bw_compiler=keep("backward")), kept


# %% name="setup"
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 8))
x, target = torch.randn(16, 32), torch.randn(16, 8)


def train_step(model, x, target):
    hidden = model[1](model[0](x))
    print("hidden mean", hidden.mean())  # logging in the middle: the graph breaks here
    loss = torch.nn.functional.mse_loss(model[2](hidden), target)
    loss.backward()
    return loss


reference = copy.deepcopy(net)
reference_loss = train_step(reference, x, target)  # eager: the gradients to compare with

# %% name="split"
backend, kept = counting_backend()
model = copy.deepcopy(net)
torch._dynamo.reset()
counters.clear()
torch.compile(train_step, backend=backend)(model, x, target)
print(f"forward graphs: {len(kept['forward'])}, backward graphs: {len(kept['backward'])}")
print("breaks:", [reason.splitlines()[0] for reason in counters["graph_break"]])
# blog: start hide-input
for p, q in zip(model.parameters(), reference.parameters(), strict=True):
    torch.testing.assert_close(p.grad, q.grad)
assert len(kept["forward"]) == len(kept["backward"]) == 2
assert any(reason.startswith("Unsupported Tensor.backward() call") for reason in counters["graph_break"])
# blog: end hide-input
# blog: start remove-input
split = {"forward": len(kept["forward"]), "backward": len(kept["backward"]), "compiled_autograd": 0}
glue("split.forward", split["forward"])
glue("split.backward", split["backward"])
glue("split.breaks", len(counters["graph_break"]))
# blog: end remove-input

# %% name="compiled_autograd"
backend, kept = counting_backend()
model = copy.deepcopy(net)
torch._dynamo.reset()
counters.clear()
torch._dynamo.config.compiled_autograd = True
try:
    torch.compile(train_step, backend=backend)(model, x, target)
finally:
    torch._dynamo.config.compiled_autograd = False
captures = counters["compiled_autograd"]["captures"]
print(f"forward graphs: {len(kept['forward'])}, AOT backward graphs: {len(kept['backward'])}")
print(f"backward graphs captured by compiled autograd: {captures}")
# blog: start hide-input
for p, q in zip(model.parameters(), reference.parameters(), strict=True):
    torch.testing.assert_close(p.grad, q.grad)
assert captures == 1
assert len(kept["backward"]) == 0  # no per-piece backward: the whole backward is one graph
# the captured backward is compiled like any graph that needs no gradient: as one more forward graph
assert len(kept["forward"]) == 2 + captures
# blog: end hide-input
# blog: start remove-input
whole = {"forward": split["forward"], "backward": len(kept["backward"]), "compiled_autograd": captures}
glue("ca.captures", captures)
glue("ca.backward", whole["backward"])
table("backward", [
    {"设置": "默认", "前向图": split["forward"], "AOT 反向图": split["backward"],
     "compiled autograd 反向图": split["compiled_autograd"]},
    {"设置": "compiled_autograd = True", "前向图": whole["forward"], "AOT 反向图": whole["backward"],
     "compiled autograd 反向图": whole["compiled_autograd"]},
], caption=f"前向断一次之后的反向图（torch {torch.__version__}）")
table("backward.en", [
    {"setting": "default", "forward graphs": split["forward"], "AOT backward graphs": split["backward"],
     "compiled autograd backward graphs": split["compiled_autograd"]},
    {"setting": "compiled_autograd = True", "forward graphs": whole["forward"],
     "AOT backward graphs": whole["backward"],
     "compiled autograd backward graphs": whole["compiled_autograd"]},
], caption=f"Backward graphs after one forward break (torch {torch.__version__})")
# blog: end remove-input
