"""The benchmark harness's method: statistics, warm-up, synchronisation, input checks, records.

These tests check how the harness measures, never how fast anything is: the CUDA path runs against a
fake `torch.cuda` whose clock advances only when the measured function runs.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from perfblog.generator import bench

pytestmark = pytest.mark.torch


# --- statistics on known samples -------------------------------------------------------------------

def test_stats_of_an_odd_sample_are_its_median_and_quartiles():
    stats = bench.Stats.from_samples([5.0, 1.0, 4.0, 2.0, 3.0], number_per_repeat=10)
    assert (stats.q1_s, stats.median_s, stats.q3_s) == (2.0, 3.0, 4.0)
    assert stats.iqr_s == 2.0
    assert stats.repeats == 5 and stats.number_per_repeat == 10


def test_stats_of_an_even_sample_interpolate_like_numpy_linear_quantiles():
    stats = bench.Stats.from_samples([1.0, 2.0, 3.0, 4.0])
    assert (stats.q1_s, stats.median_s, stats.q3_s) == (1.75, 2.5, 3.25)


def test_stats_of_one_sample_have_no_spread():
    stats = bench.Stats.from_samples([7.0])
    assert stats.median_s == 7.0 and stats.iqr_s == 0.0


def test_stats_refuse_an_empty_sample():
    with pytest.raises(ValueError, match="no timing samples"):
        bench.Stats.from_samples([])


def _measurement(name: str, median: float) -> bench.Measurement:
    compile_stats = bench.CompileStats(graphs=1, graph_breaks=0, break_reasons=(), recompiles=0,
                                       recompile_reasons=())
    return bench.Measurement(name, "cpu", 0.5, bench.Stats(median, median, median, 3, 1), None, compile_stats)


def test_speedups_are_ratios_of_medians_against_the_baseline_or_a_named_candidate():
    comparison = bench.Comparison("cpu", "eager", (_measurement("eager", 6.0), _measurement("fast", 2.0),
                                                   _measurement("faster", 1.0)), threads=2, input_sets=1)
    assert comparison.speedup("fast") == 3.0
    assert comparison.speedup("faster", over="fast") == 2.0
    assert [row["speedup"] for row in comparison.rows()] == [1.0, 3.0, 6.0]
    with pytest.raises(KeyError, match="no candidate named 'slow'"):
        comparison.speedup("slow")


def test_first_line_skips_blank_lines_and_strips():
    assert bench.first_line("\n  Data-dependent branching\n  Explanation: ...") == "Data-dependent branching"


# --- the CUDA path, against a fake torch.cuda ------------------------------------------------------

class FakeCuda:
    """Records every call; time passes only inside the measured function (STEP seconds per call)."""

    STEP = 0.002

    def __init__(self) -> None:
        self.log: list[str] = []
        self.now = 0.0

    def synchronize(self) -> None:
        self.log.append("sync")

    def Event(self, enable_timing: bool = False) -> FakeEvent:  # torch.cuda's name
        assert enable_timing
        return FakeEvent(self)

    def reset_peak_memory_stats(self) -> None:
        self.log.append("reset_peak")

    def max_memory_allocated(self) -> int:
        self.log.append("max_memory")
        return 4096


class FakeEvent:
    def __init__(self, cuda: FakeCuda) -> None:
        self.cuda = cuda
        self.at: float | None = None
        self.index = -1

    def record(self) -> None:
        self.at = self.cuda.now
        self.index = len(self.cuda.log)
        self.cuda.log.append("record")

    def elapsed_time(self, end: FakeEvent) -> float:
        after_end = self.cuda.log[end.index + 1:]
        assert "sync" in after_end, "an event was read before synchronising"
        return (end.at - self.at) * 1e3  # milliseconds, like torch.cuda.Event


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch) -> FakeCuda:
    cuda = FakeCuda()
    monkeypatch.setattr(bench, "_cuda_module", lambda: cuda)
    return cuda


def _workload(cuda: FakeCuda, seen: list[int]):
    def fn(x):
        cuda.now += FakeCuda.STEP
        cuda.log.append("call")
        seen.append(int(x[0]))
        return x * 2

    return fn


def test_cuda_path_times_with_events_and_synchronises_before_every_reading(fake_cuda: FakeCuda):
    import torch

    seen: list[int] = []
    inputs = [(torch.full((4,), float(i + 1)),) for i in range(3)]
    result = bench.compare({"fn": _workload(fake_cuda, seen)}, inputs, device="cuda", min_run_time=0.05,
                           reset=False)
    stats = result["fn"].timing
    assert stats.median_s == pytest.approx(FakeCuda.STEP) and stats.iqr_s == pytest.approx(0.0)
    assert stats.repeats >= bench.CudaClock.min_repeats
    assert stats.number_per_repeat * FakeCuda.STEP >= bench.CudaClock.min_block_s  # blocks amortise events
    assert result.device == "cuda" and result.rows()[0]["device"] == "cuda"


def test_cuda_first_call_is_synchronised_and_warm_up_uses_every_input_set_before_timing(fake_cuda: FakeCuda):
    import torch

    seen: list[int] = []
    inputs = [(torch.full((4,), float(i + 1)),) for i in range(3)]
    bench.compare({"fn": _workload(fake_cuda, seen)}, inputs, device="cuda", min_run_time=0.01, warmup=2,
                  reset=False)
    log = fake_cuda.log
    first_call = log.index("call")
    assert log[first_call - 1] == "sync" and log[first_call + 1] == "sync"  # the first call is timed alone
    first_record = log.index("record")
    calls_before_timing = log[:first_record].count("call")
    assert calls_before_timing >= 1 + 3  # the first call, then a pass over all three input sets
    assert set(seen[:calls_before_timing]) == {1, 2, 3}
    assert set(seen[calls_before_timing:]) == {1, 2, 3}  # timed calls rotate through the inputs too


def test_cuda_peak_memory_is_read_after_a_reset_and_a_synchronisation(fake_cuda: FakeCuda):
    import torch

    result = bench.compare({"fn": _workload(fake_cuda, [])}, [(torch.ones(4),)], device="cuda",
                           min_run_time=0.01, reset=False)
    assert result["fn"].peak_memory_bytes == 4096
    log = fake_cuda.log
    reset = log.index("reset_peak")
    assert log[reset - 1] == "sync"
    assert log[reset + 1:log.index("max_memory")] == ["call", "sync"]


# --- the CPU path, with the real torch.utils.benchmark ---------------------------------------------

def test_cpu_path_warms_up_before_timing_and_reports_no_peak_memory(monkeypatch: pytest.MonkeyPatch):
    import torch

    calls: list[str] = []
    measured_from: list[int] = []
    real_measure = bench.CpuClock.measure

    def spy(self, call, min_run_time):
        measured_from.append(len(calls))
        return real_measure(self, call, min_run_time)

    monkeypatch.setattr(bench.CpuClock, "measure", spy)

    def fn(x):
        calls.append("call")
        return x + 1

    result = bench.compare({"fn": fn}, [(torch.ones(8),), (torch.ones(8) * 2,)], device="cpu",
                           min_run_time=0.01, warmup=3, reset=False)
    assert measured_from == [1 + 3]  # first call, then three warm-up calls, then timing
    stats = result["fn"].timing
    assert stats.repeats >= bench.CpuClock.min_repeats
    assert result["fn"].peak_memory_bytes is None
    assert bench.CPU_MEMORY_NOTE in result.caption()
    assert result.threads == torch.get_num_threads()


def test_all_zero_inputs_are_refused():
    import torch

    with pytest.raises(ValueError, match="input set 1, argument 0 is all zeros"):
        bench.compare({"fn": torch.sin}, [(torch.randn(4),), (torch.zeros(4),)], device="cpu")


def test_a_candidate_that_computes_something_else_fails_the_comparison():
    import torch

    with pytest.raises(AssertionError, match="cos differs from sin"):
        bench.compare({"sin": torch.sin, "cos": torch.cos}, [(torch.randn(16),)], device="cpu",
                      min_run_time=0.01, reset=False)


def _record(monkeypatch: pytest.MonkeyPatch, comparison: bench.Comparison) -> dict[str, dict]:
    from perfblog.generator import record

    emitted: list[dict] = []
    monkeypatch.setattr(record, "_emit", emitted.append)
    comparison.record("timings", caption="一句说明")
    return {payload["name"]: payload for payload in emitted}


def test_record_emits_a_compact_chinese_table_with_units_in_its_headers(monkeypatch: pytest.MonkeyPatch):
    comparison = bench.Comparison("cpu", "eager", (_measurement("eager", 42e-6), _measurement("fast", 21e-6)),
                                  threads=2, input_sets=3)
    shown = _record(monkeypatch, comparison)["timings"]
    assert shown["kind"] == "table"
    assert shown["columns"] == [
        "写法", "首次调用（含编译，ms）", "中位数（µs）", "IQR（µs）", "重复次数", "加速比",
    ]
    assert shown["rows"] == [
        ["eager", "500", "42.0", "0", 3, "1.00×"],
        ["fast", "500", "21.0", "0", 3, "2.00×"],
    ]
    caption = shown["caption"]
    assert caption.startswith("一句说明；设备 cpu，2 线程，3 组输入轮换")
    assert "中位数" in caption and "eager 的中位数" in caption and bench.CPU_MEMORY_NOTE_ZH in caption


def test_record_keeps_every_raw_number_and_the_full_method_in_a_raw_table(monkeypatch: pytest.MonkeyPatch):
    comparison = bench.Comparison("cpu", "eager", (_measurement("eager", 2.0), _measurement("fast", 1.0)),
                                  threads=2, input_sets=3, load_average=1.5)
    raw = _record(monkeypatch, comparison)["timings.raw"]
    assert raw["columns"][:3] == ["candidate", "device", "first_call_s"]
    assert {"calls_per_repeat", "break_reasons", "recompiles"} <= set(raw["columns"])
    assert [row[1] for row in raw["rows"]] == ["cpu", "cpu"]
    assert raw["caption"].startswith("一句说明 (device cpu, 2 threads, 3 rotating input set(s)")
    assert "1-min load average 1.50" in raw["caption"]


def test_each_time_column_uses_the_largest_unit_that_keeps_its_values_under_a_thousand():
    fast = bench.Comparison("cpu", "a", (_measurement("a", 999e-6), _measurement("b", 5e-6)), 1, 1)
    slow = bench.Comparison("cpu", "a", (_measurement("a", 1.5), _measurement("b", 0.2)), 1, 1)
    assert "中位数（µs）" in fast.display_rows()[0]
    assert [row["中位数（s）"] for row in slow.display_rows()] == ["1.50", "0.200"]


def test_first_calls_stay_in_milliseconds_below_ten_seconds_so_eager_ones_do_not_vanish():
    compiling = bench.Measurement("compiled", "cpu", 4.0, bench.Stats(1e-5, 1e-5, 1e-5, 3, 1), None,
                                  _measurement("x", 1.0).compile)
    eager = bench.Measurement("eager", "cpu", 7e-5, bench.Stats(2e-5, 2e-5, 2e-5, 3, 1), None,
                              _measurement("x", 1.0).compile)
    rows = bench.Comparison("cpu", "eager", (eager, compiling), 1, 1).display_rows()
    assert [row["首次调用（含编译，ms）"] for row in rows] == ["0.0700", "4000"]


def test_peak_memory_gets_a_column_only_where_it_was_measured():
    measured = bench.Measurement("gpu", "cuda", 0.5, bench.Stats(1e-3, 1e-3, 1e-3, 3, 1), 3 * 2**20,
                                 _measurement("x", 1.0).compile)
    with_peak = bench.Comparison("cuda", "gpu", (measured,), 1, 1).display_rows()
    without = bench.Comparison("cpu", "x", (_measurement("x", 1.0),), 1, 1).display_rows()
    assert with_peak[0]["峰值显存（MiB）"] == "3.00"
    assert not any("显存" in column for column in without[0])


@pytest.mark.parametrize(("value", "shown"), [
    (1234.5, "1234"), (123.4, "123"), (99.96, "100"), (12.34, "12.3"), (1.0, "1.00"), (0.01234, "0.0123"),
    (0.00012, "0.000120"), (0.0, "0"),
])
def test_readable_numbers_have_three_significant_digits_and_no_exponent(value: float, shown: str):
    assert bench.readable(value) == shown


def test_importing_the_generator_and_its_harness_does_not_import_torch():
    code = "import sys, perfblog.generator, perfblog.generator.bench; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
