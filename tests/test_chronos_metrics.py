"""Chronos metrics: exact values on a hand-built fixture, and from run records."""

from __future__ import annotations

import pytest

from chronos_helpers import make_session, play, when
from proactive_tui.families.chronos.metrics import ChronosMetrics, SessionSample, accuracy, chronos_metrics, samples_from_records

T, F = True, False

FIXTURE = [
    # positive: 2 of 3 succeed
    SessionSample(branch="positive", success=T, action_correct=[T, T, T, T], status_correct=[T, T, T, T]),
    SessionSample(branch="positive", success=T, action_correct=[T, F, T], status_correct=[T, T, F]),
    SessionSample(branch="positive", success=F, action_correct=[F], status_correct=[F]),
    # negative: 1 of 4 succeeds
    SessionSample(branch="negative", success=T, action_correct=[T, T], status_correct=[T, T]),
    SessionSample(branch="negative", success=F, action_correct=[T, F], status_correct=[T, T]),
    SessionSample(branch="negative", success=F, action_correct=[], status_correct=[]),
    SessionSample(branch="negative", success=F, action_correct=[F, F], status_correct=[T, F]),
    # not played to a verdict: ignored entirely
    SessionSample(branch="positive", success=None, action_correct=[F] * 10, status_correct=[F] * 10),
]


def test_exact_values_on_a_hand_built_fixture() -> None:
    m = chronos_metrics(FIXTURE)
    assert m.sessions == 7 and (m.positive_sessions, m.negative_sessions) == (3, 4)
    assert m.positive_success == pytest.approx(2 / 3)
    assert m.negative_success == pytest.approx(1 / 4)
    assert m.overall_success == pytest.approx((2 / 3 + 1 / 4) / 2)  # mean of branch rates, not of sessions
    assert m.turns == 14
    assert m.action_accuracy == pytest.approx(9 / 14)
    assert m.status_accuracy == pytest.approx(11 / 14)


def test_edge_cases() -> None:
    assert chronos_metrics([]) == ChronosMetrics()
    only_pos = chronos_metrics(FIXTURE[:2])
    # one branch is not the paper's overall: there is none, and the missing branch is named
    assert only_pos.negative_success is None and only_pos.overall_success is None
    assert only_pos.positive_success == 1.0 and only_pos.missing_branch == "negative"
    assert accuracy([]) == (None, None)


async def test_from_run_records() -> None:
    _, good = await play(make_session("car-purchase/positive"))
    _, bad = await play(make_session("car-purchase-towing/negative", agent=when(lambda s: s.state.input_kind == "tool_call", "KEEP_SILENT")))
    samples = samples_from_records([good, bad])
    m = chronos_metrics(samples)
    assert (m.positive_success, m.negative_success, m.overall_success) == (1.0, 0.0, 0.5)
    assert m.turns == 7 + 2 and m.action_accuracy == pytest.approx(8 / 9)
    assert good.section.outcome.action_accuracy == accuracy(good.section.turns)[0] == 1.0


async def test_history_headline() -> None:
    from proactive_tui.store.queries import headline

    _, record = await play(make_session("car-purchase/positive", max_turns=3))
    # counted in the family's unit: three exchanges (four agent turns, one answering the agent's
    # own INFO_RETRIEVAL, which continues its exchange); History says "exchanges 3"
    assert headline(record) == {"turns": 3, "success": "no", "action": "100%", "status": "100%", "ended": "max_turns"}
    assert len(record.section.turns) == 4
    assert {s.name: s.by_kind for s in record.scores} == {"success": "rule", "action": "rule", "status": "rule"}
