"""The one rule that turns two sets of timings into a verdict a sentence may state.

A comparison's speed ratio is the baseline's median time over the candidate's (above 1: the candidate
is faster). Its uncertainty is a percentile bootstrap: the timing blocks are resampled with replacement
(jointly when the blocks were taken in interleaved rounds, so that a slow spell on the machine moves
both sides together), ``RESAMPLES`` times with a fixed seed, so the same samples always give the same
interval. With an equivalence margin δ (default 5 %) and the 95 % interval [low, high]:

- **faster** when low > 1 + δ;
- **slower** when high < 1 − δ;
- **no measurable difference** when the whole interval lies inside [1 − δ, 1 + δ];
- **inconclusive** otherwise, and always when the measurement was noisy (see ``stats.NoiseLimits``).

Used on both sides: the harness computes verdicts in the snippet's kernel (a ``Judgement``: a candidate
against a baseline), the store validates them, and the embeds phrase them. Only numpy is imported, and
only to resample.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

#: Confidence of the interval.
CONFIDENCE = 0.95
#: Equivalence margin: ratios within 1 ± DELTA are "no measurable difference".
DELTA = 0.05
#: A verdict needs at least this many timing blocks per side.
MIN_BLOCKS = 10
#: Bootstrap resamples, and their seed: the same samples always give the same interval.
RESAMPLES = 2000
SEED = 20261130


class Verdict(StrEnum):
    """What a comparison supports; the values are what a snippet writes in ``expect=``."""

    FASTER = "faster"
    SLOWER = "slower"
    SAME = "no-difference"
    INCONCLUSIVE = "inconclusive"

    @classmethod
    def parse(cls, text: object, what: str = "") -> Verdict:
        """The verdict named ``text``; ValueError listing the known ones otherwise (``what`` leads it)."""
        try:
            return cls(text)  # type: ignore[arg-type]
        except ValueError:
            known = ", ".join(v.value for v in cls)
            lead = f"{what} " if what else ""
            raise ValueError(f"{lead}{text!r} is not a verdict (known: {known})") from None


@dataclass(frozen=True)
class Interval:
    """A speed ratio (baseline time / candidate time) and its bootstrap confidence interval."""

    ratio: float
    low: float
    high: float
    confidence: float = CONFIDENCE
    blocks: int = 0  # timing blocks per side (the smaller side when unpaired)


def decide(interval: Interval, delta: float = DELTA) -> Verdict:
    """The rule, on an interval (noise is the caller's business: a noisy measurement is inconclusive)."""
    if not 0 < delta < 1:
        raise ValueError(f"the equivalence margin must be between 0 and 1, not {delta!r}")
    if interval.low > 1 + delta:
        return Verdict.FASTER
    if interval.high < 1 - delta:
        return Verdict.SLOWER
    if 1 - delta <= interval.low and interval.high <= 1 + delta:
        return Verdict.SAME
    return Verdict.INCONCLUSIVE


def ratio_interval(baseline: Sequence[float], candidate: Sequence[float], *, paired: bool,
                   confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = SEED) -> Interval:
    """Median(baseline) / median(candidate) with a percentile bootstrap interval.

    ``paired``: the i-th blocks of both sides were timed in the same round, so rounds are resampled
    whole. Fewer than ``MIN_BLOCKS`` blocks on either side is a ValueError: no interval from so little.
    """
    import numpy as np

    base = np.asarray(baseline, dtype=float)
    cand = np.asarray(candidate, dtype=float)
    blocks = min(len(base), len(cand))
    if blocks < MIN_BLOCKS:
        raise ValueError(f"an interval needs at least {MIN_BLOCKS} timing blocks per side, got {blocks}")
    if paired and len(base) != len(cand):
        raise ValueError(f"paired samples differ in length: {len(base)} and {len(cand)}")
    if (base <= 0).any() or (cand <= 0).any():
        raise ValueError("timings must be positive")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(base), size=(resamples, len(base)))
    other = picks if paired else rng.integers(0, len(cand), size=(resamples, len(cand)))
    ratios = np.median(base[picks], axis=1) / np.median(cand[other], axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return Interval(ratio=float(np.median(base) / np.median(cand)), low=float(low), high=float(high),
                    confidence=confidence, blocks=blocks)


@dataclass(frozen=True)
class Judgement:
    """A candidate against a baseline: the ratio, its interval, the margin, what noise there was."""

    candidate: str
    baseline: str
    interval: Interval
    delta: float
    noise: tuple[str, ...]

    @property
    def verdict(self) -> Verdict:
        """The rule's verdict; a noisy measurement supports none."""
        return Verdict.INCONCLUSIVE if self.noise else decide(self.interval, self.delta)
