"""What the debugging post says about counting breaks, remedying them, the backward and tlparse, asserted
in-process on tiny CPU inputs (one test per sentence, the snippets' claims without their recording).

Dynamo's decisions do not depend on the backend, so the cheap "eager" backend is used except where a
sentence is about AOTAutograd (`aot_eager`); Dynamo, its counters and the compile metrics start empty.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
pytestmark = pytest.mark.torch

from torch._dynamo.backends.common import aot_autograd  # noqa: E402
from torch._dynamo.utils import clear_compilation_metrics, counters, get_compilation_metrics  # noqa: E402
from torch._functorch.aot_autograd import make_boxed_func  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    counters.clear()
    clear_compilation_metrics()
    yield
    torch._dynamo.reset()


def run_once(fn, *args, **options):
    torch._dynamo.reset()
    counters.clear()
    clear_compilation_metrics()
    out = torch.compile(fn, backend=options.pop("backend", "eager"), **options)(*args)
    return out, {
        "graphs": counters["stats"]["unique_graphs"],
        "graph_break": sum(counters["graph_break"].values()),
        "unimplemented": sum(counters["unimplemented"].values()),
        "failed_frames": sum(m.fail_type is not None for m in get_compilation_metrics()),
    }


def explained(fn, *args):
    out = torch._dynamo.explain(fn)(*args)
    return out.graph_count, out.graph_break_count, len(out.break_reasons)


def log_between(x):
    x = x * 2
    print("step")
    return x.relu()


def quad_weights(x):
    _, w = np.polynomial.legendre.leggauss(x.shape[-1])
    return x * torch.from_numpy(w).to(x.dtype)


def make_model(weigh):
    def model(x):
        return weigh(torch.sin(x) + 1).sum(-1)

    return model


# --- counting ------------------------------------------------------------------------------------------

def test_explain_misses_a_break_that_leaves_an_empty_graph():
    def nonzero_first(x):
        return x.nonzero() + 1

    assert explained(nonzero_first, torch.randn(8)) == (1, 0, 0)
    assert run_once(nonzero_first, torch.randn(8))[1]["graph_break"] == 1


def test_a_break_in_a_loop_is_minus_one_for_explain_and_a_failed_frame_for_the_metrics():
    def log_in_loop(x):
        for i in range(3):
            x = x * 2 + i
            print("step", i)
        return x.relu()

    assert explained(log_in_loop, torch.randn(8)) == (0, -1, 0)
    counts = run_once(log_in_loop, torch.randn(8))[1]
    assert counts["graphs"] == counts["graph_break"] == 0
    assert counts["unimplemented"] > 0 and counts["failed_frames"] == 1


def test_a_break_on_tensor_data_is_counted_as_unimplemented_not_as_a_graph_break():
    def branch_on_data(x):
        x = x * 2
        if x.sum() > 0:
            return x + 1
        return x - 1

    counts = run_once(branch_on_data, torch.randn(8))[1]
    assert counts["graph_break"] == 0 and counts["unimplemented"] == 1
    (reason,) = counters["unimplemented"]
    assert reason.startswith("Data-dependent branching")
    assert "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb" in reason.splitlines()[-1]


def test_one_break_one_call_deeper_makes_three_graphs_and_two_counted_breaks():
    def helper(x):
        print("inside")
        return x.sin()

    def nested(x):
        return helper(x * 2) + 1

    graphs, breaks, reasons = explained(nested, torch.randn(8))
    assert (graphs, breaks, reasons) == (3, 2, 1)
    counts = run_once(nested, torch.randn(8))[1]
    assert counts["graphs"] == 3 and counts["graph_break"] == 2
    assert len(get_compilation_metrics()) == 4


def test_explain_does_not_see_recompiles():
    compiled = torch.compile(log_between, backend="eager", dynamic=False)
    for n in (8, 16, 32):
        compiled(torch.randn(n))
    run_graphs = counters["stats"]["unique_graphs"]
    assert run_graphs == 3 * explained(log_between, torch.randn(8))[0]


# --- remedies ------------------------------------------------------------------------------------------

def test_a_skipped_library_function_breaks_and_its_message_links_the_graph_break_site():
    x = torch.randn(4, 16)
    out, counts = run_once(make_model(quad_weights), x)
    torch.testing.assert_close(out, make_model(quad_weights)(x))
    assert counts["graphs"] == 3
    (reason,) = counters["graph_break"]
    assert reason.startswith("Attempted to call function marked as skipped")
    assert "compile-graph-break-site/gb/gb" in reason.splitlines()[-1]


def test_disable_keeps_the_break_with_fewer_graphs_and_breaks():
    x = torch.randn(4, 16)
    before = run_once(make_model(quad_weights), x)[1]
    after = run_once(make_model(torch.compiler.disable(quad_weights)), x)[1]
    assert (before["graphs"], after["graphs"]) == (3, 2)
    assert 1 <= after["graph_break"] < before["graph_break"]
    assert next(iter(counters["graph_break"])).startswith("Skip calling `torch.compiler.disable()`d function")


def test_a_custom_op_with_a_fake_is_one_opaque_op_in_one_graph():
    @torch.library.custom_op("blogtest::quad_weights", mutates_args=())
    def quad_weights_op(x: torch.Tensor) -> torch.Tensor:
        return quad_weights(x)

    @quad_weights_op.register_fake
    def _(x):
        return torch.empty_like(x)

    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    x = torch.randn(4, 16)
    out = torch.compile(make_model(quad_weights_op), backend=keep, fullgraph=True)(x)
    torch.testing.assert_close(out, make_model(quad_weights)(x))
    assert len(graphs) == 1 and "torch.ops.blogtest.quad_weights.default" in graphs[0].code


def test_nonstrict_trace_lets_aot_autograd_trace_a_body_dynamo_skips():
    skip_dynamo = (torch._dynamo.nonstrict_trace(quad_weights) if hasattr(torch._dynamo, "nonstrict_trace")
                   else torch.compiler.allow_in_graph(quad_weights))
    x = torch.randn(4, 16)
    traced = []

    def keep(gm, example_inputs):
        traced.append(gm.code)
        return make_boxed_func(gm.forward)

    backend = aot_autograd(fw_compiler=keep)
    out, counts = run_once(make_model(skip_dynamo), x, backend=backend, fullgraph=True)
    torch.testing.assert_close(out, make_model(quad_weights)(x))
    assert counts["graphs"] == 1 and counts["graph_break"] == 0
    # the weights were computed while AOTAutograd traced the body: a constant of the graph
    (code,) = traced
    assert "_tensor_constant0" in code and "aten.mul.Tensor" in code


# --- the backward --------------------------------------------------------------------------------------

def _train_step(model, x, target):
    hidden = model[1](model[0](x))
    print("hidden mean", hidden.mean())
    loss = torch.nn.functional.mse_loss(model[2](hidden), target)
    loss.backward()
    return loss


def _compiled_step(compiled_autograd: bool):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    kept = {"forward": 0, "backward": 0}

    def keep(kind):
        def compiler(gm, example_inputs):
            kept[kind] += 1
            return make_boxed_func(gm.forward)

        return compiler

    backend = aot_autograd(fw_compiler=keep("forward"), bw_compiler=keep("backward"))
    torch._dynamo.config.compiled_autograd = compiled_autograd
    try:
        torch.compile(_train_step, backend=backend)(net, torch.randn(4, 8), torch.randn(4, 4))
    finally:
        torch._dynamo.config.compiled_autograd = False
    return kept


#: Dynamo reads `.grad` of non-leaf tensors while tracing the backward call: a warning, an error under pytest.
quiet_grad_warning = pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")


@quiet_grad_warning
def test_a_forward_break_splits_the_backward_into_as_many_graphs():
    assert _compiled_step(compiled_autograd=False) == {"forward": 2, "backward": 2}
    assert any(r.startswith("Unsupported Tensor.backward() call") for r in counters["graph_break"])


@quiet_grad_warning
def test_compiled_autograd_captures_the_whole_backward_as_one_graph():
    kept = _compiled_step(compiled_autograd=True)
    assert counters["compiled_autograd"]["captures"] == 1
    assert kept == {"forward": 3, "backward": 0}


# --- tlparse -------------------------------------------------------------------------------------------

def _tlparse() -> str:
    found = shutil.which("tlparse") or str(Path(sys.executable).with_name("tlparse"))
    if not Path(found).is_file():
        pytest.skip("tlparse is not installed (the examples extra)")
    return found


def test_tlparse_lists_the_break_and_the_folder_form_fails(tmp_path: Path):
    tlparse = _tlparse()
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent("""
        import torch

        def block(x):
            x = torch.relu(x * 2)
            print("block done")
            return x.sin()

        torch.compile(block, backend="eager")(torch.randn(8))
    """))
    env = {**os.environ, "TORCH_TRACE": str(tmp_path / "trace")}
    subprocess.run([sys.executable, str(program)], env=env, check=True, capture_output=True, timeout=120)
    (log,) = (tmp_path / "trace").glob("*.log")
    report = tmp_path / "report"
    subprocess.run([tlparse, str(log), "-o", str(report), "--no-browser"], check=True, capture_output=True)
    failures = (report / "failures_and_restarts.html").read_text(encoding="utf-8")
    assert "RestartAnalysis" in failures and "Failed to trace builtin operator" in failures
    assert "compile-graph-break-site/gb/gb" in failures
    latest = subprocess.run([tlparse, str(tmp_path / "trace"), "--latest", "-o", str(tmp_path / "latest"),
                             "--no-browser"], capture_output=True, text=True)
    assert "is not a directory" in latest.stderr
