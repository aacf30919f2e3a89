"""The GPU run's plan (bench/gpu-run-plan.tsv) covers every snippet and fits the device time it is lent.

bench/gpu-run.sh runs the snippets in the plan's order, each within its budget, and starts one only if
its budget fits in what is left of the run's 240 s; these tests keep the plan in step with snippets/.
"""

from __future__ import annotations

import json
import re

import pytest
from paths import ROOT

PLAN = ROOT / "bench" / "gpu-run-plan.tsv"
SCRIPT = ROOT / "bench" / "gpu-run.sh"
SNIPPETS = ROOT / "snippets"
#: The whole GPU run, from the script's default; install and environment check come first.
GPU_DEFAULTS = re.compile(r"DEVICE=cuda BUDGET_COLUMN=2 DEADLINE=\$\{GPU_RUN_DEADLINE:-(\d+)\}")
DEADLINE_S = int(GPU_DEFAULTS.search(SCRIPT.read_text()).group(1))
SETUP_S = 30
#: The margin gpu-run.sh adds to a snippet's budget before it kills the command.
MARGIN_S = 10


def plan() -> list[tuple[str, int, int, list[str]]]:
    rows = []
    for line in PLAN.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        stem, gpu, rehearsal, headlines = line.split("\t")
        rows.append((stem, int(gpu), int(rehearsal), [h for h in headlines.split(",") if h]))
    return rows


def snippet_stems() -> set[str]:
    return {p.stem for p in SNIPPETS.glob("*.py") if not p.name.startswith("_")}


def test_every_snippet_is_planned_once() -> None:
    stems = [row[0] for row in plan()]
    assert len(stems) == len(set(stems)), stems
    assert set(stems) == snippet_stems()


def test_the_most_valuable_snippets_come_first() -> None:
    assert [row[0] for row in plan()[:3]] == ["model_bench", "cuda_graphs", "triton_kernel"]


def test_the_first_three_fit_in_the_run_whatever_the_others_take() -> None:
    first = sum(gpu + MARGIN_S for _, gpu, _, _ in plan()[:3])
    assert SETUP_S + first <= DEADLINE_S, first


def test_only_snippets_that_never_ask_for_a_device_stay_off_the_gpu() -> None:
    for stem, gpu, rehearsal, _ in plan():
        uses_device = "target_device" in (SNIPPETS / f"{stem}.py").read_text(encoding="utf-8")
        assert (gpu > 0) == uses_device, f"{stem}: gpu budget {gpu}, asks for the device: {uses_device}"
        assert rehearsal > 0, f"{stem}: the rehearsal runs every snippet"


@pytest.mark.parametrize("row", plan(), ids=[row[0] for row in plan()])
def test_the_summary_names_values_the_snippet_records(row: tuple[str, int, int, list[str]]) -> None:
    stem, _, _, headlines = row
    result = json.loads((SNIPPETS / "_results" / stem / "cpu-x86_64.json").read_text(encoding="utf-8"))
    missing = [name for name in headlines if name not in result["values"] and name not in result["verdicts"]]
    assert not missing, f"{stem}: no value or verdict named {missing}"
