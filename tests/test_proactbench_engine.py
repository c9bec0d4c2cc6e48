"""ProactBench's engine through the real litellm path against the fake OpenAI-compatible server:
the offline protocol (recorded context, neutral judge, evidence checked, SKIPPED kept and never
counted, no empty reply scored), the online planner / user agent / agent loop, and a person in the
agent seat or the user seat."""

from __future__ import annotations

import asyncio
import json
import re

from engine_helpers import collect
from proactive_tui import envs
from proactive_tui.core import registry
from proactive_tui.core.participants import HumanParticipant, LLMParticipant, ScriptedParticipant
from proactive_tui.core.run_record import fold
from proactive_tui.core.spec import SessionSpec
from proactive_tui.families.proactbench.judges import JudgeVerdict, evidence_found, parse_person_verdict
from proactive_tui.llm.gateway import Gateway
from proactive_tui.llm.settings import ModelSettings, RoleSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer, schema_name

ENV_ID = "proactbench/BP_PROFESSIONAL_01_NONE__style1__531a542ff1714bb080d8f06f3cd2daff"
"""Trigger points at turns 1 (EMERGENT), 3 (CRITICAL), 5 (CRITICAL) and 7 (RECOVERY)."""


def sample_env(env_id: str = ENV_ID):
    return envs.load_default().get(env_id)


def roles(base: str) -> RoleSettings:
    def seat(model: str) -> ModelSettings:
        return ModelSettings(model=model, api_base=base, max_retries=0)

    return RoleSettings(agent=seat("openai/agent-m"), user=seat("openai/user-m"), judge=seat("openai/judge-m"))


def session_for(env, base: str, seats: dict | None = None, **settings):
    family = registry.get("proactbench")
    spec = SessionSpec(env_id=env.id, roles=roles(base), settings=family.settings(settings).model_dump())
    gateway = Gateway()
    live = {role: LLMParticipant(gateway, spec.roles.for_role(role)) for role in ("agent", "user", "judge")}
    live.update(seats or {})
    return family.engine.build_session(spec, env, live)


def last_text(body: dict) -> str:
    return body["messages"][-1]["content"]


def by_type(events, kind: str) -> list:
    return [e for e in events if e.type == kind]


# -- offline -------------------------------------------------------------------------------------

AGENT_REPLIES = {1: "Reply one: back up the DSLR photos before you wipe anything.", 3: "",
                 5: "Reply five: keep a checksum manifest of every batch.", 7: "Reply seven: label the drive."}


def offline_responder(env):
    """The agent answers by trigger turn (an empty reply at turn 3); the judge PASSes turn 1 with a
    real quote, answers turn 5 with no JSON at all (every re-ask too) and FAILs turn 7 quoting text
    the reply does not hold."""
    users = {t.user_message: t.turn for t in env.dialogue.turn_records}

    def respond(body: dict) -> str:
        if body["messages"][0]["content"].startswith("You evaluate"):  # the judge, in any structured mode
            text = " ".join(m["content"] for m in body["messages"])
            if "Reply one" in text:
                return json.dumps({"rationale": "acts on the photo anchor", "score": "pass",
                                   "evidence": "back up the DSLR photos before you wipe anything"})
            if "Reply five" in text:
                return "I would rather not say."
            return json.dumps({"rationale": "only closes", "score": "FAIL", "evidence": "enjoy your new laptop"})
        return AGENT_REPLIES[users[last_text(body)]]

    return respond


