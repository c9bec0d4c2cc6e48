"""Chronos fidelity to the paper's protocol (arXiv 2601.09382): each test has a scripted agent
break, or keep, one rule, so it fails if the rule is not enforced."""

from __future__ import annotations

import json

import pytest

from chronos_helpers import make_session, play
from proactive_tui.families.chronos.export import sample
from proactive_tui.families.chronos.report import TASK_NOT_RESET, turn_blocks
from proactive_tui.families.chronos.testing import OracleAgent

CT = "COMPLETE_TASK"


def keep_task_on_completion(session, reply):
    """COMPLETE_TASK with the right status, but intention and constraints left in place."""
    if reply.proactive_action != CT:
        return None
    data = reply.model_dump()
    data["task_description"].update(intention=session.state.intention, constraints={"budget": "low"})
    return data


# -- 1. COMPLETE_TASK nulls the task ---------------------------------------------------------------

async def test_complete_task_with_nulled_task_is_right_and_the_final_task_is_null() -> None:
    _, record = await play(make_session("car-purchase-positive"))
    last = record.section.turns[-1]
    assert last.action == CT and last.task_reset is True and last.status_correct
    o = record.section.outcome
    assert o.success is True and o.status_accuracy == 1.0 and o.task is None
    assert all(t.task_reset is None for t in record.section.turns[:-1])


async def test_complete_task_keeping_the_task_is_a_status_error() -> None:
    _, record = await play(make_session("car-purchase-positive", agent=OracleAgent(override=keep_task_on_completion)))
    turns = record.section.turns
    last = turns[-1]
    assert last.action == CT and last.status == "COMPLETED"
    assert last.task_reset is False and last.status_correct is False and last.action_correct is True
    o = record.section.outcome
    # success is the paper's criterion (COMPLETE_TASK + COMPLETED after confirmation); the slip costs status accuracy
    assert o.success is True and o.status_accuracy == pytest.approx((len(turns) - 1) / len(turns))
    # the task state as recorded and exported after COMPLETE_TASK is null, whatever the reply held
    assert o.task is None
    exported = sample(record)
    assert exported["outcome"]["task"] is None
    # the assistant message stays what the model wrote
    assert json.loads(exported["messages"][-1]["content"])["task_description"]["intention"]
    assert any(TASK_NOT_RESET in getattr(b, "text", "") for b in turn_blocks(record))


async def test_negative_branch_keeps_the_task_open_in_the_record() -> None:
    _, record = await play(make_session("car-purchase-negative"))
    o = record.section.outcome
    assert o.success is True and o.task is not None and o.task["intention"]
