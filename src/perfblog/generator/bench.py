"""The harness as snippets import it (``from perfblog.generator.bench import compare``): its measuring API,
which lives in ``perfblog.harness``."""

from perfblog.harness.clocks import (
    THREADS,
    THREADS_ENV,
    Clock,
    CpuClock,
    CudaClock,
    pin_threads,
    pinned_threads,
    threads_for,
)
from perfblog.harness.compare import CPU_MEMORY_NOTE, ROUNDS, compare, interleave
from perfblog.harness.compilation import (
    CompileStats,
    FirstCall,
    FirstCalls,
    count_compiles,
    first_calls,
    first_line,
    inductor_cache_dir,
    read_compile_stats,
    reset_compile_stats,
)
from perfblog.harness.fresh import FreshCall, FreshCalls, fresh_first_calls
from perfblog.harness.stats import Comparison, Measurement, NoiseLimits, Stats
from perfblog.harness.verdict import Judgement
from perfblog.harness.words import TABLE_WORDS, TableWords, readable

__all__ = [
    "CPU_MEMORY_NOTE", "ROUNDS", "TABLE_WORDS", "THREADS", "THREADS_ENV", "Clock", "Comparison",
    "CompileStats", "CpuClock", "CudaClock", "FirstCall", "FirstCalls", "FreshCall", "FreshCalls",
    "Judgement", "Measurement", "NoiseLimits", "Stats", "TableWords", "compare", "count_compiles",
    "first_calls", "first_line", "fresh_first_calls",
    "inductor_cache_dir", "interleave", "pin_threads", "pinned_threads", "read_compile_stats", "readable",
    "reset_compile_stats", "threads_for",
]