async def test_offline_protocol_scores_each_trigger_against_its_rubric() -> None:
    env = sample_env()
    with FakeOpenAIServer(responder=offline_responder(env)) as server:
        events = await collect(session_for(env, server.base_url))
        bodies = [r.body for r in server.requests if r.method == "POST"]
    record = fold(events)
    assert record.termination.reason == "completed"

    # the recorded context: turns 2, 4, 6 (the non-trigger turns before the last trigger), each once
    assert [e.turn for e in by_type(events, "proactbench.recorded_turn")] == [2, 4, 6]
    opened = by_type(events, "proactbench.trigger_opened")
    assert [(e.index, e.turn, e.rubric.type) for e in opened] == [(1, 1, "EMERGENT"), (2, 3, "CRITICAL"),
                                                                 (3, 5, "CRITICAL"), (4, 7, "RECOVERY")]
    assert opened[1].original_response == env.dialogue.turn(3).assistant_response

    # the agent: only the chat, no system message, the curation model's replies as context
    agent_bodies = [b for b in bodies if schema_name(b) is None]
    assert all(b["messages"][0]["role"] == "user" for b in agent_bodies)
    assert all(m["role"] in ("user", "assistant") for b in agent_bodies for m in b["messages"])
    at_five = next(b for b in agent_bodies if last_text(b) == env.dialogue.turn(5).user_message)
    assert [m["content"] for m in at_five["messages"] if m["role"] == "assistant"] == [
        env.dialogue.turn(n).assistant_response for n in (1, 2, 3, 4)]  # never the agent's own earlier replies
    assert all(b["temperature"] == 0.7 for b in bodies)  # upstream's, for the agent and the offline judge
    assert all(b["max_tokens"] == 8192 for b in agent_bodies)  # upstream's cap for the model under test
    assert all(b["max_tokens"] != 8192 for b in bodies if schema_name(b) is not None)  # the judge keeps the project's

    # the judge: neutral mode, the rubric fixed before the reply
    judge_bodies = [b for b in bodies if schema_name(b) == "JudgeVerdict"]
    first = judge_bodies[0]
    assert "(not provided)" in first["messages"][0]["content"] and "no persona" not in last_text(first).lower()
    assert env.triggers[0].evaluation_rubric.pass_criteria in last_text(first)
    five = [b for b in bodies if b["messages"][0]["content"].startswith("You evaluate")
            and any("Reply five" in m["content"] for m in b["messages"])]
    assert len(five) == 3 and "could not be used" in last_text(five[-1])  # asked, then re-asked twice

    judged = by_type(events, "proactbench.trigger_judged")
    assert [(e.index, e.result.score if e.result else None) for e in judged] == [(1, "PASS"), (2, None), (3, None),
                                                                                (4, "FAIL")]
    assert [e.evidence_in_reply for e in judged] == [True, None, None, False]
    assert "no reply" in judged[1].problem and judged[1].response == ""
    assert "no verdict" in judged[2].problem and judged[2].response == AGENT_REPLIES[5]
    assert all(e.judge == "openai/judge-m" and e.judged_by == "judge" for e in (judged[0], judged[3]))

    # no empty reply is a message, nothing SKIPPED is counted
    assert all(m.content.strip() for m in record.messages)
    assert [m.turn for m in record.messages] == [1, 5, 7]
    stats = record.section.stats()
    assert stats["EMERGENT"]["PASS"] == 1 and stats["CRITICAL"]["SKIPPED"] == 2 and stats["RECOVERY"]["FAIL"] == 1
    assert record.score("overall_weighted").value == 0.5 and record.score("overall_pass_rate").value == 0.5
    assert record.score("critical_weighted").value is None  # both SKIPPED: no rate, never 0
    assert record.score("overall_weighted").label == "Overall weighted score (judge)"
    assert record.score("overall_weighted").by == "openai/judge-m" and record.score("overall_weighted").by_kind == "llm"
    assert record.score("skipped").value == 2
    assert sum("SKIPPED" in e for e in record.errors) == 2
    # every call traced with the turn it belongs to
    purposes = {e.purpose for e in by_type(events, "model_called")}
    assert {"turn 1 agent reply", "verdict on turn 1", "verdict on turn 5", "turn 7 agent reply"} <= purposes


