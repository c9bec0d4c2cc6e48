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


# -- 2. the "guided" prompt variant ----------------------------------------------------------------

def _agent_systems(server) -> list[str]:
    return [r.body["messages"][0]["content"] for r in server.requests if r.body.get("response_format")]


@pytest.mark.parametrize("variant", ["standard", "guided"])
async def test_prompt_variant_reaches_the_model_and_the_record(variant: str) -> None:
    from chronos_helpers import chronos_env, scripted_agent_responder
    from proactive_tui.core.participants import LLMParticipant
    from proactive_tui.core.run_record import fold
    from proactive_tui.families.chronos import prompts
    from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession
    from proactive_tui.families.chronos.settings import ChronosSettings
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.settings import ModelSettings
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(responder=scripted_agent_responder) as server:
        gateway = Gateway()
        settings = ModelSettings(model="openai/fake", api_base=server.base_url)
        seats = ChronosSeats(agent=LLMParticipant(gateway, settings), user=LLMParticipant(gateway, settings))
        session = ChronosSession(chronos_env("car-purchase-negative"), seats,
                                 ChronosSettings(prompt_variant=variant, max_turns=3))
        record = fold([e async for e in session.events()])
        systems = _agent_systems(server)
    assert systems and all(s == prompts.agent_system(variant) for s in systems)
    assert (prompts.GUIDANCE in systems[0]) is (variant == "guided")
    assert record.settings["prompt_variant"] == variant
    assert record.versions["prompts"] == prompts.PROMPT_VERSION
    assert sample(record)["messages"][0]["content"] == prompts.agent_system(variant)


def test_guidance_covers_the_papers_points_in_our_words() -> None:
    from proactive_tui.families.chronos import prompts

    g = prompts.GUIDANCE
    for point in ("COMPLETE_TASK", "COMPLETED", "NO_ACTION", 'source="tool_call"', "FOLLOW_UP", "KEEP_SILENT", "JSON"):
        assert point in g
    assert prompts.agent_system("standard") == prompts.AGENT_SYSTEM
    with pytest.raises(ValueError):
        prompts.agent_system("fancy")


def test_prompt_variant_setting_is_validated() -> None:
    from pydantic import ValidationError
    from proactive_tui.families.chronos.settings import ChronosSettings

    assert ChronosSettings().prompt_variant == "standard"
    with pytest.raises(ValidationError):
        ChronosSettings(prompt_variant="fancy")
