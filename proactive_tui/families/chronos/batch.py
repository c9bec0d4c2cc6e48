"""Chronos's tables in a batch report (`BatchPart.tables`).

Per tier (the paper reports simple and complex apart): positive- and negative-branch success, the
overall success (their equal-weight mean, `metrics.chronos_metrics`), action and status accuracy;
each computed per repeat, then mean ± std over repeats. A second table per tier has what the
earlier `eval chronos` command printed beside each rate: how many positive and negative sessions
it rests on (a tier with no negative session has no overall success, and the 0 says why), and
the branching samples with both branches run, with the share where both branches succeeded (the
agent told the two futures apart). Apart, so the per-tier table stays the paper's columns and
fits a terminal. A session **passes** (pass^k) when its task succeeded (the
oracle's verdict); a session without a verdict is left out.
"""

from __future__ import annotations

from proactive_tui.core.family import BatchPart

from typing import Any

from proactive_tui.evalrun.report import Column, ReportRow, ReportTable, Trial, consistency_table, interval, per_repeat
from proactive_tui.families.chronos.metrics import TIERS, SessionSample, chronos_metrics

MEASURES = (("positive_success", "positive success"), ("negative_success", "negative success"),
            ("overall_success", "overall success"), ("action_accuracy", "action accuracy"),
            ("status_accuracy", "status accuracy"))

COUNTS = (("positive_sessions", "positive sessions"), ("negative_sessions", "negative sessions"),
          ("paired_samples", "paired samples"))
"""The branches table's counts (summed over repeats): how many sessions each rate rests on."""


def _counts(sample: SessionSample) -> list[float]:
    """What `chronos_metrics` counts of one session, for a bootstrap resample to sum: the
    session, positive scored and succeeded, negative scored and succeeded, then its turns, right
    actions and right statuses (a session without a verdict adds only itself, as it is left out)."""
    scored = sample.success is not None
    pos, neg = scored and sample.branch == "positive", scored and sample.branch == "negative"
    ok = bool(sample.success)
    turns = [sample.action_correct, sample.status_correct] if scored else [[], []]
    return [1.0, float(pos), float(pos and ok), float(neg), float(neg and ok),
            float(len(turns[0])), float(sum(turns[0])), float(sum(turns[1]))]


def _figures(sums: Any) -> dict[str, Any]:
    """`chronos_metrics`'s rates over arrays of summed `_counts` (NaN where a rate has no sessions
    or turns; no overall success without both branches)."""
    positive, negative = sums[..., 2] / sums[..., 1], sums[..., 4] / sums[..., 3]
    return {"positive_success": positive, "negative_success": negative, "overall_success": (positive + negative) / 2,
            "action_accuracy": sums[..., 6] / sums[..., 5], "status_accuracy": sums[..., 7] / sums[..., 5]}


def _unit(result: Any, sample: SessionSample) -> str:
    """What a bootstrap resamples: the environment, or the branching sample both branches share
    (its two branches are two environments of one item; drawn apart they would never pair)."""
    return sample.sample_id or result.key.env_id


def _sample(result: Any) -> SessionSample | None:
    section = result.record.section
    o = section.outcome if section is not None else None
    if o is None or o.branch not in ("positive", "negative"):
        return None
    return SessionSample.from_turns(o.branch, o.success, section.turns, tier=o.tier if o.tier in TIERS else None,
                                    sample_id=(result.record.environment or {}).get("sample_id"))


def batch_trials(result: Any) -> list[Trial]:
    """The session as pass^k sees it: one task, passed when it succeeded (the oracle's verdict)."""
    s = _sample(result)
    return [] if s is None else [Trial(model=result.key.agent, groups=[s.tier or "-", "overall"], task=result.key.task,
                                       passed=s.success)]


def batch_groups(result: Any) -> list[str]:
    """The rows a session counts in: its tier (sessions with no outcome are in no row)."""
    sample = _sample(result)
    return [sample.tier or "-"] if sample is not None else []


def batch_tables(results: list[Any], repeats: int) -> list[ReportTable]:
    models = sorted({r.key.agent for r in results})
    samples = [(r, _sample(r)) for r in results]
    rows, branch_rows = [], []
    for model in models:
        own = [(r, s) for r, s in samples if r.key.agent == model and s is not None]
        for tier in [t for t in TIERS if any(s.tier == t for _, s in own)]:
            per: dict[int, list[SessionSample]] = {}
            cells = []
            for r, s in own:
                if s.tier == tier:
                    per.setdefault(r.key.repeat, []).append(s)
                    cells.append((_unit(r, s), r.key.repeat, _counts(s)))
            figures = {rep: chronos_metrics(ss) for rep, ss in per.items()}
            row, branch = ReportRow(model=model, group=tier), ReportRow(model=model, group=tier)
            for key, _ in MEASURES:
                row.values[key], row.std[key] = per_repeat({rep: getattr(m, key) for rep, m in figures.items()})
                found = interval(cells, lambda sums, key=key: _figures(sums)[key])
                if found is not None:
                    row.interval[key] = found
            row.values["sessions"] = sum(m.sessions for m in figures.values())
            for key, _ in COUNTS:
                branch.values[key] = sum(getattr(m, key) for m in figures.values())
            branch.values["paired_success"], branch.std["paired_success"] = per_repeat(
                {rep: m.paired_success for rep, m in figures.items()})
            rows.append(row)
            branch_rows.append(branch)
    columns = [Column(key="sessions", label="sessions", unit="count")]
    columns += [Column(key=key, label=label, unit="pct") for key, label in MEASURES]
    tables = [ReportTable(id="tiers", title="Chronos: per tier", group_label="tier", columns=columns, rows=rows,
                          notes=["overall = mean of the positive- and negative-branch rates (n/a with one branch "
                                 "missing); accuracies pool the tier's agent turns; mean ± std over repeats "
                                 "[95% interval over scenarios, a branching sample's two branches together]"])]
    branches = [Column(key=key, label=label, unit="count") for key, label in COUNTS]
    branches.append(Column(key="paired_success", label="both branches right", unit="pct"))
    tables.append(ReportTable(
        id="branches", title="Chronos: branches per tier", group_label="tier", columns=branches, rows=branch_rows,
        notes=["the sessions each rate of the per-tier table rests on (a 0 is why an overall is n/a), summed over "
               "repeats; paired samples: branching samples with both branches run in a repeat; both branches "
               "right: the share of those where both succeeded, mean ± std over repeats"]))
    trials = [t for r in results for t in batch_trials(r)]
    tables.append(consistency_table(trials, repeats, "tier", "its task succeeded (the oracle's verdict)",
                                    "Chronos: consistency over repeats"))
    return tables


class ChronosBatch(BatchPart):
    """Chronos's figures of a batch: the functions above, as the family's batch part."""

    tables = staticmethod(batch_tables)
    trials = staticmethod(batch_trials)
    groups = staticmethod(batch_groups)


BATCH = ChronosBatch()
