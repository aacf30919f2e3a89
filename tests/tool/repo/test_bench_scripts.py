"""The benchmark scripts under bench/ can fail: they compare, they do not just print."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest
from paths import ROOT

pytestmark = pytest.mark.torch

BENCH = ROOT / "bench"


def script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_harness_accuracy_fails_when_the_harness_disagrees_with_the_other_timer(capsys) -> None:
    accuracy = script("harness_accuracy")
    clock = {"t": 1e-3}

    def reference(fn, args, min_run_time):  # a stand-in for the perf_counter loop: a known time
        return clock["t"]

    def agreeing(fn, args, device, min_run_time):
        return clock["t"] * 1.01

    def skewed(fn, args, device, min_run_time):  # a harness 20 % slow
        return clock["t"] * 1.2

    assert accuracy.run("cpu", 3, 0.01, measure=agreeing, reference=reference) is True
    assert accuracy.run("cpu", 3, 0.01, measure=skewed, reference=reference) is False
    assert "median paired ratio 1.200 OUT OF 5%" in capsys.readouterr().out


def test_harness_accuracy_times_with_a_timer_of_its_own_not_torch_utils_benchmark() -> None:
    accuracy = script("harness_accuracy")
    assert "torch.utils.benchmark" not in accuracy.reference_cpu.__code__.co_names
    assert accuracy.reference_cpu(lambda: sum(range(100)), (), 0.01) > 0
