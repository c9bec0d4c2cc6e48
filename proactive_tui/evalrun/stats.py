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
- **95% interval** of a headline figure: a percentile bootstrap over environments
  (`bootstrap_interval`), numpy's Generator seeded with `BOOTSTRAP_SEED`.
"""

from __future__ import annotations

import statistics
from math import comb
from typing import Any, Callable, Iterable, Mapping


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


# -- the 95% interval of a headline figure: a percentile bootstrap over environments -------------

BOOTSTRAP_SEED = 30
"""The seed of every bootstrap (numpy's `default_rng`), fixed so an interval is the same on every
machine and every recomputation (`report show`, `report merge`); report.json records it."""
BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95


def bootstrap_interval(counts: Any, figure: Callable[[Any], Any], *, seed: int = BOOTSTRAP_SEED,
                       resamples: int = BOOTSTRAP_RESAMPLES, level: float = CONFIDENCE) -> tuple[float, float] | None:
    """The percentile interval of a figure over environments resampled with replacement.

    `counts[u, r, c]` holds additive counts of environment (resampling unit) `u` in repeat `r`;
    channel 0 is how many sessions it has there. `figure(sums)` maps counts summed over
    environments (`[..., C]`) to the figure of each repeat (`[...]`, NaN where undefined), as
    the table computes it from the same sums. Each resample draws the environments again (a
    session's repeats travel with its environment, as they are not independent draws), computes
    every repeat's figure, keeps the repeats that have a session, and averages them: the mean over
    repeats the table shows. Resamples with no defined figure are left out. None with fewer than
    two environments (nothing to resample) or no defined resample.

    Why environments and not sessions: the question a reader asks is how the figure would move on
    another draw of the benchmark's items; the repeats of one item are not new items. Why numpy
    and not scipy.stats.bootstrap: scipy is not a dependency (requirements/*.lock), and the
    percentile method is a few lines over a seeded Generator."""
    import numpy as np

    table = np.asarray(counts, dtype=float)
    units = table.shape[0]
    if units < 2:
        return None
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(units, np.full(units, 1.0 / units), size=resamples)  # [B, U]: draws per unit
    sums = np.einsum("bu,urc->brc", weights, table)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_repeat = np.where(sums[..., 0] > 0, figure(sums), np.nan)
    defined = ~np.isnan(per_repeat)
    n = defined.sum(axis=1)
    total = np.where(defined, per_repeat, 0.0).sum(axis=1)
    values = total[n > 0] / n[n > 0]
    if values.size == 0:
        return None
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)
