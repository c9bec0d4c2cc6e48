"""ProactBench's tables in a batch report (`BatchPart.tables`): per model and per trigger type.

For each agent model, one row per trigger type (EMERGENT, CRITICAL, RECOVERY) and one OVERALL
row (every evaluated trigger pooled, as upstream's overall figures): the pass rate and the
weighted score (PASS 1, PARTIAL 0.5, FAIL 0) over the EVALUATED triggers (`metrics`), each
computed once per repeat, then mean ± std over repeats, with a 95% interval over dialogues
resampled (`evalrun.report.interval`); and the counts PASS, PARTIAL, FAIL and SKIPPED summed over
repeats. SKIPPED triggers are shown and never counted in a rate.

A trigger **passes** (pass^k) when its verdict is PASS; a SKIPPED one has no verdict and is left
out. The task is (dialogue, trigger index).
"""

from __future__ import annotations

from typing import Any

from proactive_tui.core.family import BatchPart
from proactive_tui.evalrun.report import Column, ReportRow, ReportTable, Trial, consistency_table, interval, per_repeat
from proactive_tui.families.proactbench.env import SCORE_VALUE, TRIGGER_TYPES
from proactive_tui.families.proactbench.metrics import COUNTS, type_summary
from proactive_tui.families.proactbench.record import ProactBenchSection

OVERALL = "OVERALL"


def _stats(result: Any) -> dict[str, dict[str, int]]:
    section: ProactBenchSection = result.record.section
    return section.stats()


def _groups(result: Any) -> list[str]:
    types = {t.type for t in result.record.section.triggers if t.judged}
    return [t for t in TRIGGER_TYPES if t in types] + [OVERALL]


def batch_trials(result: Any) -> list[Trial]:
    out = []
    for trigger in result.record.section.triggers:
        if not trigger.judged:
            continue
        counted = trigger.counted
        scored = counted != "SKIPPED"
        out.append(Trial(model=result.key.agent, groups=[trigger.type, OVERALL], task=f"{result.key.task}#{trigger.index}",
                         passed=(counted == "PASS") if scored else None,
                         score=SCORE_VALUE[counted] if scored else None))
    return out


def batch_groups(result: Any) -> list[str]:
    """The rows a session counts in: the types of its judged triggers, and OVERALL."""
    return _groups(result)


def _rates(tally: dict[str, int]) -> tuple[float | None, float | None]:
    """(pass rate, weighted score) of one tally, None over no evaluated trigger."""
    total = sum(tally.get(c, 0) for c in ("PASS", "PARTIAL", "FAIL"))
    if not total:
        return None, None
    weighted = sum(tally.get(c, 0) * SCORE_VALUE[c] for c in ("PASS", "PARTIAL", "FAIL")) / total
    return tally.get("PASS", 0) / total, weighted


def _figures(sums: Any) -> dict[str, Any]:
    """Pass rate and weighted score over arrays of summed counts (channel 0: sessions, then
    PASS, PARTIAL, FAIL): NaN where nothing was evaluated."""
    import numpy as np

    passed, partial, failed = sums[..., 1], sums[..., 2], sums[..., 3]
    total = passed + partial + failed
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"pass_rate": passed / total, "weighted": (passed + 0.5 * partial) / total}


def batch_tables(results: list[Any], repeats: int) -> list[ReportTable]:
    rows = []
    for model in sorted({r.key.agent for r in results}):
        own = [r for r in results if r.key.agent == model]
        for group in [*TRIGGER_TYPES, OVERALL]:
            per: dict[int, dict[str, int]] = {}
            cells = []
            for r in own:
                summary = {kind: tally for kind, tally, _p, _w in type_summary(_stats(r))}
                tally = summary[group]
                if not any(tally.get(c, 0) for c in COUNTS):
                    continue
                into = per.setdefault(r.key.repeat, {c: 0 for c in COUNTS})
                for c in COUNTS:
                    into[c] += int(tally.get(c, 0))
                cells.append((r.key.env_id, r.key.repeat, [1.0, float(tally.get("PASS", 0)), float(tally.get("PARTIAL", 0)),
                                                           float(tally.get("FAIL", 0))]))
            if not per:
                continue
            figures = {rep: _rates(tally) for rep, tally in per.items()}
            row = ReportRow(model=model, group=group)
            row.values["pass_rate"], row.std["pass_rate"] = per_repeat({rep: f[0] for rep, f in figures.items()})
            row.values["weighted"], row.std["weighted"] = per_repeat({rep: f[1] for rep, f in figures.items()})
            for key in ("pass_rate", "weighted"):
                found = interval(cells, lambda sums, key=key: _figures(sums)[key])
                if found is not None:
                    row.interval[key] = found
            for c in COUNTS:
                row.values[c.lower()] = sum(t[c] for t in per.values())
            rows.append(row)
    columns = [Column(key="pass_rate", label="pass rate", unit="pct"),
               Column(key="weighted", label="weighted score", unit="ratio"),
               *(Column(key=c.lower(), label=c, unit="count") for c in COUNTS)]
    tables = [ReportTable(id="types", title="ProactBench: per trigger type", group_label="type", columns=columns, rows=rows,
                          notes=["pass rate and weighted score (PASS 1, PARTIAL 0.5, FAIL 0) over evaluated triggers, "
                                 "per repeat; mean ± std over repeats [95% interval over dialogues]; SKIPPED triggers "
                                 "(no usable verdict or no reply) are shown and never counted; counts summed over repeats"])]
    trials = [t for r in results for t in batch_trials(r)]
    tables.append(consistency_table(trials, repeats, "type", "the trigger's verdict is PASS (SKIPPED left out); tasks "
                                    "are trigger points; the variance is of the weighted score",
                                    "ProactBench: consistency over repeats", total=OVERALL))
    return tables


class ProactBenchBatch(BatchPart):
    """ProactBench's figures of a batch: the functions above, as the family's batch part."""

    tables = staticmethod(batch_tables)
    trials = staticmethod(batch_trials)
    groups = staticmethod(batch_groups)


BATCH = ProactBenchBatch()
