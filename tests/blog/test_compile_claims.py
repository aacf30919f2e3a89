"""What torch.compile does with the patterns the post discusses, asserted in-process on tiny CPU inputs.

Each test is one sentence of the post. Dynamo's decisions do not depend on the backend, so the cheap
"eager" backend is used (Inductor where the sentence is about the code it generates); Dynamo is reset
before each test so caches and counters start empty.
Errors are caught by their common base class: the concrete subclass differs between torch 2.11 and 2.13.
"""

from __future__ import annotations

import re

import pytest

from perfblog.harness.compilation import count_compiles, first_line

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytestmark = pytest.mark.torch


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def compiled(fn, **options):
    return torch.compile(fn, backend="eager", **options)


def fullgraph_error(fn, *args) -> str:
    with pytest.raises(torch._dynamo.exc.TorchDynamoException) as caught:
        compiled(fn, fullgraph=True)(*args)
    assert isinstance(caught.value, RuntimeError)
    return first_line(str(caught.value))


def x8():
    return torch.randn(8)


def branch(x):
    if x.sum() > 0:
        return x * 2
    return -x


def scale(x):
    return x * x.sum().item()


# --- fullgraph=True refuses these ------------------------------------------------------------------

def test_fullgraph_rejects_data_dependent_branching():
    assert fullgraph_error(branch, x8()) == "Data-dependent branching"


def test_fullgraph_rejects_print():
    def shout(x):
        print("hello")
        return x + 1

    assert fullgraph_error(shout, x8()) == "Failed to trace builtin operator"


def test_fullgraph_rejects_tolist_on_a_float_tensor():
    message = fullgraph_error(lambda x: torch.tensor(x.tolist()), x8())
    assert message == "Tensor.tolist() with non-integer tensor"


def test_fullgraph_rejects_branching_on_an_item_value():
    def branch_on_item(x):
        if x.sum().item() > 0:
            return x * 2
        return -x

    assert "Could not guard on data-dependent expression" in fullgraph_error(branch_on_item, x8())


# --- .item(): a break by default, captured on request, captured under fullgraph ----------------------

def test_item_is_a_graph_break_with_its_reason_by_default():
    stats = count_compiles(lambda: compiled(scale)(x8()))
    assert (stats.graphs, stats.graph_breaks) == (2, 1)
    reason = first_line(stats.break_reasons[0])
    assert reason == "Unsupported Tensor.item() call with capture_scalar_outputs=False"


def test_item_is_captured_in_one_graph_with_capture_scalar_outputs():
    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        stats = count_compiles(lambda: compiled(scale)(x8()))
    assert (stats.graphs, stats.graph_breaks) == (1, 0)


def test_fullgraph_turns_scalar_capture_on_so_item_compiles():
    assert torch._dynamo.config.capture_scalar_outputs is False
    x = x8()
    stats = count_compiles(lambda: compiled(scale, fullgraph=True)(x))
    assert (stats.graphs, stats.graph_breaks) == (1, 0)
    torch.testing.assert_close(compiled(scale, fullgraph=True)(x), scale(x))


# --- the harness counts every kind of break ---------------------------------------------------------

def test_a_break_at_a_branch_on_tensor_data_is_counted_though_counters_graph_break_misses_it():
    from torch._dynamo.utils import counters

    stats = count_compiles(lambda: compiled(branch)(x8()))
    assert stats.graph_breaks == 1 and first_line(stats.break_reasons[0]) == "Data-dependent branching"
    assert sum(counters["graph_break"].values()) == 0  # why the harness also reads "unimplemented"


# --- the rewrites keep one graph ------------------------------------------------------------------

@pytest.mark.parametrize("rewrite", [
    lambda x: torch.where(x.sum() > 0, x * 2, -x),
    lambda x: torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: -t, (x,)),
], ids=["where", "cond"])
def test_where_and_cond_replace_the_branch_in_one_graph_with_the_same_result(rewrite):
    fn = compiled(rewrite, fullgraph=True)
    inputs = (x8().abs(), -x8().abs())  # both signs: both branches of the original
    stats = count_compiles(lambda: [fn(x) for x in inputs])
    assert (stats.graphs, stats.graph_breaks) == (1, 0)
    for x in inputs:
        torch.testing.assert_close(fn(x), branch(x))


