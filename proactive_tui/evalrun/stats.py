"""The statistics every family's batch report shares: mean and standard deviation over repeats,
pass^k, and the variance over repeats.

- **Mean ± std over repeats**: a figure (a domain's mean guidance, a split's F1) is computed once
  per repeat over that repeat's sessions, then averaged; the standard deviation is the sample one
  (n - 1), None with fewer than two repeats.
- **pass^k**: per task (environment and swept settings, one agent), with n finished repeats of
  which c passed, C(c, k) / C(n, k) (the unbiased estimate of "all of k tries pass"; with n = k
  it is 1 when every repeat passed, else 0), averaged over the tasks with at least k repeats.
  pass^1 is the plain pass rate.
- **Variance over repeats**: per task the sample variance of its score over its repeats, averaged
  over the tasks with at least two.
"""

from __future__ import annotations

import statistics
from math import comb
from typing import Iterable, Mapping


def mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def std(values: Iterable[float]) -> float | None:
    values = list(values)
    return statistics.stdev(values) if len(values) >= 2 else None


def mean_std(values: Iterable[float | None]) -> tuple[float | None, float | None]:
    """(mean, sample std) of the values that are not None."""
    present = [float(v) for v in values if v is not None]
    return mean(present), std(present)


def pass_hat_k(trials: Mapping[str, list[bool]], k: int) -> float | None:
    """pass^k over tasks (task -> pass flags of its repeats); None when no task has k repeats."""
    per_task = [comb(sum(flags), k) / comb(len(flags), k) for flags in trials.values() if len(flags) >= k >= 1]
    return mean(per_task)


def repeat_variance(scores: Mapping[str, list[float]]) -> float | None:
    """Mean over tasks of the sample variance of each task's scores over its repeats."""
    return mean(statistics.variance(v) for v in scores.values() if len(v) >= 2)
