"""ProactiveBench's tables in a batch report (`Family.batch_tables`).

Per split (the names of the splits.json the traces were loaded with; `all traces` sums every
trace run) Recall, Precision, Accuracy, False-Alarm and F1, each computed as upstream's script
computes it (`metrics.metrics` over the split's summed confusion counts, `metrics.py`), once per
repeat, then mean ± std over repeats.

An event **passes** (pass^k) when it was judged correctly: its verdict accepted the agent's
decision (a proposal the user wanted, TP, or silence when none was needed, TN). An event with no
counted verdict is left out. The task is (trace, event).
"""

from __future__ import annotations

from typing import Any

from proactive_tui.evalrun.report import Column, ReportRow, ReportTable, Trial, consistency_table, per_repeat
from proactive_tui.families.proactivebench.metrics import Confusion, metrics

ALL = "all traces"
MEASURES = (("recall", "Recall"), ("precision", "Precision"), ("accuracy", "Accuracy"),
            ("false_alarm", "False-Alarm"), ("f1", "F1"))


def _splits(result: Any) -> list[str]:
    return list(result.record.section.splits or []) + [ALL]


def batch_groups(result: Any) -> list[str]:
    """The rows a session counts in: the splits its trace is in."""
    return _splits(result)


def batch_tables(results: list[Any], repeats: int) -> list[ReportTable]:
    models = sorted({r.key.agent for r in results})
    rows = []
    for model in models:
        own = [r for r in results if r.key.agent == model]
        splits = sorted({s for r in own for s in _splits(r)} - {ALL}) + [ALL]
        for split in splits:
            per: dict[int, Confusion] = {}
            events: dict[int, int] = {}
            for r in own:
                if split in _splits(r):
                    per[r.key.repeat] = per.get(r.key.repeat, Confusion()) + r.record.section.confusion
                    events[r.key.repeat] = events.get(r.key.repeat, 0) + r.record.section.confusion.judged
            row = ReportRow(model=model, group=split)
            figures = {rep: metrics(c) for rep, c in per.items()}
            for key, _ in MEASURES:
                row.values[key], row.std[key] = per_repeat({rep: getattr(m, key) for rep, m in figures.items()})
            row.values["events"], row.std["events"] = per_repeat({rep: float(n) for rep, n in events.items()})
            rows.append(row)
    columns = [Column(key=key, label=label, unit="pct") for key, label in MEASURES]
    columns.append(Column(key="events", label="judged events (per repeat)", unit="score"))
    tables = [ReportTable(id="splits", title="ProactiveBench: per split", group_label="split", columns=columns, rows=rows,
                          notes=["counted as upstream's calculate_agent_performance.py, per repeat; mean ± std over "
                                 "repeats; a 0 may come from an empty denominator (upstream's eps rule)"])]
    trials = []
    for r in results:
        for ev in r.record.section.events:
            counted = ev.judgement in ("accepted", "rejected")
            trials.append(Trial(model=r.key.agent, groups=_splits(r), task=f"{r.key.task}#{ev.index}",
                                passed=(ev.judgement == "accepted") if counted else None))
    tables.append(consistency_table(trials, repeats, "split", "the event is judged correctly (its verdict accepts "
                                    "the agent's proposal or its silence: TP or TN); tasks are events",
                                    "ProactiveBench: consistency over repeats", total=ALL))
    return tables
