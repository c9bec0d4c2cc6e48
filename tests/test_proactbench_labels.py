"""ProactBench's trigger verdicts as labels see them (issue 34): one per judged trigger, PASS /
PARTIAL / FAIL or None for SKIPPED, the judge named by its role, a person's verdict left out, and
the new kind's values checked like every other kind's."""

from __future__ import annotations

import pytest

from proactive_tui.core.events import SeatInfo, SessionEnded, SessionStarted
from proactive_tui.core.verdicts import GRADE_VALUES, LabelError, parse_value, verdicts_of
from proactive_tui.services.labels import agreement
from proactive_tui.core.run_record import RunRecordBuilder
from proactive_tui.families.proactbench.env import EvaluationResult, Rubric
from proactive_tui.families.proactbench.events import TriggerJudged, TriggerOpened
from proactive_tui.store.db import LabelRow

TS = "2026-01-01T00:00:00+00:00"


def rubric(kind: str) -> Rubric:
    return Rubric(type=kind, pass_criteria="acts on the need", partial_criteria="notices it", fail_criteria="ignores it")


def record_of(judged: list[tuple[str, str | None, str, str]]) -> object:
    """A ProactBench record with one trigger per (type, score or None, judge, judged_by)."""
    events: list[object] = [SessionStarted(
        session_id="s1", family="proactbench", env_id="proactbench/x", environment={"title": "x"}, mode="watch",
        seats={"agent": SeatInfo(kind="llm", label="a"), "judge": SeatInfo(kind="llm", label="j")},
        settings={}, prompt_version="t", app_version="t")]
    for i, (kind, score, judge, by) in enumerate(judged, 1):
        events.append(TriggerOpened(index=i, turn=2 * i, rubric=rubric(kind), user_message=f"u{i}"))
        result = None if score is None else EvaluationResult(score=score, rationale=f"why {i}", evidence=f"quote {i}")
        events.append(TriggerJudged(index=i, turn=2 * i, response=f"reply {i}", result=result, judge=judge,
                                    judged_by=by, problem="" if score else "the judge call failed"))
    events.append(TriggerOpened(index=len(judged) + 1, turn=99, rubric=rubric("RECOVERY")))  # never judged
    events.append(SessionEnded(reason="completed"))
    builder = RunRecordBuilder()
    for n, event in enumerate(events, 1):
        event.seq = n  # type: ignore[attr-defined]
        builder.apply(event)
    return builder.record


def test_one_verdict_per_judged_trigger_and_skipped_is_none() -> None:
    record = record_of([("EMERGENT", "PASS", "judge-m", "judge"), ("CRITICAL", None, "judge-m", "judge"),
                        ("CRITICAL", "PARTIAL", "person", "person"), ("RECOVERY", "fail", "ua-m", "user_agent")])
    got = verdicts_of(record)
    assert [(v.key, v.kind, v.value, v.judge) for v in got] == [
        ("trigger:1", "trigger verdict", "PASS", "judge-m"),
        ("trigger:2", "trigger verdict", None, "judge-m"),
        ("trigger:4", "trigger verdict", "FAIL", "ua-m (user agent)"),
    ]
    assert got[0].value_type == "grade" and not got[0].imported_from
    assert "why 1" in got[0].detail and '"quote 1"' in got[0].detail
    assert got[1].detail == "the judge call failed"
    assert "turn 2 (EMERGENT)" in got[0].label


def test_an_imported_study_verdict_says_so() -> None:
    (verdict,) = verdicts_of(record_of([("RECOVERY", "PARTIAL", "gpt-5.4", "study")]))
    assert verdict.judge == "gpt-5.4 (study, imported)" and verdict.imported_from == "ProactBench human study"


def test_grade_values() -> None:
    assert GRADE_VALUES == ("PASS", "PARTIAL", "FAIL")
    assert [parse_value("trigger verdict", v) for v in ("pass", " Partial ", "FAIL")] == list(GRADE_VALUES)
    for bad in ("SKIPPED", "", "1", "yes"):
        with pytest.raises(LabelError, match="PASS, PARTIAL, FAIL"):
            parse_value("trigger verdict", bad, where="s1 trigger:1")


def test_agreement_orders_grades_best_first() -> None:
    rows = [LabelRow(session_id="s", verdict=f"trigger:{i}", kind="trigger verdict", judge="j", judge_value=a,
                     agree=a == b, value=b, created_at=TS) for i, (a, b) in enumerate(
        [("FAIL", "PASS"), ("PARTIAL", "PARTIAL"), ("PASS", "PASS")])]
    (row,) = agreement(rows)
    assert row.categories == ["PASS", "PARTIAL", "FAIL"] and row.confusion["FAIL"]["PASS"] == 1