async def test_offline_max_triggers_bounds_the_session_and_says_so() -> None:
    env = sample_env()
    with FakeOpenAIServer(responder=offline_responder(env)) as server:
        record = fold(await collect(session_for(env, server.base_url, max_triggers=1)))
        posts = [r for r in server.requests if r.method == "POST"]
    assert [t.index for t in record.section.triggers] == [1] and len(posts) == 2
    assert "first 1 of 4" in record.termination.detail
    assert registry.get("proactbench").deviations(record.settings) == ["first 1 trigger points only (upstream: all)"]


async def test_a_system_prompt_is_sent_only_when_set() -> None:
    env = sample_env()
    with FakeOpenAIServer(responder=offline_responder(env)) as server:
        await collect(session_for(env, server.base_url, max_triggers=1, system_prompt="Be brief."))
        agent = next(r.body for r in server.requests if r.method == "POST" and schema_name(r.body) is None)
    assert agent["messages"][0] == {"role": "system", "content": "Be brief."}


async def test_a_setup_failure_ends_the_session_and_keeps_the_trigger() -> None:
    env = sample_env()
    from proactive_tui.testing.fake_openai import Reply

    with FakeOpenAIServer(responder=lambda body: Reply.error(401, "bad key")) as server:
        events = await collect(session_for(env, server.base_url))
    record = fold(events)
    assert record.termination.reason == "error"
    assert [(t.index, t.judged, t.result) for t in record.section.triggers] == [(1, True, None)]
    assert sum(e.type == "error" and e.fatal for e in events) == 1


# -- online -------------------------------------------------------------------------------------

def online_responder():
    """Planner: turn 1 EMERGENT, turn 2 none, turn 3 RECOVERY and stop. User agent: follows the
    order, scores a pending reply PASS quoting it. Score-only call: PARTIAL. Agent: numbered."""
    def respond(body: dict) -> str:
        name = schema_name(body)
        text = last_text(body)
        if name == "PlannerReply":
            turn = int(re.search(r"TURN (\d+) of at most", text).group(1))
            rubric = {"type": {1: "EMERGENT", 3: "RECOVERY"}.get(turn), "pass_criteria": f"acts at {turn}",
                      "partial_criteria": "aware", "fail_criteria": "reactive"}
            return json.dumps({"state_audit": {"current_turn": turn, "previous_trigger_count": 0, "is_max_reached": False},
                               "is_trigger_point": turn in (1, 3), "stop_conversation": turn == 3,
                               "evaluation_rubric": rubric if turn in (1, 3) else None,
                               "tactical_order": {"intent": f"intent of turn {turn}", "content_payload": [f"reveal {turn}"],
                                                  "behavioral_directive": "stay terse"}})
        if name in ("UserTurn", "UserTurnScoring"):
            turn = text.count("USER:") + 1
            out = {"user_message": f"user message {turn}"}
            if name == "UserTurnScoring":
                reply = text.split("REPLY TO SCORE\n", 1)[1].split("\n", 1)[0]
                out = {"evaluation": {"rationale": "infers it", "score": "PASS", "evidence": reply[:20]}, **out}
            return json.dumps(out)
        if name == "JudgeVerdict":
            return json.dumps({"rationale": "aware only", "score": "PARTIAL", "evidence": "agent reply 3"})
        users = sum(1 for m in body["messages"] if m["role"] == "user")
        return f"agent reply {users} with a concrete next step"

    return respond