def test_arange_masks_compile_in_one_graph():
    def causal(q):
        i = torch.arange(q.shape[-2])
        return (q @ q.transpose(-2, -1)).masked_fill(~(i.unsqueeze(0) <= i.unsqueeze(1)), float("-inf"))

    def padding(x, lengths):
        return x * (torch.arange(x.shape[1]).unsqueeze(0) < lengths.unsqueeze(1))

    q, lengths = torch.randn(6, 4), torch.tensor([1, 3])
    stats = count_compiles(lambda: (compiled(causal, fullgraph=True)(q),
                                    compiled(padding, fullgraph=True)(torch.randn(2, 5), lengths)))
    assert (stats.graphs, stats.graph_breaks) == (2, 0)



def sdpa_causal(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def flex_causal(q, k, v):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    mask = create_block_mask(causal, None, None, q.shape[-2], k.shape[-2], device=q.device)
    return flex_attention(q, k, v, block_mask=mask)


@pytest.mark.parametrize("attend", [sdpa_causal, flex_causal], ids=["sdpa_is_causal", "flex_attention"])
def test_builtin_causal_attention_equals_the_arange_mask_in_one_graph(attend):
    q, k, v = torch.randn(3, 1, 2, 8, 4).unbind(0)
    i = torch.arange(q.shape[-2])
    scores = (q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5
    expected = scores.masked_fill(~(i.unsqueeze(0) <= i.unsqueeze(1)), float("-inf")).softmax(dim=-1) @ v
    fn = compiled(attend, fullgraph=True)
    stats = count_compiles(lambda: torch.testing.assert_close(fn(q, k, v), expected))
    assert (stats.graphs, stats.graph_breaks) == (1, 0)

def test_unfold_equals_the_slicing_loop_and_fold_inverts_it():
    x = torch.randn(1, 2, 8, 8)
    loop = torch.stack([x[:, :, i:i + 4, j:j + 4].reshape(1, -1) for i in (0, 4) for j in (0, 4)], dim=-1)
    torch.testing.assert_close(compiled(lambda t: F.unfold(t, 4, stride=4), fullgraph=True)(x), loop)
    torch.testing.assert_close(F.fold(F.unfold(x, 4, stride=4), (8, 8), 4, stride=4), x)


# --- loops and shapes: recompiles, not breaks ------------------------------------------------------

def test_a_python_loop_over_elements_is_unrolled_one_graph_per_length():
    def loop(x):
        total = torch.zeros(())
        for value in x:
            total = total + value
        return total

    fn = compiled(loop, fullgraph=True)
    stats = count_compiles(lambda: [fn(torch.randn(n)) for n in (3, 4, 5)])
    assert (stats.graphs, stats.graph_breaks) == (3, 0)
    assert stats.graph_ops[0] < stats.graph_ops[-1]


@pytest.mark.parametrize(("dynamic", "graphs"), [(None, 3), (True, 2), (False, 5)])
def test_a_shape_condition_guards_and_recompiles_without_a_graph_break(dynamic, graphs):
    def head(x):
        if x.shape[0] > 16:
            return x * 2
        return x + 1

    fn = compiled(head, fullgraph=True, dynamic=dynamic)
    stats = count_compiles(lambda: [fn(torch.randn(n, 2)) for n in (8, 32, 4, 64, 12)])
    assert (stats.graphs, stats.graph_breaks, stats.recompiles) == (graphs, 0, graphs - 1)


@pytest.mark.parametrize(("dynamic", "mark", "graphs"), [
    (None, False, 2), (True, False, 1), (False, False, 5), (None, True, 1),
], ids=["none", "true", "false", "mark_dynamic"])
def test_compilations_over_batch_sizes_depend_on_the_dynamic_setting(dynamic, mark, graphs):
    fn = compiled(lambda x: F.gelu(x * 2 + 1).sum(-1), dynamic=dynamic)

    def run():
        for n in (2, 3, 5, 7, 11):
            x = torch.randn(n, 4)
            if mark:
                torch._dynamo.mark_dynamic(x, 0)
            fn(x)

    assert count_compiles(run).graphs == graphs


def test_recompilation_stops_at_the_recompile_limit():
    fn = compiled(lambda x: x + 1, dynamic=False)
    stats = count_compiles(lambda: [fn(torch.randn(n)) for n in range(2, 14)])
    assert stats.graphs == torch._dynamo.config.recompile_limit == 8


# --- what one graph still leaves to the host, and the guards a CI job uses -------------------------

#: Inductor's own imports touch a deprecated torch.jit API; pytest turns warnings into errors.
inductor = pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")


def _generated_code(fn, *args) -> str:
    from torch._inductor.utils import run_and_get_code

    out, sources = run_and_get_code(torch.compile(fn, fullgraph=True), *args)
    torch.testing.assert_close(out, fn(*args))
    return "\n".join(sources)


@inductor
def test_a_compiled_cond_reads_its_predicate_back_to_the_host_on_every_call():
    code = _generated_code(lambda x: torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: -t, (x,)), x8())
    assert re.search(r"^\s*if \w+\.item\(\):", code, re.M), code


@inductor
def test_a_captured_float_scalar_is_folded_into_a_kernel_but_an_integer_stays_a_host_read():
    x = torch.randn(64) + 0.1
    assert ".item()" not in _generated_code(lambda t: t * t.sum().item(), x)
    assert re.search(r"\bu0 = \w+\.item\(\)", _generated_code(lambda t: t * t.abs().max().int().item(), x))


def test_a_graph_break_inside_a_loop_makes_dynamo_skip_the_whole_function():
    def shout_in_loop(x):
        for i in range(3):
            x = x * 2 + i
            print("step", i)
        return x.relu()

    assert count_compiles(lambda: compiled(shout_in_loop)(x8())).graphs == 0


def test_fail_on_recompile_and_error_on_graph_break_turn_silent_fallbacks_into_errors():
    scale2 = compiled(lambda x: x * 2, dynamic=False)
    scale2(x8())
    with (torch.compiler.set_stance("fail_on_recompile"),
          pytest.raises(RuntimeError, match="Detected recompile")):
        scale2(torch.randn(16))

    def shout(x):
        print("hello")
        return x + 1

    with torch._dynamo.error_on_graph_break(True), pytest.raises(torch._dynamo.exc.TorchDynamoException):
        compiled(shout)(x8())


# --- what the flagship's corrections rest on (issue 26) ---------------------------------------------

def test_print_registered_as_reorderable_runs_after_the_graph_and_only_with_tensor_or_constant_args():
    seen = []

    def log(t):
        seen.append(t.clone())

    def log_then_bump(x):
        log(x)
        x.add_(1)
        return x * 2

    with torch._dynamo.config.patch(reorderable_logging_functions={log}):
        x = torch.zeros(3)
        stats = count_compiles(lambda: compiled(log_then_bump, fullgraph=True)(x))
        assert stats.graphs == 1 and stats.graph_breaks == 0
        assert seen[-1].tolist() == [1.0, 1.0, 1.0]  # moved after the graph: it saw the bump of a later line

        class Note:  # neither a tensor, a constant nor a string formatter
            pass

        message = fullgraph_error(lambda t: (log(Note()), t + 1)[1], x8())
        assert message == "attempted to reorder a debugging function that can't actually be reordered"


def test_after_the_recompile_limit_only_new_shapes_fall_back_to_eager():
    ran = []

    def counting(gm, example_inputs):
        def run(*args):
            ran.append(args[0].shape[0])
            return gm(*args)

        return run

    fn = torch.compile(lambda x: x + 1, backend=counting, dynamic=False)
    with torch._dynamo.config.patch(recompile_limit=2):
        for n in (2, 3, 4):  # the third size is past the limit
            fn(torch.randn(n))
        assert ran == [2, 3]
        fn(torch.randn(2))  # a shape compiled before the limit still runs its graph
        fn(torch.randn(4))  # the new one runs eagerly
    assert ran == [2, 3, 2]


def test_dynamic_none_recompiles_when_another_dimension_changes_or_a_size_of_one_appears():
    counter = torch._dynamo.testing.CompileCounter()
    fn = torch.compile(lambda x: x * 2, backend=counter)  # dynamic=None
    for shape in ((4, 8), (5, 8), (6, 8)):
        fn(torch.randn(shape))
    assert counter.frame_count == 2  # static, then dynamic in dimension 0
    fn(torch.randn(6, 9))
    assert counter.frame_count == 3  # dimension 1 changed: one more compile
    fn(torch.randn(1, 9))
    assert counter.frame_count == 4  # a size of 1 is specialised: one more


def test_graph_partition_is_on_and_cond_is_not_cacheable_by_the_fx_graph_cache():
    import os

    if os.environ.get("TORCHINDUCTOR_GRAPH_PARTITION") is None:
        assert torch._inductor.config.graph_partition
    assert not torch.ops.higher_order.cond.cacheable()
