"""The Chronos engine: the oracle, the failure rules, the monitor, the seats, the record."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from chronos_helpers import SCENARIOS, actions, chronos_env, make_session, play, scripted_agent_responder, when
from conftest import ROOT
from proactive_tui.core.events import parse_event
from proactive_tui.core.spec import SessionSpec, build_session
from proactive_tui.core.participants import HumanParticipant, LLMParticipant
from proactive_tui.families.chronos import prompts
from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession
from proactive_tui.families.chronos.testing import OracleAgent, ScriptedPersona
from proactive_tui.core.run_record import RunRecord, fold
from proactive_tui.llm.gateway import Gateway
from proactive_tui.llm.settings import ModelSettings, RoleSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer

IR, SR, FU, KS, CT, FT, NA = ("INFO_RETRIEVAL", "SET_REMINDER", "FOLLOW_UP", "KEEP_SILENT", "COMPLETE_TASK",
                              "FAILED_TASK", "NO_ACTION")


def outcome(record: RunRecord):
    return record.section.outcome


# -- the perfect agent ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", SCENARIOS)
async def test_perfect_agent_succeeds_on_every_sample(name: str) -> None:
    events, record = await play(make_session(name))
    o = outcome(record)
    assert o.success is True, (o.reason, o.detail, actions(record))
    assert o.action_accuracy == 1.0 and o.status_accuracy == 1.0
    assert all(t.critical is None for t in record.section.turns)
    expected_end = "task_completed" if record.section.branch == "positive" else "timeline_exhausted"
    assert record.termination.reason == expected_end
    assert events[-1].type == "session_ended" and events[-2].type == "chronos.timeline_outcome"
    assert o.turns <= chronos_env(name).scenario.turn_limit


# The oracle is not vacuous: these are the paper's dialogue shapes, written out by hand.
@pytest.mark.parametrize("name,want,statuses", [
    ("car-purchase/positive", [IR, NA, NA, SR, KS, FU, CT], ["PENDING"] * 3 + ["IN_PROGRESS"] * 3 + ["COMPLETED"]),
    ("ticket-booking-night-train/negative", [IR, NA, NA, SR, KS, KS, KS], ["PENDING"] * 3 + ["IN_PROGRESS"] * 4),
    ("car-purchase-shift/positive", [IR, NA, NA, SR, FU, SR, KS, KS, FU, CT],
     ["PENDING"] * 3 + ["IN_PROGRESS"] * 6 + ["COMPLETED"]),
    ("house-hunting-shift/negative", [IR, NA, NA, SR, FU, SR, KS, KS, KS, KS], ["PENDING"] * 3 + ["IN_PROGRESS"] * 7),
])
async def test_expected_dialogue_shapes(name: str, want: list[str], statuses: list[str]) -> None:
    _, record = await play(make_session(name))
    assert actions(record) == want
    assert [t.expected_status for t in record.section.turns] == statuses
    inputs = [t.input_kind for t in record.section.turns]
    assert inputs[:4] == ["user", "tool_call", "user", "user"]
    assert all(k == "internal_trigger" for k, a in zip(inputs, want) if a in (KS, FU))


# -- failure rules -------------------------------------------------------------------------------

async def test_premature_keep_silent_fails() -> None:
    agent = when(lambda s: s.state.input_kind == "tool_call", KS)
    events, record = await play(make_session("car-purchase/positive", agent=agent))
    o = outcome(record)
    assert (o.success, o.reason) == (False, "premature_silence")
    assert record.termination.reason == "derailed" and actions(record) == [IR, KS]
    assert record.section.turns[-1].action_correct is False and o.action_accuracy == 0.5


async def test_silence_in_answer_to_the_user_fails_in_the_negative_branch_too() -> None:
    agent = when(lambda s: s.state.input_kind == "user" and s.state.user_replies == 1, KS, "IN_PROGRESS")
    _, record = await play(make_session("house-hunting-bungalow/negative", agent=agent))
    assert (outcome(record).success, outcome(record).reason) == (False, "premature_silence")


async def test_completion_without_thanks_fails() -> None:
    agent = when(lambda s: s.pending.action == FU, CT, "COMPLETED")
    _, record = await play(make_session("car-purchase/positive", agent=agent))
    o = outcome(record)
    assert (o.success, o.reason) == (False, "unconfirmed_completion")
    assert actions(record)[-1] == CT and record.section.turns[-1].status_correct is False


async def test_thanks_while_adding_details_is_not_a_confirmation() -> None:
    class PoliteUser(ScriptedPersona):
        async def reply(self, request):
            r = await super().reply(request)
            r.text = "Thanks so much! " + r.text
            return r

    agent = when(lambda s: s.state.user_replies == 1, CT, "COMPLETED")
    _, record = await play(make_session("car-purchase/positive", agent=agent, user=PoliteUser()))
    assert outcome(record).reason == "unconfirmed_completion"


async def test_missing_reminder_after_the_shift_fails() -> None:
    agent = when(lambda s: s.state.signal == "shift", NA, "IN_PROGRESS", "Got it, a bigger car then.")
    _, record = await play(make_session("car-purchase-shift/positive", agent=agent))
    o = outcome(record)
    assert (o.success, o.reason) == (False, "no_reminder_after_shift")
    assert record.section.shift is not None and actions(record)[-1] == NA
    assert record.termination.reason == "derailed"


@pytest.mark.parametrize("instead,reason", [(KS, "premature_silence"), (CT, "unconfirmed_completion")])
async def test_other_wrong_answers_to_the_shift_fail(instead: str, reason: str) -> None:
    agent = when(lambda s: s.state.signal == "shift", instead)
    _, record = await play(make_session("ticket-booking-shift/positive", agent=agent))
    assert (outcome(record).success, outcome(record).reason) == (False, reason)


async def test_one_check_before_the_new_reminder_is_accepted() -> None:
    agent = when(lambda s: s.state.signal == "shift", IR, "IN_PROGRESS")
    _, record = await play(make_session("car-purchase-shift/positive", agent=agent))
    o = outcome(record)
    assert o.success is True and o.action_accuracy == 1.0 and o.status_accuracy == 1.0
    assert actions(record)[5:7] == [IR, SR]


async def test_a_second_check_after_the_shift_fails() -> None:
    agent = when(lambda s: s.state.reminder_due_after_shift, IR, "IN_PROGRESS")
    _, record = await play(make_session("car-purchase-shift/positive", agent=agent))
    assert outcome(record).reason == "no_reminder_after_shift" and actions(record)[5:] == [IR, IR]


async def test_turn_limit_fails() -> None:
    agent = when(lambda s: s.pending.action == SR, NA)  # never sets a reminder: the user keeps talking
    events, record = await play(make_session("car-purchase-towing/negative", agent=agent))
    o = outcome(record)
    limit = chronos_env("car-purchase-towing/negative").scenario.turn_limit
    # the limit counts turns answering the user or the monitor; the one answering the agent's
    # own INFO_RETRIEVAL (turn 2) continues the first exchange and comes on top
    assert (o.success, o.reason, o.turns) == (False, "turn_limit", limit + 1)
    assert sum(t.input_kind != "tool_call" for t in record.section.turns) == limit
    assert record.termination.reason == "max_turns"
    assert record.settings["turn_limit"] == limit
    # the user is not asked for a reply that no agent turn is left to answer
    assert record.messages[-1].role == "agent"


async def test_max_turns_setting_cuts_the_session_short() -> None:
    _, record = await play(make_session("car-purchase/positive", max_turns=3))
    # IR (user), NA (its tool result: not counted), NA (user), SR (user): three counted turns
    assert (outcome(record).reason, outcome(record).turns) == ("turn_limit", 4)
    assert actions(record) == [IR, NA, NA, SR]


# -- an agent that keeps checking (the small local model does) ----------------------------------

def always_checking() -> OracleAgent:
    return when(lambda s: True, IR, text="Let me check.")


async def test_repeated_checks_hand_the_turn_to_the_user() -> None:
    human = HumanParticipant()
    session = make_session("car-purchase/positive", agent=always_checking(), user=human, max_turns=3)
    events, record, hints = await drive(session, {"user": ["budget 12k", "under 90k km", "still there?"]})
    turns = record.section.turns
    # each exchange: the check answering the user, then one more check answered by its own
    # observation (marked unchanged), after which the person's reply comes next
    assert [t.input_kind for t in turns] == ["user", "tool_call"] * 3
    assert [seat for seat, _ in hints] == ["user", "user"]  # asked after every exchange but the last
    obs = record.section.observations
    assert [o.turn for o in obs] == [2, 3, 4, 5, 6, 7]
    assert prompts.REPEATED_CHECK in obs[1].content and prompts.HANDOVER["user"] in obs[1].content
    assert prompts.REPEATED_CHECK not in obs[0].content and "Available now" in obs[1].content
    assert (outcome(record).reason, outcome(record).turns) == ("turn_limit", 6)
    user_msgs = [m.content for m in record.messages if m.role == "user"]
    assert user_msgs[1:] == ["budget 12k", "under 90k km"]
    # the oracle still judges every turn: the repeated check after a tool result is wrong
    assert [t.action_correct for t in turns] == [True] + [False] * 5  # no re-check right after a check
    # a gold sample and the report keep the order things happened in: the last observation, then the reply
    from proactive_tui.families.chronos.export import dialogue_messages
    from proactive_tui.families.chronos.report import turn_blocks

    roles = [m["role"] for m in dialogue_messages(record)]
    assert roles[:8] == ["system", "user", "assistant", "observation", "assistant", "observation", "user", "assistant"]
    speakers = [b.speaker for b in turn_blocks(record) if hasattr(b, "speaker")]
    assert speakers[:7] == ["user", "agent", "observation", "agent", "observation", "user", "agent"]


async def test_repeated_checks_while_dormant_let_the_monitor_scan() -> None:
    agent = when(lambda s: s.state.monitoring, IR, "IN_PROGRESS", "Checking again.")
    _, record = await play(make_session("car-purchase-towing/negative", agent=agent, max_tool_calls=2))
    inputs = [t.input_kind for t in record.section.turns]
    assert inputs[4:8] == ["internal_trigger", "tool_call", "internal_trigger", "tool_call"]
    handed = [o for o in record.section.observations if prompts.HANDOVER["monitor"] in o.content]
    assert handed and all(o.source == "tool_call" for o in handed)
    assert outcome(record).reason == "not_silent_at_end"  # the timeline ran out without silence


async def test_one_tool_call_in_a_row_hands_over_at_once() -> None:
    human = HumanParticipant()
    session = make_session("car-purchase/positive", user=human, max_tool_calls=1, max_turns=2)
    _, record, hints = await drive(session, {"user": ["budget 12k"]})
    assert [t.input_kind for t in record.section.turns] == ["user", "user"]
    assert prompts.HANDOVER["user"] in record.section.observations[0].content
    assert hints and record.section.turns[1].expected_action == NA  # the detail, answered with the listings seen


async def test_bad_follow_up_is_refused_then_fails() -> None:
    agent = when(lambda s: s.pending.action == KS, FU, "IN_PROGRESS", "Found one!")
    _, record = await play(make_session("car-purchase/positive", agent=agent))
    o = outcome(record)
    assert (o.success, o.reason) == (False, "bad_follow_up")
    assert actions(record)[-2:] == [FU, FT]  # the user refused; the oracle then wants FAILED_TASK
    last = record.section.turns[-1]
    assert last.action_correct and last.status_correct and last.expected_status == "FAILED"
    user_texts = [m.content for m in record.messages if m.role == "user"]
    assert "doesn't meet my needs" in user_texts[-1]
    assert record.section.briefs[-1].situation == "offer_fails" and record.section.briefs[-1].offer_meets_needs is False
    assert record.termination.reason == "task_failed"
    assert [r.status for r in record.section.reminders] == ["cancelled"]


async def test_missed_offer_fails() -> None:
    agent = when(lambda s: s.pending.action == FU, KS, "IN_PROGRESS")
    _, record = await play(make_session("house-hunting/positive", agent=agent))
    assert (outcome(record).success, outcome(record).reason) == (False, "missed_offer")


async def test_wrong_status_counts_but_does_not_derail() -> None:
    agent = when(lambda s: s.pending.action == NA, NA, "IN_PROGRESS")
    _, record = await play(make_session("car-purchase/positive", agent=agent))
    o = outcome(record)
    assert o.success is True and o.action_accuracy == 1.0
    assert o.status_accuracy == pytest.approx(5 / 7)


async def test_negative_branch_needs_in_progress_while_silent() -> None:
    agent = when(lambda s: s.pending.action == KS, KS, "PENDING")
    _, record = await play(make_session("car-purchase-towing/negative", agent=agent))
    assert (outcome(record).success, outcome(record).reason) == (False, "wrong_status_at_end")


# -- what a viewer sees --------------------------------------------------------------------------

async def test_events_expose_clock_states_reminders_and_presence() -> None:
    events, record = await play(make_session("car-purchase-shift/positive"))
    views = [e for e in events if e.type == "chronos.timeline_advanced"]
    assert [v.cause for v in views] == ["start", "monitor", "shift", "monitor", "monitor", "monitor"]
    start = views[0].view
    assert start.clock == "2026-03-09T09:00" and start.current == 0
    assert [s.position for s in start.states] == ["current"] + ["upcoming"] * 4
    assert [s.meets_needs for s in start.states] == [False, True, False, False, True]
    assert views[1].view.clock == "2026-03-16T09:00" and views[1].view.current == 1
    assert views[-1].view.phase == "shifted" and views[-1].view.current == 4
    assert [s.position for s in views[-1].view.states] == ["past", "past", "past", "past", "current"]
    presence = [(e.dormant, e.clock) for e in events if e.type == "chronos.timeline_presence"]
    assert presence[0] == (True, "2026-03-09T09:00") and presence[1] == (False, "2026-03-16T09:00")
    reminders = [e.reminders for e in events if e.type == "chronos.timeline_reminders"]
    assert [r.status for r in reminders[1]] == ["superseded", "active"]
    assert [r.status for r in reminders[-1]] == ["superseded", "done"]
    shift = next(e for e in events if e.type == "chronos.timeline_shift")
    assert shift.constraints["budget"] == "at most £11,000"
    judged = [e.outcome for e in events if e.type == "chronos.timeline_turn"]
    assert judged[3].reply.task_description.intention == "buy a used Clean Air Zone compliant hatchback"
    assert judged[5].reply.task_description.intention.startswith("buy a used Clean Air Zone compliant estate")
    assert all(t.expected_action and t.expected_status for t in judged)


async def test_observations_carry_listings_and_task_but_never_the_answer() -> None:
    _, record = await play(make_session("car-purchase/positive"))
    obs = record.section.observations
    assert [o.source for o in obs] == ["tool_call", "internal_trigger", "internal_trigger"]
    assert [o.turn for o in obs] == [2, 5, 6]
    assert "Renault Clio" in obs[0].content and obs[0].clock == "2026-04-06T09:00"
    trigger = obs[2].content
    assert "Honda Jazz" in trigger and "buy a used small automatic hatchback" in trigger and "automatic" in trigger
    for o in obs:
        assert "meets" not in o.content.lower() and "mileage too high" not in o.content


async def test_user_briefs_reveal_constraints_on_schedule() -> None:
    user = ScriptedPersona()
    _, record = await play(make_session("car-purchase/positive", user=user))
    briefs = record.section.briefs
    assert [b.situation for b in briefs] == ["details", "details", "offer_meets"]
    assert [[c.key for c in b.reveal] for b in briefs[:2]] == [["budget"], ["mileage"]]
    assert briefs[2].offer_meets_needs is True
    user_msgs = [m.content for m in record.messages if m.role == "user"]
    assert user_msgs[0] == chronos_env("car-purchase/positive").scenario.initial_need
    assert "budget: at most €12,000" in user_msgs[1] and "mileage" in user_msgs[2]


async def test_model_user_prompt_holds_the_brief_and_sees_only_delivered_text() -> None:
    from proactive_tui.core.participants import ScriptedParticipant

    seen = []

    def user_line(request):
        seen.append(request)
        return {0: "Budget is up to 12,000 euros.", 1: "Under 90,000 km please."}.get(len(seen) - 1,
                                                                                     "Thank you, that's perfect!")

    user = ScriptedParticipant(user_line, label="model-like-user")
    _, record = await play(make_session("car-purchase/positive", user=user))
    assert outcome(record).success is True
    assert "budget: at most €12,000" in seen[0].system and "Rafael Souza" in seen[0].system
    assert "meets all your needs" in seen[2].system and "Thank the assistant" in seen[2].system
    texts = [m["content"] for m in seen[2].messages]
    assert "Nothing suitable in this update." not in " ".join(texts)  # KEEP_SILENT never reaches the user
    assert any("Good news" in t for t in texts) and seen[2].messages[-1]["role"] == "user"
    roles = [m["role"] for m in seen[2].messages]
    assert all(a != b for a, b in zip(roles, roles[1:]))  # merged into alternating turns


async def test_model_user_at_the_shift_point_shifts() -> None:
    from proactive_tui.core.participants import ScriptedParticipant

    user = ScriptedParticipant(lambda r: "Actually, plans changed: we need an estate now." if "plans have changed" in r.system
                               else "Thanks, that is exactly what I needed!" if "meets all your needs" in r.system
                               else "Noted details.", label="model-like-user")
    _, record = await play(make_session("car-purchase-shift/positive", user=user))
    assert record.section.shift is not None and record.section.shift.utterance.startswith("Actually")
    assert outcome(record).success is True


# -- people in the seats -------------------------------------------------------------------------

async def drive(session: ChronosSession, answers: dict[str, list[str]]) -> tuple[list, RunRecord, list]:
    """Feed human seats from per-seat answer lists; returns events, record, and the hints seen."""
    seen, hints = [], []
    async for event in session.events():
        seen.append(event)
        if event.type == "awaiting_human":
            hints.append((event.seat, event.hint))
            queue = answers[event.seat]
            human = session.seats.get(event.seat)
            human.submit(queue.pop(0)) if queue else human.stop()
    return seen, fold(seen), hints


async def test_human_user_commands() -> None:
    human = HumanParticipant()
    session = make_session("car-purchase-shift/positive", user=human)
    answers = {"user": ["/dormant", "My budget is £8,000.", "Under 70k miles.", "/shift", "/confirm"]}
    events, record, hints = await drive(session, answers)
    o = outcome(record)
    assert o.success is True and o.action_accuracy == 1.0, (o.reason, actions(record))
    assert "No reminder is set yet" in hints[1][1] and "/dormant" in hints[0][1]
    assert "budget: at most £8,000" in hints[0][1]
    assert "plans have changed" in hints[3][1]
    user_msgs = [m.content for m in record.messages if m.role == "user"]
    shift = chronos_env("car-purchase-shift/positive").scenario.intention_shift
    assert user_msgs[3] == shift.utterance and "My needs are met" in user_msgs[4]
    assert record.mode == "play" and record.human_seats == ["user"]


async def test_human_user_can_stay_dormant_after_a_reminder() -> None:
    human = HumanParticipant()
    agent = when(lambda s: s.pending.action == KS and s.state.index == 1, NA, "IN_PROGRESS", "Still looking, no luck yet.")
    session = make_session("car-purchase/positive", user=human, agent=agent)
    events, record, hints = await drive(session, {"user": ["budget 12k", "under 90k km", "/dormant", "thank you, perfect"]})
    assert outcome(record).success is True
    assert [e.reason for e in events if e.type == "chronos.timeline_presence"][-1] == "the agent's message woke the user"
    assert any(e.type == "chronos.timeline_presence" and e.reason == "the user chose not to answer" for e in events)


async def test_human_plain_reply_to_an_offer_is_read_by_keywords() -> None:
    human = HumanParticipant()
    session = make_session("house-hunting/positive", user=human)
    _, record, _ = await drive(session, {"user": ["rent up to 900", "from September", "Great, thanks a lot!"]})
    assert outcome(record).success is True


async def test_human_refusal_fails_the_task() -> None:
    human = HumanParticipant()
    session = make_session("house-hunting/positive", user=human)
    _, record, _ = await drive(session, {"user": ["rent up to 900", "/refuse", "x"]})
    o = outcome(record)
    assert (o.success, o.reason) == (False, "user_refused") and actions(record)[-1] == FT
    assert record.termination.reason == "task_failed" and record.section.turns[-1].action_correct


async def test_human_agent_with_compact_lines_and_json() -> None:
    agent = HumanParticipant()
    session = make_session("car-purchase-towing/negative", agent=agent)
    lines = [
        "INFO_RETRIEVAL PENDING: Let me check.",
        "hello?",  # not a reply: asked again
        "NO_ACTION: Nothing fits yet. Budget?",
        "NO_ACTION: Noted. Mileage?",
        "SET_REMINDER IN_PROGRESS: I'll keep watching. @EVENT a car under budget",
        json.dumps({"response_text": "", "proactive_action": "keep silent",
                    "task_description": {"intention": "car", "constraints": None, "status": "in progress"}}),
        "KEEP_SILENT: no",
        "KEEP_SILENT: no",
    ]
    events, record, hints = await drive(session, {"agent": lines})
    o = outcome(record)
    assert o.success is True and o.action_accuracy == 1.0 and o.status_accuracy == 1.0, (o.reason, actions(record))
    assert record.section.reminders[0].value == "a car under budget"
    assert all("ACTION [STATUS]" in h for seat, h in hints if seat == "agent")


# -- the monitor ---------------------------------------------------------------------------------

async def test_monitor_waits_for_fast_forward_when_manual() -> None:
    session = make_session("car-purchase-towing/negative", monitor_delay_s=None)
    seen = []

    async def consume():
        async for event in session.events():
            seen.append(event)

    task = asyncio.create_task(consume())
    for _ in range(200):
        await asyncio.sleep(0.01)
        if session.user_dormant:
            break
    await asyncio.sleep(0.05)
    assert session.user_dormant and session.state.index == 0 and not task.done()
    assert session.fast_forward() is True
    while not task.done():
        await asyncio.sleep(0.01)
        session.fast_forward()
    causes = [e.cause for e in seen if e.type == "chronos.timeline_advanced"]
    assert causes == ["start", "fast_forward", "fast_forward", "fast_forward"]
    assert fold(seen).section.outcome.success is True
    assert session.fast_forward() is False  # ended: nothing to advance


async def test_stop_while_waiting_on_the_monitor_is_not_scored() -> None:
    session = make_session("car-purchase-towing/negative", monitor_delay_s=None)
    seen = []
    async for event in session.events():
        seen.append(event)
        if event.type == "chronos.timeline_presence" and event.dormant:
            session.stop()
    record = fold(seen)
    assert record.termination.reason == "cancelled" and outcome(record).success is None


# -- records, replay, factory, real LLM path -----------------------------------------------------

async def test_run_record_round_trips_and_replays() -> None:
    events, record = await play(make_session("ticket-booking-shift/positive"))
    again = RunRecord.model_validate_json(record.model_dump_json())
    assert again == record
    assert fold(parse_event(e.model_dump_json()) for e in events) == record
    agent_msgs = [m for m in record.messages if m.role == "agent"]
    assert json.loads(agent_msgs[0].content)["proactive_action"] == IR
    assert agent_msgs[1].visible_context[-1].content.startswith('<observation source="tool_call"')


def test_factory_builds_chronos_with_paper_temperature() -> None:
    env = chronos_env("car-purchase/positive")
    gateway = Gateway()
    session = build_session(SessionSpec(env_id=env.id), env, gateway)
    assert isinstance(session, ChronosSession)
    assert session.seats.agent.settings.temperature == 0.2 and session.models["agent"]["temperature"] == 0.2
    assert session.seats.user.settings.temperature == 0.0
    roles = RoleSettings(agent=ModelSettings(temperature=0.7))
    session = build_session(SessionSpec(env_id=env.id, roles=roles), env, gateway)
    assert session.seats.agent.settings.temperature == 0.7


def llm_seats(server: FakeOpenAIServer) -> ChronosSeats:
    gateway = Gateway()
    settings = ModelSettings(model="openai/fake", api_base=server.base_url)
    return ChronosSeats(agent=LLMParticipant(gateway, settings), user=LLMParticipant(gateway, settings))


async def test_malformed_replies_are_reasked_through_the_fake_server() -> None:
    with FakeOpenAIServer() as server:
        broken = {"n": 0}

        def responder(body):
            is_agent = (body.get("response_format") or {}).get("json_schema", {}).get("name") == "AgentReply"
            if is_agent and broken["n"] < 2:
                broken["n"] += 1
                return ["Sure! I'll look into it.", '{"proactive_action": "SET_REMINDER", "task_description": {"status": "PENDING"}}'][broken["n"] - 1]
            return scripted_agent_responder(body)

        server.responder = responder
        session = ChronosSession(chronos_env("car-purchase-towing/negative"), llm_seats(server))
        _, record = await play(session)
    o = outcome(record)
    assert o.success is True, (o.reason, actions(record))
    first = record.section.turns[0]
    assert first.asks == 3 and first.action == IR and not first.format_failure
    agent_calls = [r for r in server.requests if (r.body.get("response_format") or {}).get("json_schema", {}).get("name") == "AgentReply"]
    assert "could not be used" in agent_calls[1]["messages"][-1]["content"]
    assert "SET_REMINDER needs trigger_condition" in agent_calls[2]["messages"][-1]["content"]
    assert record.messages[1].model == "openai/fake"


async def test_three_malformed_replies_are_a_format_failure() -> None:
    with FakeOpenAIServer() as server:
        server.responder = lambda body: ("no json here" if (body.get("response_format") or {}).get("json_schema") else "hi")
        session = ChronosSession(chronos_env("car-purchase/positive"), llm_seats(server))
        _, record = await play(session)
    o = outcome(record)
    assert (o.success, o.reason, o.turns) == (False, "format_failure", 1)
    turn = record.section.turns[0]
    assert turn.format_failure and turn.reply is None and not turn.action_correct and not turn.status_correct
    assert turn.critical == "format_failure" and record.termination.reason == "derailed"
    assert len(server.requests) == 3 and any("no valid AgentReply" in e for e in record.errors)


def test_engine_imports_no_ui() -> None:
    code = ("import sys, proactive_tui.families.chronos.protocol, proactive_tui.core.run_record, "
            "proactive_tui.families.chronos.metrics; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'rich', 'litellm'}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.stdout.strip() == "[]", proc.stderr


def test_oracle_agent_needs_its_session() -> None:
    seats = ChronosSeats(agent=OracleAgent(), user=ScriptedPersona())
    session = ChronosSession(chronos_env("car-purchase/positive"), seats)
    assert seats.agent.session is session and seats.user.session is session