async def test_online_protocol_plans_speaks_scores_with_upstream_temperatures() -> None:
    env = sample_env()
    with FakeOpenAIServer(responder=online_responder()) as server:
        events = await collect(session_for(env, server.base_url, protocol="online", max_turns=5))
        bodies = [r.body for r in server.requests if r.method == "POST"]
    record = fold(events)
    assert record.termination.reason == "completed" and "after turn 3" in record.termination.detail
    assert [e.turn for e in by_type(events, "proactbench.planned")] == [1, 2, 3]
    assert [(e.index, e.turn, e.rubric.type) for e in by_type(events, "proactbench.trigger_opened")] == [
        (1, 1, "EMERGENT"), (2, 3, "RECOVERY")]
    assert [(m.role, m.turn) for m in record.messages] == [("user", 1), ("agent", 1), ("user", 2), ("agent", 2),
                                                           ("user", 3), ("agent", 3)]

    temps = {schema_name(b): b["temperature"] for b in bodies}
    assert temps["PlannerReply"] == 0.1 and temps["UserTurn"] == 0.7 and temps[None] == 0.7
    # the planner sees persona (not provided), the blueprint's recorded anchors, the turn
    planner = next(b for b in bodies if schema_name(b) == "PlannerReply")
    assert "(not provided)" in last_text(planner) and env.anchors()[0] in last_text(planner)
    # the user agent follows the order; the agent never sees plans, rubrics or scores
    user_turn = next(b for b in bodies if schema_name(b) == "UserTurn")
    assert "intent of turn 1" in last_text(user_turn)
    for body in (b for b in bodies if schema_name(b) is None):
        assert body["messages"][0]["role"] == "user"
        assert not any(word in m["content"] for m in body["messages"] for word in ("intent of turn", "RUBRIC", "PASS"))

    judged = by_type(events, "proactbench.trigger_judged")
    assert [(e.index, e.result.score, e.judged_by, e.evidence_in_reply) for e in judged] == [
        (1, "PASS", "user_agent", True), (2, "PARTIAL", "user_agent", True)]
    scoring = next(b for b in bodies if schema_name(b) == "UserTurnScoring")
    assert "agent reply 1" in last_text(scoring)  # the score of turn 1 comes with the message of turn 2
    assert record.score("overall_weighted").value == 0.75
    assert record.score("overall_weighted").label == "Overall weighted score (user agent)"
    assert registry.get("proactbench").record.complete_turns(record) == 3


async def test_online_planner_failure_stops_and_still_scores_the_pending_trigger() -> None:
    responder = online_responder()

    def respond(body: dict) -> str:
        if schema_name(body) == "PlannerReply" and "TURN 2 of" in last_text(body):
            return "no plan today"
        return responder(body)

    env = sample_env()
    with FakeOpenAIServer(responder=respond) as server:
        record = fold(await collect(session_for(env, server.base_url, protocol="online", max_turns=5)))
    assert record.termination.reason == "error" and "planner failed" in record.termination.detail
    assert [(t.index, t.counted, t.judged_by) for t in record.section.triggers] == [(1, "PARTIAL", "user_agent")]


# -- people in seats -------------------------------------------------------------------------------

async def answer(session, replies: dict[str, list[str]], hints: list[str]):
    """Run the session, answering each AwaitingHuman from `replies[seat]` in order."""
    out = []
    async for event in session.events():
        out.append(event)
        if event.type == "awaiting_human":
            hints.append(event.hint)
            session.seats.get(event.seat).submit(replies[event.seat].pop(0))
    return out


async def test_a_person_plays_the_agent_offline_and_an_empty_reply_is_asked_again() -> None:
    env = sample_env()
    person = HumanParticipant()
    judge = ScriptedParticipant([], structured=lambda request, schema: JudgeVerdict(
        rationale="ok", score="PASS", evidence="label it"), label="scripted-judge")
    family = registry.get("proactbench")
    spec = SessionSpec(env_id=env.id, seats={"agent": "human", "user": "model", "judge": "model"},
                       settings=family.settings({"max_triggers": 1}).model_dump())
    session = family.engine.build_session(spec, env, {"agent": person, "user": ScriptedParticipant([]), "judge": judge})
    hints: list[str] = []
    events = await asyncio.wait_for(answer(session, {"agent": ["   ", "Back it up first, then label it."]}, hints), 30)
    record = fold(events)
    assert hints == ["your reply as the assistant", "an empty reply cannot be scored: write your reply"]
    assert [(m.content, m.model) for m in record.messages] == [("Back it up first, then label it.", "person")]
    assert record.mode == "play" and record.section.triggers[0].counted == "PASS"
    assert "agent" in record.human_seats


