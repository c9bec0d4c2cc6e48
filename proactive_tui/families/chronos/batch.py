"""Chronos's tables in a batch report (`Family.batch_tables`).

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

from typing import Any

from proactive_tui.evalrun.report import Column, ReportRow, ReportTable, Trial, consistency_table, per_repeat
from proactive_tui.families.chronos.metrics import TIERS, SessionSample, chronos_metrics

MEASURES = (("positive_success", "positive success"), ("negative_success", "negative success"),
            ("overall_success", "overall success"), ("action_accuracy", "action accuracy"),
            ("status_accuracy", "status accuracy"))

COUNTS = (("positive_sessions", "positive sessions"), ("negative_sessions", "negative sessions"),
          ("paired_samples", "paired samples"))
"""The branches table's counts (summed over repeats): how many sessions each rate rests on."""


def _sample(result: Any) -> SessionSample | None:
    section = result.record.section
    o = section.outcome if section is not None else None
    if o is None or o.branch not in ("positive", "negative"):
        return None
    return SessionSample.from_turns(o.branch, o.success, section.turns, tier=o.tier if o.tier in TIERS else None,
                                    sample_id=(result.record.environment or {}).get("sample_id"))


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
            for r, s in own:
                if s.tier == tier:
                    per.setdefault(r.key.repeat, []).append(s)
            figures = {rep: chronos_metrics(ss) for rep, ss in per.items()}
            row, branch = ReportRow(model=model, group=tier), ReportRow(model=model, group=tier)
            for key, _ in MEASURES:
                row.values[key], row.std[key] = per_repeat({rep: getattr(m, key) for rep, m in figures.items()})
            row.values["sessions"] = float(sum(m.sessions for m in figures.values()))
            for key, _ in COUNTS:
                branch.values[key] = float(sum(getattr(m, key) for m in figures.values()))
            branch.values["paired_success"], branch.std["paired_success"] = per_repeat(
                {rep: m.paired_success for rep, m in figures.items()})
            rows.append(row)
            branch_rows.append(branch)
    columns = [Column(key="sessions", label="sessions", unit="count")]
    columns += [Column(key=key, label=label, unit="pct") for key, label in MEASURES]
    tables = [ReportTable(id="tiers", title="Chronos: per tier", group_label="tier", columns=columns, rows=rows,
                          notes=["overall = mean of the positive- and negative-branch rates (n/a with one branch "
                                 "missing); accuracies pool the tier's agent turns; mean ± std over repeats"])]
    branches = [Column(key=key, label=label, unit="count") for key, label in COUNTS]
    branches.append(Column(key="paired_success", label="both branches right", unit="pct"))
    tables.append(ReportTable(
        id="branches", title="Chronos: branches per tier", group_label="tier", columns=branches, rows=branch_rows,
        notes=["the sessions each rate of the per-tier table rests on (a 0 is why an overall is n/a), summed over "
               "repeats; paired samples: branching samples with both branches run in a repeat; both branches "
               "right: the share of those where both succeeded, mean ± std over repeats"]))
    trials = [Trial(model=r.key.agent, groups=[s.tier or "-", "overall"], task=r.key.task, passed=s.success)
              for r, s in samples if s is not None]
    tables.append(consistency_table(trials, repeats, "tier", "its task succeeded (the oracle's verdict)",
                                    "Chronos: consistency over repeats"))
    return tables
