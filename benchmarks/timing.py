"""Timing a path many times and summarising it: median and p95, in milliseconds."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Wall times of repeated runs of one path, in milliseconds."""

    samples: tuple[float, ...]

    @property
    def runs(self) -> int:
        return len(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("nan")

    @property
    def p95(self) -> float:
        """The nearest-rank 95th percentile (with few runs, the slowest one)."""
        if not self.samples:
            return float("nan")
        ordered = sorted(self.samples)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]

    def cells(self) -> list[str]:
        """``runs``, median and p95 as table cells."""
        return [str(self.runs), _ms(self.median), _ms(self.p95)]


def _ms(value: float) -> str:
    if value != value:  # NaN: nothing was timed
        return "-"
    return f"{value:.3f}" if value < 1 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def time_each(action: Callable[[int], object], runs: int) -> Timing:
    """Run ``action(i)`` for i in 0..runs-1, timing each call on its own."""
    samples: list[float] = []
    for i in range(runs):
        started = time.perf_counter()
        action(i)
        samples.append((time.perf_counter() - started) * 1000)
    return Timing(tuple(samples))


def timing_of(samples: Sequence[float]) -> Timing:
    return Timing(tuple(samples))
