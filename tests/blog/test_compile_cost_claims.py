"""What the post on the cost of torch.compile says, asserted in-process on tiny CPU inputs.

Each test is one sentence of torch-compile-compile-cost.md (and its English companion). Dynamo's decisions
do not depend on the backend, so the cheap "eager" backend is used where the sentence is about Dynamo;
Inductor where it is about Inductor's caches. Every compile that touches the Inductor cache gets an empty
cache directory of its own: what an earlier compile left there changes the counts (one of the claims).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytestmark = pytest.mark.torch
fx_config = pytest.importorskip("torch.fx.experimental._config")
counters = torch._dynamo.utils.counters
#: Inductor's first import deprecates a torch.jit API inside torch itself.
inductor = pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")


@pytest.fixture(autouse=True)
def fresh_dynamo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch._dynamo.reset()
    counters.clear()
    yield
    torch._dynamo.reset()


def activate(x):
    return F.gelu(x * 2 + 1).sum(-1)


def graphs_after_each_call(sizes, mark=None, backend="eager", oblivious=False, **options) -> list[int]:
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(activate, backend=backend, **options)
    seen = []
    with fx_config.patch(backed_size_oblivious=oblivious):
        for n in sizes:
            x = torch.randn(n, 16)
            if mark is not None:
                mark(x, 0)
            compiled(x)
            seen.append(counters["stats"]["unique_graphs"])
    return seen


# --- the compile boundary ----------------------------------------------------------------------------

def test_a_compiled_step_called_in_a_loop_and_a_compiled_loop_are_one_graph_each():
    def step(x):
        return torch.tanh(x) * 0.5 + x

    compiled_step = torch.compile(step, backend="eager")

    def loop(x):
        for _ in range(16):
            x = step(x)
        return x

    def loop_over_compiled_step(x):
        for _ in range(16):
            x = compiled_step(x)
        return x

    x = torch.randn(64)
    for fn in (loop_over_compiled_step, torch.compile(loop, backend="eager")):
        torch._dynamo.reset()
        counters.clear()
        torch.testing.assert_close(fn(x), loop(x))
        assert counters["stats"]["unique_graphs"] == 1 and not counters["graph_break"]


@inductor
def test_inductor_fuses_the_elementwise_chain_and_the_unrolled_loop_into_one_kernel_each():
    from torch._inductor.utils import run_and_get_code

    def chain(x):
        return F.gelu(2 * x + 1) * torch.sigmoid(x) - torch.tanh(x)

    def loop(x):
        for _ in range(16):
            x = torch.tanh(x) * 0.5 + x
        return x

    for fn in (chain, loop):
        torch._dynamo.reset()
        _, (code, *_) = run_and_get_code(torch.compile(fn), torch.randn(64))
        assert len(set(re.findall(r"cpp_fused_\w+", code))) == 1, code


# --- caches ------------------------------------------------------------------------------------------

@inductor
def test_the_fx_graph_and_aot_autograd_caches_are_on_and_answer_a_recompile_after_reset():
    assert torch._inductor.config.fx_graph_cache and torch._functorch.config.enable_autograd_cache
    x = torch.randn(8, 16)
    torch.compile(activate)(x)
    assert counters["inductor"]["fxgraph_cache_miss"] == 1
    assert counters["aot_autograd"]["autograd_cache_miss"] == 1
    torch._dynamo.reset()
    counters.clear()
    torch.compile(activate)(x)
    assert counters["inductor"]["fxgraph_cache_hit"] == 1 and not counters["inductor"]["fxgraph_cache_miss"]
    assert counters["aot_autograd"]["autograd_cache_hit"] == 1
    artifacts = torch.compiler.save_cache_artifacts()
    assert artifacts is not None
    kinds = {kind: len(keys) for kind, keys in artifacts[1].artifacts.items() if keys}
    assert kinds.get("inductor", 0) >= 1 and kinds.get("aot_autograd", 0) >= 1, kinds


PGO_CHILD = textwrap.dedent("""
    import torch
    from torch._dynamo.utils import counters
    compiled = torch.compile(lambda x: torch.nn.functional.gelu(x * 2 + 1).sum(-1), backend="eager")
    graphs = []
    for n in (4, 8):
        compiled(torch.randn(n, 16))
        graphs.append(counters["stats"]["unique_graphs"])
    print(graphs)
