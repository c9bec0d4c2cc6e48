"""The ProactiveEval engine with scripted seats and through the fake OpenAI server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from conftest import ROOT
from engine_helpers import collect, make_session, sample_env, scripted_agent, scripted_judge, scripted_user
from proactive_tui.core.events import parse_event
from proactive_tui.core.participants import HumanParticipant, LLMParticipant, ScriptedParticipant
from proactive_tui.families.proactiveeval.protocol import ProactiveEvalSession, ProactiveEvalSettings, ProactiveEvalSeats
from proactive_tui.core.run_record import RunRecord, fold
from proactive_tui.llm.gateway import Gateway
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer




def types(events) -> list[str]:
    return [e.type for e in events]


async def test_runs_to_the_turn_limit() -> None:
    events = await collect(make_session(max_turns=4))
    record = fold(events)
    assert record.termination.reason == "max_turns"
    assert [(m.role, m.turn) for m in record.messages] == [(r, t) for t in range(1, 5) for r in ("agent", "user")]
    assert [c.turn for c in record.section.turn_checks] == [1, 2, 3, 4]
    assert record.section.guidance is not None and record.section.guidance.overall == 9 and record.section.guidance.judge_model == "scripted-judge"
    assert record.section.planning.score == 7 and record.section.planning.target == "help pick a thing"
    assert types(events).count("session_ended") == 1 and events[-1].type == "session_ended"


async def test_events_are_in_order() -> None:
    events = await collect(make_session(max_turns=2))
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    t = types(events)
    assert t[0] == "session_started"
    # the plan is proposed before the dialogue; its score arrives while the agent opens
    assert t.index("proactiveeval.plan_proposed") < t.index("message_started") < t.index("proactiveeval.plan_scored")
    # every delta belongs to a started message and precedes its done
    started = {e.message_id: i for i, e in enumerate(events) if e.type == "message_started"}
    done = {e.message.id: i for i, e in enumerate(events) if e.type == "message_done"}
    for i, e in enumerate(events):
        if e.type == "message_delta":
            assert started[e.message_id] < i < done[e.message_id]
    assert t.index("phase_changed") < t.index("proactiveeval.plan_proposed")
    assert t[-2] == "proactiveeval.guidance_scored" or "proactiveeval.guidance_scored" in t


async def test_early_stop_when_target_reached_discards_speculative_message() -> None:
    events = await collect(make_session(reach_at=2, max_turns=6))
    record = fold(events)
    assert record.termination.reason == "target_reached"
    assert [(m.role, m.turn) for m in record.messages] == [("agent", 1), ("user", 1), ("agent", 2), ("user", 2)]
    discarded = [e for e in events if e.type == "message_discarded"]
    assert len(discarded) <= 1  # the speculative agent turn 3, if it had started
    assert record.section.turn_checks[-1].target_reached is True


async def test_memory_window_turn_5_sees_turns_2_to_4() -> None:
    record = fold(await collect(make_session(max_turns=5, memory_turns=3, planning=False)))
    agent5 = next(m for m in record.messages if m.role == "agent" and m.turn == 5)
    assert agent5.context_turns == [2, 3, 4]
    texts = [m.content for m in agent5.visible_context]
    assert "agent says turn 1" not in texts and "user answers turn 1" not in texts
    assert texts[1:] == [f"{who} turn {k}" for k in (2, 3, 4) for who in ("agent says", "user answers")]
    assert "Earlier parts" in texts[0]
    user5 = next(m for m in record.messages if m.role == "user" and m.turn == 5)
    assert [m.content for m in user5.visible_context][-1] == "agent says turn 5"
    assert user5.context_turns == [2, 3, 4]


@pytest.mark.parametrize("level,phrase", [("low", "LOW"), ("high", "HIGH")])
async def test_agreeableness_reaches_the_user_prompt(level: str, phrase: str) -> None:
    user = scripted_user()
    await collect(make_session(max_turns=1, planning=False, agreeableness=level, user=user))
    assert f"Your agreeableness is {phrase}" in user.calls[0].system
    assert sample_env().item.environment.user_information in user.calls[0].system


async def test_human_user_fed_from_a_queue() -> None:
    human = HumanParticipant()
    session = make_session(max_turns=2, planning=False, user=human)
    seen = []
    async for event in session.events():
        seen.append(event)
        if event.type == "awaiting_human":
            assert event.seat == "user"
            human.submit(f"I am a person, turn {event.turn}")
    record = fold(seen)
    assert [m.content for m in record.messages if m.role == "user"] == ["I am a person, turn 1", "I am a person, turn 2"]
    assert record.mode == "play" and record.human_seats == ["user"]
    assert record.section.turn_checks and record.section.guidance is not None  # the person's text was judged like a model's


async def test_human_can_stop_the_dialogue() -> None:
    human = HumanParticipant()
    session = make_session(max_turns=5, planning=False, user=human)
    seen = []
    async for event in session.events():
        seen.append(event)
        if event.type == "awaiting_human":
            human.submit("fine") if event.turn == 1 else human.stop()
    record = fold(seen)
    assert record.termination.reason == "user_stopped"
    assert record.section.guidance is not None


@pytest.mark.parametrize("score", [False, True])
async def test_cancel_mid_turn_keeps_partial_text(score: bool) -> None:
    slow_user = ScriptedParticipant(lambda req: "one two three four five six", label="slow-user")

    async def slow_reply(request):  # stream word by word, slowly
        for k, word in enumerate("one two three four five six".split()):
            request.on_delta(word if k == 0 else " " + word)
            await asyncio.sleep(0.05)
        return None

    slow_user.reply = slow_reply  # type: ignore[method-assign]
    session = make_session(max_turns=3, planning=False, user=slow_user)
    seen = []
    async for event in session.events():
        seen.append(event)
        if event.type == "message_delta" and event.message_id.startswith("user-") and len([e for e in seen if e.type == "message_delta" and e.message_id.startswith("user-")]) == 2:
            session.stop(score=score)
    record = fold(seen)
    assert record.termination.reason == "cancelled"
    partial = [m for m in record.messages if m.partial]
    assert len(partial) == 1 and partial[0].content == "one two" and partial[0].role == "user"
    assert (record.section.guidance is not None) == score
    assert seen[-1].type == "session_ended"


async def test_run_record_round_trips() -> None:
    events = await collect(make_session(max_turns=3, live_judging=True))
    record = fold(events)
    # a live score after turns 1 and 2; the final score stands for the last turn
    assert [s.turn for s in record.section.live_scores] == [1, 2] and record.section.live_scores[0].live
    assert record.section.guidance.turn == 3 and not record.section.guidance.live
    again = RunRecord.model_validate_json(record.model_dump_json())
    assert again == record
    # events round-trip too: a replay from JSON folds to the same record
    replayed = fold(parse_event(e.model_dump_json()) for e in events)
    assert replayed == record


async def test_probes_flag_leaks_and_passive_openers() -> None:
    agent = ScriptedParticipant(lambda r: "Sounds like you need help. Sub-target 1: ask" if r.turn == 1 else "Turn 1: hi Turn 2: bye", label="leaky")
    record = fold(await collect(make_session(max_turns=2, planning=False, agent=agent)))
    assert set(record.section.turn_checks[0].probes) == {"sub-target label", "passive opener"}
    assert record.section.turn_checks[1].probes == ["several turns in one message"]


async def test_judge_failure_is_not_fatal() -> None:
    def broken(request, schema):
        from proactive_tui.llm.errors import ModelError

        raise ModelError("judge exploded", "server", "j")

    judge = ScriptedParticipant([], structured=broken, label="j")
    record = fold(await collect(make_session(max_turns=2, judge=judge)))
    assert record.termination.reason == "max_turns"
    assert len([m for m in record.messages if not m.partial]) == 4
    assert all(c.target_reached is None for c in record.section.turn_checks)
    assert record.section.guidance is None and any("judge exploded" in e for e in record.errors)


async def test_own_plan_guides_the_agent() -> None:
    agent = scripted_agent()
    await collect(make_session(max_turns=1, guide_with="own_plan", agent=agent))
    dialogue_call = [c for c in agent.calls if c.turn == 1][0]
    assert "help pick a thing" in dialogue_call.system


async def test_through_fake_openai_with_malformed_judge_reply_reasked() -> None:
    env = sample_env()
    with FakeOpenAIServer() as server:
        def responder(body):
            schema = (body.get("response_format") or {}).get("json_schema", {}).get("name")
            if schema == "TurnVerdict":
                return json.dumps({"reasoning": "not yet", "target_reached": False, "covered_steps": [1]})
            if schema == "GuidanceJudgement":
                return json.dumps({"reasoning": "ok", "effectiveness": 6, "personalization": 6, "tone": 6,
                                   "engagement": 6, "naturalness": 6, "overall": 6})
            if schema == "PlanDraft":
                return json.dumps({"target": "t", "sub_targets": ["a", "b"]})
            if schema == "PlanJudgement":
                return json.dumps({"reasoning": "fine", "score": 5})
            return "a plain line of dialogue"

        gateway = Gateway()
        s = lambda: ModelSettings(model="openai/fake", api_base=server.base_url)  # noqa: E731
        seats = ProactiveEvalSeats(agent=LLMParticipant(gateway, s()), user=LLMParticipant(gateway, s()), judge=LLMParticipant(gateway, s()))
        broken_once = {"done": False}

        def flaky(body):
            name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
            if name == "PlanJudgement" and not broken_once["done"]:
                broken_once["done"] = True
                return "I think the score is {\"reasoning\": \"x\", \"score\": \"high\""
            return responder(body)

        server.responder = flaky
        record = fold(await collect(ProactiveEvalSession(env, seats, ProactiveEvalSettings(max_turns=2))))
    assert record.section.planning.score == 5
    plan_judge_calls = [r for r in server.requests if (r.body.get("response_format") or {}).get("json_schema", {}).get("name") == "PlanJudgement"]
    assert len(plan_judge_calls) == 2 and "could not be used" in plan_judge_calls[1]["messages"][-1]["content"]
    assert record.termination.reason == "max_turns"
    assert [m.content for m in record.messages][:2] == ["a plain line of dialogue"] * 2
    assert record.messages[0].model == "openai/fake" and record.section.turn_checks[0].judge_model == "openai/fake"
    assert record.section.guidance.overall == 6


def test_engine_imports_no_ui() -> None:
    code = ("import sys, proactive_tui.families.proactiveeval.protocol, proactive_tui.core.run_record; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'rich'}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.stdout.strip() == "[]", proc.stderr


async def test_pause_and_step_gate_turns() -> None:
    session = make_session(max_turns=3, planning=False)
    session.pause()
    seen = []
    agent_turns_started = []

    async def consume() -> None:
        async for event in session.events():
            seen.append(event)
            if event.type == "message_started" and event.role == "agent":
                agent_turns_started.append(event.turn)

    task = asyncio.create_task(consume())
    for _ in range(20):
        await asyncio.sleep(0)
    assert agent_turns_started == []  # paused before turn 1
    session.step()
    while not any(e.type == "proactiveeval.turn_checked" for e in seen):
        await asyncio.sleep(0.01)
    for _ in range(20):
        await asyncio.sleep(0)
    assert agent_turns_started == [1]  # one turn, then it holds again
    session.play()
    await task
    assert agent_turns_started == [1, 2, 3] and fold(seen).termination.reason == "max_turns"


def embedded(participant: ScriptedParticipant) -> ScriptedParticipant:
    """A scripted seat standing in for the embedded model: one shared in-process instance."""
    participant.shared_instance = "local"
    return participant


def structured_calls(participant: ScriptedParticipant, schema_word: str) -> int:
    return sum(1 for r in participant.calls if schema_word in (r.messages[0]["content"] if r.messages else ""))


async def test_one_shared_instance_with_early_stop_generates_nothing_ahead_and_reuses_the_live_score() -> None:
    agent, judge = embedded(scripted_agent()), embedded(scripted_judge(reach_at=2))
    session = make_session(agent=agent, judge=judge, max_turns=6, live_judging=True, early_stop=True)
    events = await collect(session)
    record = fold(events)
    assert record.termination.reason == "target_reached"
    # the planning call plus one message per turn played: no turn-3 message generated ahead
    assert len([r for r in agent.calls if r.seat == "agent" and r.turn]) == 2
    assert not [e for e in events if e.type == "message_discarded"]
    guidance_calls = [r for r in judge.calls if "You grade how well a proactive assistant guided" in r.messages[0]["content"]]
    assert len(guidance_calls) == 2  # live scores after turns 1 and 2; the final one is turn 2's, not asked again
    assert record.section.guidance is not None and record.section.guidance.turn == 2 and not record.section.guidance.live
    assert record.section.guidance.overall == record.section.live_scores[-1].overall


async def test_separate_models_still_speculate_and_score_the_end_again() -> None:
    agent, judge = scripted_agent(), scripted_judge(reach_at=2)
    events = await collect(make_session(agent=agent, judge=judge, max_turns=6, live_judging=True))
    guidance_calls = [r for r in judge.calls if "You grade how well a proactive assistant guided" in r.messages[0]["content"]]
    assert len(guidance_calls) == 3  # live after turns 1 and 2, then the final score
    assert len([r for r in agent.calls if r.turn]) == 3  # turn 3 was generated ahead, then discarded
    assert [e for e in events if e.type == "message_discarded"]


async def test_early_stopping_is_off_by_default_with_the_embedded_judge_and_recorded() -> None:
    judge = embedded(scripted_judge(reach_at=1))
    record = fold(await collect(make_session(judge=judge, max_turns=3)))
    assert record.settings["early_stop"] is False
    assert record.termination.reason == "target_reached"  # the last check said so, but all turns ran
    assert [(m.role, m.turn) for m in record.messages][-1] == ("user", 3)
    other = fold(await collect(make_session(reach_at=1, max_turns=3)))
    assert other.settings["early_stop"] is True and len(other.messages) == 2
    kept_on = fold(await collect(make_session(judge=embedded(scripted_judge(reach_at=1)), max_turns=3, early_stop=True)))
    assert kept_on.settings["early_stop"] is True and len(kept_on.messages) == 2
