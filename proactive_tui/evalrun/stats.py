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
  (`bootstrap_interval`): `scipy.stats.bootstrap`, numpy's Generator seeded with `BOOTSTRAP_SEED`.
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
"""The seed of every bootstrap (numpy's `default_rng`, given as scipy's `rng`), fixed so an
interval is the same on every machine and every recomputation (`report show`, `report merge`);
report.json records it."""
BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95
BOOTSTRAP_METHOD = ("percentile bootstrap over environments, scipy.stats.bootstrap (method 'percentile', "
                    "rng numpy default_rng(seed))")
"""How report.json names the method (`report.Bootstrap.method`)."""


def bootstrap_library() -> str:
    """The release of scipy that computes the intervals ("scipy 1.17.1"), for report.json: the
    draws of a seeded bootstrap are reproducible with the same release. Read from the installed
    package's metadata, so writing a report imports no scipy where no interval is computed."""
    from importlib.metadata import version

    return f"scipy {version('scipy')}"


def bootstrap_interval(counts: Any, figure: Callable[[Any], Any], *, seed: int = BOOTSTRAP_SEED,
                       resamples: int = BOOTSTRAP_RESAMPLES, level: float = CONFIDENCE) -> tuple[float, float] | None:
    """The percentile interval of a figure over environments resampled with replacement, computed
    by `scipy.stats.bootstrap` (method "percentile", numpy's `default_rng(seed)` as its `rng`).

    `counts[u, r, c]` holds additive counts of environment (resampling unit) `u` in repeat `r`;
    channel 0 is how many sessions it has there. `figure(sums)` maps counts summed over
    environments (`[..., C]`) to the figure of each repeat (`[...]`, NaN where undefined), as
    the table computes it from the same sums. Each resample draws the environments again (a
    session's repeats travel with its environment, as they are not independent draws), computes
    every repeat's figure, keeps the repeats that have a session, and averages them: the mean over
    repeats the table shows (`_statistic`). None with fewer than two environments (nothing to
    resample).

    scipy resamples each environment's row of counts as one observation: the rows are given as
    the columns of an environment x (repeat, channel) table, `paired=True`, so every column is
    drawn with the same environments and a row never splits (a Chronos branching sample is one
    row already, its two branches summed by `report.interval`). The edge cases are settled here,
    not left to scipy's warnings:
    - a degenerate sample (every environment's counts identical): every resample is the sample
      itself, so the interval is the point (figure, figure), given without resampling (scipy's
      percentile interval of a constant distribution is that point, but degenerate data is where
      scipy warns or returns NaN, depending on method and version); None if the figure is undefined;
    - resamples whose figure is undefined (NaN in every repeat: no scored session drawn) are left
      out: the first pass's NaN interval (and its `DegenerateDataWarning`, ignored for that call
      only) is replaced by scipy's percentile interval of the defined resamples
      (`bootstrap_result` with no new resamples); None when no resample is defined.

    Why environments and not sessions: the question a reader asks is how the figure would move on
    another draw of the benchmark's items; the repeats of one item are not new items."""
    import warnings
    from types import SimpleNamespace

    import numpy as np

    table = np.asarray(counts, dtype=float)
    units = table.shape[0]
    if units < 2:
        return None
    rows = table.reshape(units, -1)  # environment x (repeat, channel): one observation per environment
    statistic = _statistic(figure, table.shape[1:])
    if np.all(rows == rows[0]):
        value = float(statistic(*rows.T, axis=-1))
        return None if np.isnan(value) else (value, value)
    from scipy.stats import DegenerateDataWarning, bootstrap  # here: a report without an interval loads no scipy

    def run(n_resamples: int, bootstrap_result: Any = None) -> Any:
        return bootstrap(tuple(rows.T), statistic, n_resamples=n_resamples, vectorized=True, paired=True, axis=-1,
                         confidence_level=level, method="percentile", bootstrap_result=bootstrap_result,
                         rng=np.random.default_rng(seed))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # undefined resamples: settled just below
        result = run(resamples)
    distribution = result.bootstrap_distribution
    defined = distribution[~np.isnan(distribution)]
    if defined.size == 0:
        return None
    if defined.size < distribution.size:
        result = run(0, SimpleNamespace(bootstrap_distribution=defined))
    low, high = result.confidence_interval
    return float(low), float(high)


def _statistic(figure: Callable[[Any], Any], shape: tuple[int, ...]) -> Callable[..., Any]:
    """The figure of a sample of environments as `scipy.stats.bootstrap` calls it: one array per
    (repeat, channel) column, environments along `axis` (any leading axes are resamples). Sums
    the environments' counts, computes each repeat's figure from the sums, and averages the
    repeats that have a session and a defined figure (NaN when none has)."""

    def statistic(*columns: Any, axis: int = -1) -> Any:
        import numpy as np

        sums = np.stack([c.sum(axis=axis) for c in columns], axis=-1)
        sums = sums.reshape(sums.shape[:-1] + tuple(shape))  # [..., R, C]
        with np.errstate(divide="ignore", invalid="ignore"):
            per_repeat = np.where(sums[..., 0] > 0, figure(sums), np.nan)
        defined = ~np.isnan(per_repeat)
        n = defined.sum(axis=-1)
        total = np.where(defined, per_repeat, 0.0).sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 0, total / n, np.nan)

    return statistic
