"""How the harness words its tables, in each language it records them in (``TABLE_WORDS``), and its
numbers: three significant digits, never scientific notation."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TableWords:
    """The compact table's words in one language: headers, cells and the caption's sentences."""

    candidate: str
    cold: str
    warm: str
    median: str  # "{unit}" is the time unit
    iqr: str
    rounds: str
    speedup: str
    peak: str
    baseline: str  # the baseline's speed-up cell
    open: str  # brackets around a split or an interval
    close: str
    sentence: str  # joins the caption's sentences
    stop: str
    setup: Callable[[str, int, int], str]  # device, threads, input sets
    timing: Callable[[int], str]  # rounds
    ratio: Callable[[str], str]  # the baseline's name
    compile_note: str
    cpu_memory: str
    noisy: Callable[[str], str]  # the reasons, joined

    def bracket(self, text: str) -> str:
        return f"{self.open}{text}{self.close}"


#: The languages the compact table is recorded in; the first is the unsuffixed ``<name>``.
TABLE_WORDS: dict[str, TableWords] = {
    "zh": TableWords(
        candidate="写法", cold="冷编译首次调用 s（Dynamo / Inductor）",
        warm="热缓存首次调用 s（Dynamo / Inductor）",
        median="中位数（{unit}）", iqr="IQR（{unit}）", rounds="轮数", speedup="加速比（95 % 区间）",
        peak="峰值显存（MiB）", baseline="1（基准）", open="（", close="）", sentence="；", stop="。",
        setup=lambda device, threads, sets: (f"设备 {device}，{threads} 线程（由测量框架固定），"
                                             f"{sets} 组输入轮换"),
        timing=lambda rounds: f"预热后各写法交替计时 {rounds} 轮，取每次调用的中位数与四分位距（IQR）",
        ratio=lambda baseline: f"加速比 = {baseline} 的中位数 ÷ 本行的中位数，括号内为按轮自助法（bootstrap）"
                               "得到的 95 % 区间",
        compile_note="冷编译：同一进程里（进程一次性的编译器启动已在别处付过），重置 Dynamo、使用全新的空 "
                     "Inductor 缓存目录；"
                     "热缓存：同一缓存目录已填满后再次首次调用；"
                     "括号内为 torch 编译指标中的 Dynamo 跟踪与 Inductor（含 AOTAutograd）时间；均为单次测量",
        cpu_memory="CPU 上不测峰值内存",
        noisy=lambda reasons: f"测量受干扰（{reasons}），不据此下结论",
    ),
    "en": TableWords(
        candidate="variant", cold="cold first call s (Dynamo / Inductor)",
        warm="warm-cache first call s (Dynamo / Inductor)", median="median ({unit})", iqr="IQR ({unit})",
        rounds="rounds", speedup="speed-up (95 % interval)", peak="peak memory (MiB)",
        baseline="1 (baseline)",
        open=" (", close=")", sentence="; ", stop=".",
        setup=lambda device, threads, sets: (f"device {device}, {threads} thread{'s' * (threads != 1)} "
                                             f"(pinned by the harness), {sets} rotating input sets"),
        timing=lambda rounds: (f"after warm-up the variants take turns for {rounds} rounds; median and "
                               "interquartile range (IQR) per call"),
        ratio=lambda baseline: (f"speed-up = median of {baseline} / median of the row, with its 95 % "
                                "bootstrap interval over the rounds in brackets"),
        compile_note="cold: in the same process (its one-off compiler start-up already paid), Dynamo reset "
                     "and a fresh, empty Inductor cache directory; warm cache: the first "
                     "call again with that directory filled; in brackets the Dynamo tracing and Inductor "
                     "(AOTAutograd included) time from torch's compile metrics; single samples",
        cpu_memory="peak memory is not measured on CPU",
        noisy=lambda reasons: f"noisy measurement ({reasons}): no conclusion rests on it",
    ),
}


def time_unit(seconds: Sequence[float], below: float = 1000) -> tuple[str, float]:
    """The unit (and its factor from seconds) that shows the largest value under `below`."""
    largest = max(seconds, default=0.0)
    for unit, scale in (("µs", 1e6), ("ms", 1e3)):
        if largest * scale < below:
            return unit, scale
    return "s", 1.0


def readable(value: float) -> str:
    """Three significant digits (all digits from 1000 up), never scientific notation: 1234, 12.3, 0.0123."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:.0f}"
    value = float(f"{value:.3g}")  # round first, so 99.96 shows as 100, not 100.0
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"