async def test_a_person_plays_the_user_online_with_the_planners_order_as_brief() -> None:
    env = sample_env()
    with FakeOpenAIServer(responder=online_responder()) as server:
        person = HumanParticipant()
        family = registry.get("proactbench")
        spec = SessionSpec(env_id=env.id, roles=roles(server.base_url),
                           seats={"agent": "model", "user": "human", "judge": "model"},
                           settings=family.settings({"protocol": "online", "max_turns": 2}).model_dump())
        gateway = Gateway()
        seats = {"agent": LLMParticipant(gateway, spec.roles.agent), "judge": LLMParticipant(gateway, spec.roles.judge),
                 "user": person}
        session = family.engine.build_session(spec, env, seats)
        hints: list[str] = []
        replies = {"user": ["my drive is old", "maybe", "partial it warns but takes no step", "thanks, that is all"]}
        events = await asyncio.wait_for(answer(session, replies, hints), 60)
        user_calls = [r for r in server.requests if r.method == "POST" and schema_name(r.body) in ("UserTurn", "UserTurnScoring")]
    record = fold(events)
    assert not user_calls  # the person is the user: no user-agent call
    assert "intent of turn 1" in hints[0] and "reveal 1" in hints[0] and "stay terse" in hints[0]
    assert hints[1].startswith("first score the assistant's reply at turn 1")
    assert hints[2].startswith("not a verdict")  # "maybe" is asked again
    assert "intent of turn 2" in hints[3]
    trigger = record.section.triggers[0]
    assert (trigger.counted, trigger.judged_by, trigger.judge) == ("PARTIAL", "person", "person")
    assert trigger.result.rationale == "it warns but takes no step" and trigger.evidence_in_reply is None
    assert [(m.role, m.content) for m in record.messages if m.role == "user"] == [
        ("user", "my drive is old"), ("user", "thanks, that is all")]
    assert record.score("overall_weighted").label == "Overall weighted score (person)"
    assert record.score("overall_weighted").by_kind == "human"


# -- the pieces ---------------------------------------------------------------------------------------

def test_evidence_is_found_through_typography_and_elisions_and_not_otherwise() -> None:
    reply = "First, **back up** the photos \u2014 then run a \u201cfull\u201d surface scan.\nLabel the drive."
    assert evidence_found("back up the photos - then run a \"full\" surface scan", reply)
    assert evidence_found("\u201cBack up the photos ... label the drive.\u201d", reply)
    assert not evidence_found("label the drive ... back up the photos", reply)  # out of order
    assert not evidence_found("format the drive", reply)
    assert not evidence_found("  ", reply)


def test_a_persons_verdict_reads_the_first_word() -> None:
    assert parse_person_verdict("PASS acts on it").score == "PASS"
    assert parse_person_verdict("partial: aware only").rationale == "aware only"
    assert parse_person_verdict('{"rationale": "r", "score": "fail"}').score == "FAIL"
    for bad in ("", "good job", "7"):
        try:
            parse_person_verdict(bad)
        except ValueError as exc:
            assert "PASS, PARTIAL or FAIL" in str(exc)
        else:
            raise AssertionError(bad)