""")


def _graphs_in_a_new_process(cache_dir: Path, job_id: str | None) -> list[int]:
    env = {k: v for k, v in os.environ.items() if k != "TORCH_COMPILE_JOB_ID"}
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir)
    if job_id:
        env["TORCH_COMPILE_JOB_ID"] = job_id
    done = subprocess.run([sys.executable, "-c", PGO_CHILD], env=env, capture_output=True, text=True,
                          timeout=300, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_the_automatic_dynamic_profile_reaches_the_next_process_only_for_a_named_job(tmp_path: Path):
    assert [_graphs_in_a_new_process(tmp_path, "claims") for _ in range(2)] == [[1, 2], [1, 1]]
    assert _graphs_in_a_new_process(tmp_path, None) == [1, 2]  # the profile is there, but not for it


# --- nested_compile_region ---------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(torch.compiler, "nested_compile_region"), reason="not in this torch")
def test_a_nested_compile_region_is_one_subgraph_called_once_per_layer():
    @torch.compiler.nested_compile_region
    def block(x, w):
        return x + F.gelu(x @ w)

    weights = [torch.randn(16, 16) for _ in range(8)]

    def model(x):
        for w in weights:
            x = block(x, w)
        return x

    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    x = torch.randn(4, 16)
    torch.testing.assert_close(torch.compile(model, backend=keep, fullgraph=True)(x), model(x))
    (gm,) = graphs
    assert [name for name, _ in gm.named_children()] == ["subgraph_0"]
    calls = [n for n in gm.graph.nodes if n.target is torch.ops.higher_order.invoke_subgraph]
    assert len(calls) == len(weights)


# --- unbacked and size-oblivious shapes --------------------------------------------------------------

SIZES = [4, 8, 1, 0]


@pytest.mark.parametrize(("options", "expected"), [
    ({}, [1, 2, 3, 4]),
    ({"dynamic": True}, [1, 1, 2, 3]),
    ({"mark": torch._dynamo.mark_dynamic}, [1, 1, 2, 3]),
    ({"mark": torch._dynamo.maybe_mark_dynamic}, [1, 1, 2, 3]),
    ({"mark": torch._dynamo.decorators.mark_unbacked}, [1, 1, 1, 1]),
    ({"dynamic": True, "oblivious": True}, [1, 1, 1, 1]),
], ids=["default", "dynamic", "mark_dynamic", "maybe_mark_dynamic", "mark_unbacked", "oblivious"])
def test_sizes_zero_and_one_get_graphs_of_their_own_only_with_backed_symbols(options, expected):
    assert graphs_after_each_call(SIZES, **options) == expected


@inductor
def test_backed_size_oblivious_is_not_in_the_fx_graph_cache_key():
    graphs_after_each_call([4, 8], backend="inductor", dynamic=True)
    again = graphs_after_each_call(SIZES, backend="inductor", dynamic=True, oblivious=True)
    assert counters["inductor"]["fxgraph_cache_hit"] >= 1
    assert again == [1, 1, 2, 2]  # the cached graph brought back the guard that specialises size 1


def test_mark_dynamic_is_a_promise_and_maybe_mark_dynamic_a_hint():
    def pick(x):
        if x.shape[0] == 4:
            return x * 2
        return x + 1

    x = torch.randn(4, 16)
    torch._dynamo.maybe_mark_dynamic(x, 0)
    torch.compile(pick, backend="eager")(x)
    torch._dynamo.reset()
    x = torch.randn(4, 16)
    torch._dynamo.mark_dynamic(x, 0)
    violation = torch.fx.experimental.symbolic_shapes.ConstraintViolationError
    with pytest.raises(violation, match="maybe_mark_dynamic"):
        torch.compile(pick, backend="eager")(x)


def test_a_branch_on_an_unbacked_size_cannot_be_traced():
    def clip_long(x):
        if x.shape[0] > 1:
            return x[:1]
        return x

    x = torch.randn(4, 16)
    torch._dynamo.decorators.mark_unbacked(x, 0)
    with pytest.raises(torch._dynamo.exc.UserError, match="Could not guard on data-dependent expression"):
        torch.compile(clip_long, backend="eager", fullgraph=True)(x)
