"""The benchmark harness's method: the verdict rule, intervals, noise, threads, compile times, rounds.

These tests check how the harness measures, never how fast anything is: the CUDA path runs against a
fake `torch.cuda` whose clock advances only when the measured function runs, and verdicts are checked
on known samples.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import pytest

from perfblog.generator import bench
from perfblog.harness import clocks, compilation
from perfblog.harness.verdict import Interval, Verdict, decide, ratio_interval

pytestmark = pytest.mark.torch


# --- the verdict rule ------------------------------------------------------------------------------

@pytest.mark.parametrize(("low", "high", "verdict"), [
    (1.06, 1.30, Verdict.FASTER),  # low end above 1 + δ
    (0.50, 0.94, Verdict.SLOWER),  # high end below 1 − δ
    (0.96, 1.04, Verdict.SAME),  # the whole interval inside [1 − δ, 1 + δ]
    (0.95, 1.05, Verdict.SAME),  # the bounds belong to "no measurable difference"
    (1.02, 1.30, Verdict.INCONCLUSIVE),  # faster, maybe, but not by more than δ for sure
    (0.90, 1.10, Verdict.INCONCLUSIVE),  # too wide to say anything
    (1.05, 1.30, Verdict.INCONCLUSIVE),  # low end exactly 1 + δ: not above it
])
def test_the_one_rule_turns_an_interval_into_a_verdict(low: float, high: float, verdict: Verdict) -> None:
    assert decide(Interval((low + high) / 2, low, high)) is verdict


def test_the_equivalence_margin_is_configurable_per_comparison() -> None:
    interval = Interval(1.08, 1.07, 1.09)
    assert decide(interval) is Verdict.FASTER
    assert decide(interval, delta=0.10) is Verdict.SAME
    with pytest.raises(ValueError, match="between 0 and 1"):
        decide(interval, delta=0)


def test_an_unknown_verdict_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"^expected verdict 'quicker' is not a verdict \(known: faster, "
                                         r"slower, no-difference, inconclusive\)$"):
        Verdict.parse("quicker", "expected verdict")


def test_the_bootstrap_interval_is_reproducible_and_brackets_the_ratio() -> None:
    base = [2.0 + 0.01 * (i % 5) for i in range(20)]
    cand = [1.0 + 0.01 * (i % 3) for i in range(20)]
    first = ratio_interval(base, cand, paired=True)
    assert first == ratio_interval(base, cand, paired=True)  # fixed seed: the same samples, the same interval
    assert first.low <= first.ratio <= first.high and first.blocks == 20
    assert first.low > 1.9 and first.high < 2.1
    assert decide(first) is Verdict.FASTER


def test_paired_rounds_cancel_a_drift_that_hits_both_sides() -> None:
    drift = [1 + 0.1 * i for i in range(20)]  # the machine slows down through the run
    base = [2.0 * d for d in drift]
    cand = [1.0 * d for d in drift]
    paired = ratio_interval(base, cand, paired=True)
    unpaired = ratio_interval(base, cand, paired=False)
    assert paired.high - paired.low < unpaired.high - unpaired.low


def test_an_interval_needs_ten_blocks_a_side() -> None:
    with pytest.raises(ValueError, match="at least 10 timing blocks per side, got 9"):
        ratio_interval([1.0] * 9, [1.0] * 12, paired=False)


# --- comparisons: intervals, noise, verdicts --------------------------------------------------------

def _measurement(name: str, median: float, spread: float = 0.0, share: float | None = 1.0,
                 blocks: int = 20) -> bench.Measurement:
    samples = [median * (1 + spread * ((i % 5) - 2) / 4) for i in range(blocks)]
    compile_stats = bench.CompileStats(graphs=1, graph_breaks=0, break_reasons=(), recompiles=0,
                                       recompile_reasons=())
    return bench.Measurement(name, "cpu", bench.FirstCalls(bench.FirstCall(0.5)),
                             bench.Stats.from_samples(samples), None, compile_stats, share)


def _comparison(*measurements: bench.Measurement, load: float | None = 0.1) -> bench.Comparison:
    return bench.Comparison("cpu", measurements[0].name, measurements, threads=1, input_sets=1,
                            load_average=load, load_average_end=load, cpus=2)


def test_speedups_are_ratios_of_medians_against_the_baseline_or_a_named_candidate() -> None:
    comparison = _comparison(_measurement("eager", 6.0), _measurement("fast", 2.0),
                             _measurement("faster", 1.0))
    assert comparison.speedup("fast") == 3.0
    assert comparison.speedup("faster", over="fast") == 2.0
    assert [row["speedup"] for row in comparison.rows()] == [1.0, 3.0, 6.0]
    with pytest.raises(KeyError, match="no candidate named 'slow'"):
        comparison.speedup("slow")


def test_a_clear_difference_on_a_quiet_machine_is_a_verdict_with_its_interval() -> None:
    comparison = _comparison(_measurement("eager", 6.0, 0.02), _measurement("fast", 2.0, 0.02))
    judgement = comparison.judge("fast")
    assert judgement.verdict is Verdict.FASTER and not judgement.noise
    assert judgement.interval.low <= 3.0 <= judgement.interval.high
    assert comparison.judge("eager", over="fast").verdict is Verdict.SLOWER


@pytest.mark.parametrize(("kwargs", "load", "reason"), [
    ({"spread": 1.2}, 0.1, "fast: blocks spread"),
    ({"share": 0.5}, 0.1, "fast: had the CPU 50% of the time"),
    ({}, 3.0, "machine busy: load average 3.00 on 2 CPUs"),
])
def test_a_noisy_measurement_is_never_the_basis_of_a_verdict(kwargs: dict, load: float, reason: str) -> None:
    comparison = _comparison(_measurement("eager", 6.0), _measurement("fast", 2.0, **kwargs), load=load)
    judgement = comparison.judge("fast")
    assert decide(judgement.interval) is Verdict.FASTER  # the numbers alone would say "faster"...
    assert judgement.verdict is Verdict.INCONCLUSIVE  # ...but noise supports no verdict
    assert any(r.startswith(reason) for r in judgement.noise), judgement.noise
    assert "测量受干扰" in comparison.display_caption() and "NOISY" in comparison.caption()


def test_an_interval_too_wide_to_say_much_is_noise_too() -> None:
    # Blocks that scatter within the spread limit, but out of step: the ratio's interval is wide.
    base = [6.0 * (1 + 0.2 * ((i * 7) % 5 - 2) / 2) for i in range(20)]
    fast = [3.0 * (1 + 0.2 * ((i * 3) % 5 - 2) / 2) for i in range(20)]
    comparison = bench.Comparison.of_samples("cpu", {"eager": base, "fast": fast}, loads=(0.1, 0.1))
    judgement = comparison.judge("fast")
    assert judgement.verdict is Verdict.INCONCLUSIVE
    assert any("the interval is" in reason for reason in judgement.noise), judgement.noise
    assert comparison.judge("fast").noise == judgement.noise  # the same samples, the same verdict


def test_record_verdict_emits_the_verdict_and_what_the_snippet_expects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from perfblog.harness import record

    emitted: list[dict] = []
    monkeypatch.setattr(record, "_emit", emitted.append)
    comparison = _comparison(_measurement("eager", 6.0, 0.02), _measurement("fast", 2.0, 0.02))
    comparison.record_verdict("fast", "fast", expect={"cpu": "faster", "cuda": "slower"}, delta=0.1)
    (payload,) = emitted
    assert payload["kind"] == "verdict" and payload["verdict"] == "faster" and payload["expected"] == "faster"
    assert payload["delta"] == 0.1 and payload["baseline"] == "eager" and payload["blocks"] == 20
    assert payload["low"] <= payload["ratio"] <= payload["high"] and payload["noise"] == []
    assert isinstance(payload["line"], int)
    with pytest.raises(ValueError, match="expected verdict 'fastest' is not a verdict"):
        comparison.record_verdict("fast", "fast", expect="fastest")


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


#: Noise limits that ignore this shared machine's load, for tests of the method on fake clocks.
QUIET = bench.NoiseLimits(load_per_cpu=1e9)


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch) -> FakeCuda:
    cuda = FakeCuda()
    monkeypatch.setattr(clocks, "cuda_module", lambda: cuda)
    return cuda


def _workload(cuda: FakeCuda, seen: list[int], step: float = FakeCuda.STEP, tag: str = "call"):
    def fn(x):
        cuda.now += step
        cuda.log.append(tag)
        seen.append(int(x[0]))
        return x * 2

    return fn


def test_cuda_path_times_with_events_and_synchronises_before_every_reading(fake_cuda: FakeCuda) -> None:
    import torch

    seen: list[int] = []
    inputs = [(torch.full((4,), float(i + 1)),) for i in range(3)]
    result = bench.compare({"fn": _workload(fake_cuda, seen)}, inputs, device="cuda", min_run_time=0.05,
                           reset=False)
    stats = result["fn"].timing
    assert stats.median_s == pytest.approx(FakeCuda.STEP) and stats.iqr_s == pytest.approx(0.0)
    assert stats.repeats == bench.ROUNDS
    assert stats.number_per_repeat * FakeCuda.STEP >= bench.CudaClock.min_block_s  # blocks amortise events
    assert result.device == "cuda" and result.rows()[0]["device"] == "cuda"


def test_cuda_first_call_is_synchronised_and_warm_up_uses_every_input_set_before_timing(
    fake_cuda: FakeCuda,
) -> None:
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


def test_candidates_are_timed_in_interleaved_rounds_so_a_slow_spell_hits_them_alike(
    fake_cuda: FakeCuda,
) -> None:
    import torch

    fast, slow = _workload(fake_cuda, [], 0.002, "a"), _workload(fake_cuda, [], 0.004, "b")
    result = bench.compare({"a": fast, "b": slow}, [(torch.ones(4),)], device="cuda", min_run_time=0.04,
                           rounds=10, reset=False, limits=QUIET)
    timed = [entry for entry in fake_cuda.log[fake_cuda.log.index("record"):] if entry in ("a", "b")]
    switches = sum(1 for x, y in itertools.pairwise(timed) if x != y)
    assert switches >= 10  # the candidates take turns, round after round, not one run each
    assert result.speedup("b") == pytest.approx(0.5) and result.judge("b").verdict is Verdict.SLOWER


def test_cuda_peak_memory_is_read_after_a_reset_and_a_synchronisation(fake_cuda: FakeCuda) -> None:
    import torch

    result = bench.compare({"fn": _workload(fake_cuda, [])}, [(torch.ones(4),)], device="cuda",
                           min_run_time=0.01, reset=False)
    assert result["fn"].peak_memory_bytes == 4096
    log = fake_cuda.log
    reset = log.index("reset_peak")
    assert log[reset - 1] == "sync"
    assert log[reset + 1:log.index("max_memory")] == ["call", "sync"]


# --- the CPU path, with real torch --------------------------------------------------------------------

def test_the_harness_pins_cpu_threads_itself_and_restores_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.delenv(bench.THREADS_ENV, raising=False)
    torch.set_num_threads(2)
    seen: list[int] = []

    def fn(x):
        seen.append(torch.get_num_threads())
        return x + 1

    result = bench.compare({"fn": fn}, [(torch.ones(8),)], device="cpu", min_run_time=0.01, reset=False)
    assert set(seen) == {1} and result.threads == 1  # every call, warm-up and timing, on one thread
    assert torch.get_num_threads() == 2
    assert "1 线程（由测量框架固定）" in result.display_caption()
    monkeypatch.setenv(bench.THREADS_ENV, "2")
    seen.clear()
    assert bench.compare({"fn": fn}, [(torch.ones(8),)], device="cpu", min_run_time=0.01,
                         reset=False).threads == 2 and set(seen) == {2}


def test_cpu_path_warms_up_before_timing_and_records_its_cpu_share(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    calls: list[str] = []
    measured_from: list[int] = []
    real_calibrate = bench.CpuClock.calibrate

    def spy(self, call, target):
        measured_from.append(len(calls))
        return real_calibrate(self, call, target)

    monkeypatch.setattr(bench.CpuClock, "calibrate", spy)

    def fn(x):
        calls.append("call")
        return x + 1

    result = bench.compare({"fn": fn}, [(torch.ones(8),), (torch.ones(8) * 2,)], device="cpu",
                           min_run_time=0.01, warmup=3, reset=False)
    assert measured_from == [1 + 3]  # first call, then three warm-up calls, then calibration and timing
    m = result["fn"]
    assert m.timing.repeats == bench.ROUNDS and len(m.timing.samples) == bench.ROUNDS
    assert m.peak_memory_bytes is None and 0 < m.cpu_share <= 1
    assert m.first.warm is None  # nothing compiled: no warm first call, no compile columns
    assert bench.CPU_MEMORY_NOTE in result.caption()
    assert not any("首次调用" in column for column in result.display_rows()[0])


def test_compile_times_are_cold_from_an_empty_cache_then_warm_and_split_from_torch_metrics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch

    monkeypatch.setattr(compilation, "_process_warmed", {"cpu"})  # no throwaway Inductor compile in a test
    caches: list[tuple[str, bool]] = []
    timed = compilation.timed_first_call

    def spy(call, sync):
        path = os.environ["TORCHINDUCTOR_CACHE_DIR"]
        caches.append((path, not os.listdir(path)))
        return timed(call, sync)

    monkeypatch.setattr(compilation, "timed_first_call", spy)

    def f(x):
        return torch.sin(x) + 1

    compiled = torch.compile(f, backend="eager")
    result = bench.compare({"eager": f, "compiled": compiled}, [(torch.randn(16),)], device="cpu",
                           min_run_time=0.01)
    first = result["compiled"].first
    assert first.cold.compiled and first.warm is not None and first.warm.compiled
    for call in (first.cold, first.warm):
        assert call.dynamo_s is not None and call.dynamo_s > 0 and call.inductor_s is not None
        assert call.dynamo_s + call.inductor_s <= call.wall_s
    (eager_cache, _), (cold_cache, cold_empty), (warm_cache, _) = caches
    assert eager_cache != cold_cache and cold_empty  # each candidate has its own, empty cache directory...
    assert warm_cache == cold_cache  # ...which the warm first call reuses...
    assert not os.path.exists(cold_cache)  # ...and which is removed afterwards
    assert result["eager"].first.warm is None
    row = result.display_rows()[1]
    assert row["冷编译首次调用 s（Dynamo / Inductor）"].count("/") == 1
    assert result.display_rows()[0]["热缓存首次调用 s（Dynamo / Inductor）"] == "—"
    raw = result.rows()[1]
    assert raw["cold_dynamo_s"] is not None and raw["warm_first_call_s"] is not None


def test_all_zero_inputs_are_refused() -> None:
    import torch

    with pytest.raises(ValueError, match="input set 1, argument 0 is all zeros"):
        bench.compare({"fn": torch.sin}, [(torch.randn(4),), (torch.zeros(4),)], device="cpu")


def test_a_candidate_that_computes_something_else_fails_the_comparison() -> None:
    import torch

    with pytest.raises(AssertionError, match="cos differs from sin"):
        bench.compare({"sin": torch.sin, "cos": torch.cos}, [(torch.randn(16),)], device="cpu",
                      min_run_time=0.01, reset=False)


def test_whole_runs_take_turns_and_give_one_comparison_per_metric() -> None:
    order: list[str] = []

    def run(name: str, seconds: float):
        def go() -> dict[str, float]:
            order.append(name)
            return {"prefill": seconds, "decode": seconds / 10}
        return go

    found = bench.interleave({"eager": run("eager", 2.0), "compiled": run("compiled", 1.0)}, repeats=12,
                             device="cpu")
    assert set(found) == {"prefill", "decode"}
    assert order[:4] == ["eager", "compiled", "compiled", "eager"]  # the order rotates each round
    assert found["decode"].speedup("compiled") == pytest.approx(2.0)
    assert found["prefill"]["eager"].timing.repeats == 12


# --- records -----------------------------------------------------------------------------------------

def _record(monkeypatch: pytest.MonkeyPatch, comparison: bench.Comparison) -> dict[str, dict]:
    from perfblog.harness import record

    emitted: list[dict] = []
    monkeypatch.setattr(record, "_emit", emitted.append)
    comparison.record("timings", caption="一句说明")
    return {payload["name"]: payload for payload in emitted}


def test_record_emits_a_compact_chinese_table_with_the_interval_in_the_speedup_column(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    comparison = _comparison(_measurement("eager", 42e-6, 0.02), _measurement("fast", 21e-6, 0.02))
    shown = _record(monkeypatch, comparison)["timings"]
    assert shown["kind"] == "table"
    assert shown["columns"] == ["写法", "中位数（µs）", "IQR（µs）", "轮数", "加速比（95 % 区间）"]
    eager, fast = shown["rows"]
    assert eager[:4] == ["eager", "42.0", "0.420", 20] and eager[4] == "1（基准）"
    assert fast[4].startswith("2.00×（") and fast[4].endswith("）")
    caption = shown["caption"]
    assert caption.startswith("一句说明；设备 cpu，1 线程（由测量框架固定），1 组输入轮换")
    assert "交替计时 20 轮" in caption and "95 % 区间" in caption
    assert bench.TABLE_WORDS["zh"].cpu_memory in caption


def test_record_also_emits_the_table_worded_in_english_with_the_snippets_own_translations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from perfblog.harness import record

    emitted: list[dict] = []
    monkeypatch.setattr(record, "_emit", emitted.append)
    comparison = _comparison(_measurement("eager", 42e-6, 0.02), _measurement("快", 21e-6, 0.02))
    comparison.record("timings", caption="一句说明",
                      translations={"en": {"快": "fast", "一句说明": "a note"}})
    shown = {payload["name"]: payload for payload in emitted}
    assert list(shown) == ["timings", "timings.en", "timings.raw"]
    english = shown["timings.en"]
    assert english["columns"] == ["variant", "median (µs)", "IQR (µs)", "rounds", "speed-up (95 % interval)"]
    assert [row[0] for row in english["rows"]] == ["eager", "fast"]
    assert english["rows"][0][4] == "1 (baseline)" and english["rows"][1][4].startswith("2.00× (")
    assert english["caption"].startswith("a note; device cpu, 1 thread (pinned by the harness)")
    assert english["caption"].endswith(bench.TABLE_WORDS["en"].cpu_memory + ".")
    assert shown["timings"]["rows"][1][0] == "快"  # the Chinese table keeps the snippet's own words


def test_record_refuses_translations_into_a_language_the_harness_has_no_words_for() -> None:
    comparison = _comparison(_measurement("eager", 42e-6), _measurement("fast", 21e-6))
    with pytest.raises(ValueError, match=r"no words in \['fr'\]"):
        comparison.record("timings", translations={"fr": {}})


def test_record_keeps_every_raw_number_and_the_full_method_in_a_raw_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    comparison = _comparison(_measurement("eager", 2.0), _measurement("fast", 1.0), load=0.5)
    raw = _record(monkeypatch, comparison)["timings.raw"]
    assert raw["columns"][:3] == ["candidate", "device", "cold_first_call_s"]
    assert {"calls_per_block", "break_reasons", "recompiles", "speedup_low", "speedup_high", "cpu_share",
            "cold_dynamo_s", "warm_inductor_s"} <= set(raw["columns"])
    assert [row[1] for row in raw["rows"]] == ["cpu", "cpu"]
    assert raw["caption"].startswith("一句说明 (device cpu, 1 thread (pinned by the harness)")
    assert "1-min load average 0.50" in raw["caption"]


def test_each_time_column_uses_the_largest_unit_that_keeps_its_values_under_a_thousand() -> None:
    fast = _comparison(_measurement("a", 999e-6), _measurement("b", 5e-6))
    slow = _comparison(_measurement("a", 1.5), _measurement("b", 0.2))
    assert "中位数（µs）" in fast.display_rows()[0]
    assert [row["中位数（s）"] for row in slow.display_rows()] == ["1.50", "0.200"]


def test_peak_memory_gets_a_column_only_where_it_was_measured() -> None:
    stats = bench.Stats.from_samples([1e-3] * 12)
    compile_stats = _measurement("x", 1.0).compile
    measured = bench.Measurement("gpu", "cuda", bench.FirstCalls(bench.FirstCall(0.5)), stats, 3 * 2**20,
                                 compile_stats)
    with_peak = bench.Comparison("cuda", "gpu", (measured,), 1, 1).display_rows()
    without = _comparison(_measurement("x", 1.0)).display_rows()
    assert with_peak[0]["峰值显存（MiB）"] == "3.00"
    assert not any("显存" in column for column in without[0])


@pytest.mark.parametrize(("value", "shown"), [
    (1234.5, "1234"), (123.4, "123"), (99.96, "100"), (12.34, "12.3"), (1.0, "1.00"), (0.01234, "0.0123"),
    (0.00012, "0.000120"), (0.0, "0"),
])
def test_readable_numbers_have_three_significant_digits_and_no_exponent(value: float, shown: str) -> None:
    assert bench.readable(value) == shown


def test_stats_of_an_odd_sample_are_its_median_and_quartiles() -> None:
    stats = bench.Stats.from_samples([5.0, 1.0, 4.0, 2.0, 3.0], number_per_repeat=10)
    assert (stats.q1_s, stats.median_s, stats.q3_s) == (2.0, 3.0, 4.0)
    assert stats.iqr_s == 2.0 and stats.spread == pytest.approx(2 / 3)
    assert stats.repeats == 5 and stats.number_per_repeat == 10 and stats.samples == (5.0, 1.0, 4.0, 2.0, 3.0)


def test_stats_of_an_even_sample_interpolate_like_numpy_linear_quantiles() -> None:
    stats = bench.Stats.from_samples([1.0, 2.0, 3.0, 4.0])
    assert (stats.q1_s, stats.median_s, stats.q3_s) == (1.75, 2.5, 3.25)


def test_stats_refuse_an_empty_sample() -> None:
    with pytest.raises(ValueError, match="no timing samples"):
        bench.Stats.from_samples([])


def test_first_line_skips_blank_lines_and_strips() -> None:
    assert bench.first_line("\n  Data-dependent branching\n  Explanation: ...") == "Data-dependent branching"


def test_importing_the_generator_and_its_harness_does_not_import_torch() -> None:
    code = "import sys, perfblog.generator, perfblog.generator.bench; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("language", ["EN", "en-GB", "", "english"])
def test_a_table_worded_for_a_language_is_keyed_by_its_primary_subtag(
    monkeypatch: pytest.MonkeyPatch, language: str,
) -> None:
    from perfblog.harness import record

    monkeypatch.setattr(record, "_emit", lambda payload: None)
    with pytest.raises(ValueError, match="primary subtag"):
        record.table("t", [{"a": 1}], translations={language: {"a": "b"}})
