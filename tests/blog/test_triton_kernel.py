"""The hand-written Triton kernel of snippets/triton_kernel.py computes a causal softmax, on a CPU.

Triton has no CPU backend; its interpreter (TRITON_INTERPRET=1, read when triton is imported) runs the
kernel with numpy. The snippet's own cells are executed in a fresh interpreter, so the test checks
exactly the code the post shows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from paths import ROOT

pytestmark = pytest.mark.torch

SNIPPET = ROOT / "snippets" / "triton_kernel.py"

CHECK = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from perfblog.generator.source.snippet import load, python_source

    snippet = load(Path(sys.argv[1]))
    ns = {}
    for name in ("setup", "reference", "kernel"):
        exec(compile(python_source(snippet.cell(name).source), name, "exec"), ns)
    torch, kernel, reference = ns["torch"], ns["causal_softmax_triton"], ns["causal_softmax_torch"]
    torch.manual_seed(1)
    report = {"interpret": ns["os"].environ.get("TRITON_INTERPRET"), "cases": []}
    for shape in [(1, 1, 1, 1), (1, 1, 7, 7), (2, 2, 33, 33), (1, 3, 16, 16)]:
        scores = torch.randn(shape) * 4
        got = kernel(scores)
        plain = torch.softmax(scores, dim=-1)  # the same softmax without the mask
        report["cases"].append({
            "shape": shape,
            "error": (got - reference(scores)).abs().max().item(),
            "row_sums": (got.sum(-1) - 1).abs().max().item(),
            "upper_triangle": got.triu(1).abs().max().item(),
            "differs_from_unmasked": shape[-1] > 1 and not torch.allclose(got, plain),
        })
    print("REPORT " + json.dumps(report))
    """
)


@pytest.fixture(scope="module")
def report() -> dict:
    env = {**os.environ, "BLOG_DEVICE": "cpu", "PYTHONPATH": str(ROOT)}
    env.pop("TRITON_INTERPRET", None)  # the snippet must set it itself on a CPU
    proc = subprocess.run(
        [sys.executable, "-c", CHECK, str(SNIPPET)], capture_output=True, text=True, env=env, timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("REPORT "))
    return json.loads(line.removeprefix("REPORT "))


def test_snippet_switches_triton_to_its_interpreter_on_cpu(report: dict) -> None:
    assert report["interpret"] == "1"


def test_kernel_matches_masked_fill_softmax_on_odd_and_tiny_shapes(report: dict) -> None:
    for case in report["cases"]:
        assert case["error"] < 1e-5, case


def test_kernel_rows_are_distributions(report: dict) -> None:
    for case in report["cases"]:
        assert case["row_sums"] < 1e-5, case


def test_kernel_gives_future_positions_zero_weight(report: dict) -> None:
    for case in report["cases"]:
        assert case["upper_triangle"] == 0.0, case
        assert case["differs_from_unmasked"] or case["shape"][-1] == 1, case