async def test_an_empty_reply_is_retracted_and_never_scored() -> None:
    env = sample_env()
    judge = ScriptedParticipant([], structured=lambda request, schema: JudgeVerdict(rationale="r", score="PASS"),
                                label="scripted-judge")
    family = registry.get("proactbench")
    spec = SessionSpec(env_id=env.id, settings=family.settings({"max_triggers": 2}).model_dump())
    session = family.engine.build_session(spec, env, {"agent": ScriptedParticipant(["  ", "a real reply"], label="a"),
                                               "user": ScriptedParticipant([]), "judge": judge})
    events = await collect(session)
    record = fold(events)
    assert [e.reason for e in by_type(events, "message_discarded")] == ["the agent's reply was empty"]
    assert [m.content for m in record.messages] == ["a real reply"]
    assert [(t.counted, t.response) for t in record.section.triggers] == [("SKIPPED", ""), ("PASS", "a real reply")]
    assert len(judge.calls) == 1 and record.score("overall_pass_rate").value == 1.0
    # the judge gave no quote: said in the report, not taken for evidence
    assert record.section.triggers[1].evidence_in_reply is False
    text = " ".join(b.text for s in family.report.sections(record) for b in s.blocks if getattr(b, "text", None))
    assert "no evidence quote given" in text and "NOT in the reply" not in text


def test_a_person_in_the_user_seat_needs_the_online_protocol() -> None:
    from proactive_tui.core.family import UnsupportedFamily

    env = sample_env()
    family = registry.get("proactbench")
    spec = SessionSpec(env_id=env.id, seats={"agent": "model", "user": "human", "judge": "model"})
    try:
        family.engine.build_session(spec, env, {"agent": ScriptedParticipant([]), "user": HumanParticipant(),
                                         "judge": ScriptedParticipant([])})
    except UnsupportedFamily as exc:
        assert "--protocol online" in str(exc)
    else:
        raise AssertionError("a person was seated as the offline user, where nobody would ask them")


async def test_the_seed_setting_reaches_every_model_call() -> None:
    env = sample_env()
    with FakeOpenAIServer(responder=offline_responder(env)) as server:
        await collect(session_for(env, server.base_url, max_triggers=1, seed=7))
        posts = [r.body for r in server.requests if r.method == "POST"]
    assert posts and all(b.get("seed") == 7 for b in posts)


# -- the hand-built events other tests read are the engine's ------------------------------------------


def event_shape(events: list) -> list[str]:
    """The event types in order, model calls left out and a run of deltas as one (the fake server
    and the builder split a reply differently)."""
    out: list[str] = []
    for event in events:
        if event.type == "model_called" or (event.type == "message_delta" and out[-1:] == ["message_delta"]):
            continue
        out.append(event.type)
    return out


async def test_the_hand_built_offline_events_are_what_the_engine_emits() -> None:
    """`proactbench_events.offline_events` (what the screen, export and label tests read) against a
    real offline session of the same dialogue: the same events in the same order, the same
    trigger verdicts and the same words for a judge whose replies held no verdict."""
    from proactbench_events import Models, judge_failure, offline_events, sample_env as builder_env
    from test_proactbench_fork import proactbench_responder

    env = builder_env()

    def responder(body: dict) -> str:  # PARTIAL everywhere, the last trigger's judge never gives JSON
        if body["messages"][0]["content"].startswith("You evaluate") and "reply at turn 8" in json.dumps(body):
            return "no JSON here"
        return proactbench_responder(body)

    with FakeOpenAIServer(responder=responder) as server:
        real = await collect(session_for(env, server.base_url))
    built = offline_events(env, verdicts=("PARTIAL", "PARTIAL", "PARTIAL", None),
                           models=Models("openai/agent-m", "openai/judge-m", "", ""))
    assert event_shape(built) == event_shape(real)
    judged = [[(e.index, e.turn, e.result.score if e.result else None, e.judge, e.problem) for e in events
               if e.type == "proactbench.trigger_judged"] for events in (built, real)]
    assert judged[0] == judged[1] and judged[0][-1][-1] == judge_failure("openai/judge-m")
    errors = [[(e.seat, e.purpose, e.message, e.judgement) for e in events if e.type == "error"] for events in (built, real)]
    assert errors[0] == errors[1] and len(errors[0]) == 1
    usage = [[(e.seat, e.purpose) for e in events if e.type == "usage_recorded"] for events in (built, real)]
    assert usage[0] == usage[1]
    assert [(m.role, m.turn) for m in fold(built).messages] == [(m.role, m.turn) for m in fold(real).messages]
