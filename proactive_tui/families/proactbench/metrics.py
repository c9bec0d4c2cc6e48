"""ProactBench's numbers, computed as upstream's offline evaluation writes them.

Per trigger type, the tallies (`trigger_stats`: PASS, PARTIAL, FAIL, SKIPPED; a trigger with no
result or a status other than EVALUATED is SKIPPED) and the metrics under upstream's key names
(`eval/proactivity_<type>_pass_rate`, `_partial_rate`, `_weighted_score`, `_total`, and the overall
pass rate and weighted score pooled over every evaluated trigger): PASS 1, PARTIAL 0.5, FAIL 0,
SKIPPED left out of every denominator. A rate over no evaluated trigger is None, never 0.
"""

from __future__ import annotations

from typing import Any, Iterable

from proactive_tui.families.proactbench.env import SCORE_VALUE, TRIGGER_TYPES, EvaluationResult

COUNTS = ("PASS", "PARTIAL", "FAIL", "SKIPPED")


def counted(result: EvaluationResult | dict[str, Any] | None) -> str:
    """PASS, PARTIAL, FAIL, or SKIPPED (no result, not EVALUATED, or no score)."""
    if result is None:
        return "SKIPPED"
    if isinstance(result, dict):
        try:
            result = EvaluationResult.model_validate(result)
        except ValueError:
            return "SKIPPED"
    return result.counted


def trigger_stats(pairs: Iterable[tuple[str, Any]]) -> dict[str, dict[str, int]]:
    """Tallies per type from (trigger type, result) pairs, every type present (upstream's shape)."""
    stats = {t: {c: 0 for c in COUNTS} for t in TRIGGER_TYPES}
    for kind, result in pairs:
        stats.setdefault(kind, {c: 0 for c in COUNTS})[counted(result)] += 1
    return stats


def add_stats(into: dict[str, dict[str, int]], more: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    for kind, tally in more.items():
        row = into.setdefault(kind, {c: 0 for c in COUNTS})
        for c in COUNTS:
            row[c] += int(tally.get(c, 0))
    return into


def _rates(tally: dict[str, int]) -> tuple[float | None, float | None, float | None, int]:
    total = tally.get("PASS", 0) + tally.get("PARTIAL", 0) + tally.get("FAIL", 0)
    if not total:
        return None, None, None, 0
    weighted = (tally.get("PASS", 0) * SCORE_VALUE["PASS"] + tally.get("PARTIAL", 0) * SCORE_VALUE["PARTIAL"]) / total
    return tally.get("PASS", 0) / total, tally.get("PARTIAL", 0) / total, weighted, total


def metrics(stats: dict[str, dict[str, int]], dialogues: int) -> dict[str, float | None]:
    """Upstream's `metrics` block from aggregated tallies over `dialogues` dialogues."""
    out: dict[str, float | None] = {}
    pooled = {c: 0 for c in COUNTS}
    for kind in TRIGGER_TYPES:
        tally = stats.get(kind, {})
        pass_rate, partial_rate, weighted, total = _rates(tally)
        key = kind.lower()
        out[f"eval/proactivity_{key}_pass_rate"] = pass_rate
        out[f"eval/proactivity_{key}_partial_rate"] = partial_rate
        out[f"eval/proactivity_{key}_weighted_score"] = weighted
        out[f"eval/proactivity_{key}_total"] = float(total)
        for c in COUNTS:
            pooled[c] += int(tally.get(c, 0))
    pass_rate, _, weighted, _ = _rates(pooled)
    out["eval/proactivity_overall_pass_rate"] = pass_rate
    out["eval/proactivity_overall_weighted_score"] = weighted
    out["eval/proactivity_total_dialogues"] = float(dialogues)
    return out


def type_summary(stats: dict[str, dict[str, int]]) -> list[tuple[str, dict[str, int], float | None, float | None]]:
    """(type or OVERALL, tally, pass rate, weighted score) rows for panels and tables."""
    rows = []
    pooled = {c: 0 for c in COUNTS}
    for kind in TRIGGER_TYPES:
        tally = stats.get(kind, {c: 0 for c in COUNTS})
        pass_rate, _, weighted, _ = _rates(tally)
        rows.append((kind, dict(tally), pass_rate, weighted))
        for c in COUNTS:
            pooled[c] += int(tally.get(c, 0))
    pass_rate, _, weighted, _ = _rates(pooled)
    rows.append(("OVERALL", pooled, pass_rate, weighted))
    return rows
