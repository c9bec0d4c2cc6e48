"""ProactiveBench's tables in a batch report (`BatchPart.tables`).

Per split (the names of the splits.json the traces were loaded with; `all traces` sums every
trace run) Recall, Precision, Accuracy, False-Alarm, F1 and Accept Rate, each computed as
upstream's script computes it (`metrics.metrics` over the split's summed confusion counts,
`metrics.py`), once per repeat, then mean ± std over repeats, with a 95% interval over the traces
resampled (`evalrun.stats.bootstrap_interval`).

An event **passes** (pass^k) when it was judged correctly: its verdict accepted the agent's
decision (a proposal the user wanted, TP, or silence when none was needed, TN). An event with no
counted verdict is left out. The task is (trace, event).
"""

from __future__ import annotations

from proactive_tui.core.family import BatchPart

from typing import Any

from proactive_tui.evalrun.report import Column, ReportRow, ReportTable, Trial, consistency_table, interval, per_repeat
from proactive_tui.families.proactivebench.metrics import METRIC_LABELS, Confusion, metrics

ALL = "all traces"
MEASURES = METRIC_LABELS
"""The six metrics of upstream's script, Accept Rate included, as `eval splits` prints them."""
COUNTED = ("tp", "fp", "tn", "fn", "proposals", "accepted_proposals")
"""The confusion counts a bootstrap resample sums (`_figures` reads them in this order)."""


def _figures(sums: Any) -> dict[str, Any]:
    """`metrics.metrics` over arrays of summed counts (`[..., 1 + len(COUNTED)]`, channel 0 the
    sessions): the same ratios, a zero denominator giving 0 as upstream's eps does, for every
    bootstrap resample at once."""
    import numpy as np

    tp, fp, tn, fn, proposals, accepted = (sums[..., i] for i in range(1, 1 + len(COUNTED)))

    def ratio(num: Any, den: Any) -> Any:
        return np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)

    recall, precision = ratio(tp, tp + fn), ratio(tp, tp + fp)
    both = precision + recall
    return {"recall": recall, "precision": precision, "accuracy": ratio(tp + tn, tp + fp + tn + fn),
            "false_alarm": ratio(fp, tp + fp), "f1": np.where(both > 0, 2 * precision * recall / np.where(both > 0, both, 1), 0.0),
            "accept_rate": ratio(accepted, proposals)}


def _splits(result: Any) -> list[str]:
    return list(result.record.section.splits or []) + [ALL]


def batch_trials(result: Any) -> list[Trial]:
    """The session as pass^k sees it: a task per event, passed when judged correctly (TP or TN)."""
    out = []
    for ev in result.record.section.events:
        counted = ev.judgement in ("accepted", "rejected")
        out.append(Trial(model=result.key.agent, groups=_splits(result), task=f"{result.key.task}#{ev.index}",
                         passed=(ev.judgement == "accepted") if counted else None))
    return out


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
            cells = []
            for r in own:
                if split in _splits(r):
                    confusion = r.record.section.confusion
                    per[r.key.repeat] = per.get(r.key.repeat, Confusion()) + confusion
                    cells.append((r.key.env_id, r.key.repeat, [1.0] + [float(getattr(confusion, k)) for k in COUNTED]))
            row = ReportRow(model=model, group=split)
            figures = {rep: metrics(c) for rep, c in per.items()}
            for key, _ in MEASURES:
                row.values[key], row.std[key] = per_repeat({rep: getattr(m, key) for rep, m in figures.items()})
                found = interval(cells, lambda sums, key=key: _figures(sums)[key])
                if found is not None:
                    row.interval[key] = found
            row.values["events"] = sum(c.judged for c in per.values())
            rows.append(row)
    columns = [Column(key=key, label=label, unit="pct") for key, label in MEASURES]
    columns.append(Column(key="events", label="judged events", unit="count"))
    tables = [ReportTable(id="splits", title="ProactiveBench: per split", group_label="split", columns=columns, rows=rows,
                          notes=["counted as upstream's calculate_agent_performance.py, per repeat; mean ± std over "
                                 "repeats [95% interval over traces]; a 0 may come from an empty denominator "
                                 "(upstream's eps rule); judged events: summed over repeats"])]
    trials = [t for r in results for t in batch_trials(r)]
    tables.append(consistency_table(trials, repeats, "split", "the event is judged correctly (its verdict accepts "
                                    "the agent's proposal or its silence: TP or TN); tasks are events",
                                    "ProactiveBench: consistency over repeats", total=ALL))
    return tables


class ProactiveBenchBatch(BatchPart):
    """ProactiveBench's figures of a batch: the functions above, as the family's batch part."""

    tables = staticmethod(batch_tables)
    trials = staticmethod(batch_trials)
    groups = staticmethod(batch_groups)


BATCH = ProactiveBenchBatch()
