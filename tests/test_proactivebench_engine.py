"""The ProactiveBench engine: data, metrics, scripted and human sessions, settings, re-asks, export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REAL_TRACES, SAMPLE_DIRS
from engine_helpers import collect
from proactive_tui.core.events import parse_event
from proactive_tui.families.proactivebench.judges import (
    CandidatesReply, JudgeVerdict, ProposalReply, parse_verdict_text,
)
from proactive_tui.families.proactivebench import prompts
from proactive_tui.families.proactivebench.metrics import (
    Confusion, EventJudgement, Metrics, confusion_from_judgements, confusion_from_trace, metrics, metrics_by_split, show,
)
from proactive_tui.core.participants import HumanParticipant, LLMParticipant, ScriptedParticipant
from proactive_tui.families.proactivebench.record import metrics_by_split as record_metrics_by_split
from proactive_tui.families.proactivebench.protocol import ProactiveBenchSeats, ProactiveBenchSession, ProactiveBenchSettings
from proactive_tui.core.run_record import RunRecord, fold
from proactive_tui.envs import load_paths
from proactive_tui.llm.gateway import Gateway
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer

TEST_DATA = REAL_TRACES


def real_env(stem: str = "code_11"):
    env = load_paths([TEST_DATA]).get(f"proactivebench/{stem}")
    assert env is not None
    return env


def sample_env(stem: str = "coding_01"):
    return load_paths([SAMPLE_DIRS["proactivebench"]]).get(f"proactivebench/{stem}")


def event_text(request) -> str:
    """The newest event sentence in an agent request (upstream's STEP wrapper around its JSON)."""
    last = request.messages[-1]["content"]
    return json.loads(last.split('"Observation": "', 1)[1][:-2])["Event"]


def judge_input(request) -> tuple[list[dict], str | None]:
    """(observations, proposed task) from a judge request in upstream's reward-model layout."""
    data = json.loads(request.messages[-1]["content"])
    return data["Observations (Time Ascending)"], data["Proposed Task"]


def agent_proposing_on(indices: set[int], label: str = "scripted-agent") -> ScriptedParticipant:
    """Proposes 'task N' on the given 1-based event indices, null elsewhere."""

    def structured(request, schema):
        n = request.turn
        task = f"task {n}" if n in indices else "null"
        return {"Purpose": f"purpose {n}", "Thoughts": f"thoughts {n}", "Proactive Task": task,
                "Response": f"offer {n}" if n in indices else None}

    return ScriptedParticipant([], structured=structured, label=label)


def judge_accepting(rule) -> ScriptedParticipant:
    """`rule(index, task)` -> True to accept; the index is counted from the judge's observation list."""

    def structured(request, schema):
        observations, task = judge_input(request)
        index = len(observations)
        ok = rule(index, task)
        return JudgeVerdict(thought=f"judged {index}", judgement="accepted" if ok else "rejected")

    return ScriptedParticipant([], structured=structured, label="scripted-judge")


def session(env=None, agent=None, user=None, **settings) -> ProactiveBenchSession:
    return ProactiveBenchSession(env or real_env(), ProactiveBenchSeats(agent=agent or agent_proposing_on(set()),
                                                            user=user or judge_accepting(lambda i, t: True)),
                           ProactiveBenchSettings(**settings))


# -- data ----------------------------------------------------------------------------------------


def test_all_233_real_events_load_with_splits() -> None:
    envset = load_paths([TEST_DATA])
    assert not envset.problems
    traces = envset.filtered(family="proactivebench")
    assert len(traces) == 12
    assert sum(len(env.events) for env in traces) == 233
    code = envset.get("proactivebench/code_11")
    assert set(code.splits) == {"real_average", "real_coding"}
    assert code.events[0].observation.time == "1717377997.0"


# -- metrics ---------------------------------------------------------------------------------------


def test_metrics_from_a_hand_built_confusion() -> None:
    m = metrics(Confusion(tp=6, fp=2, tn=9, fn=3, proposals=8, accepted_proposals=6))
    assert m.recall == pytest.approx(6 / 9)
    assert m.precision == pytest.approx(0.75)
    assert m.accuracy == pytest.approx(15 / 20)
    assert m.false_alarm == pytest.approx(0.25)
    assert m.f1 == pytest.approx(2 * 0.75 * (6 / 9) / (0.75 + 6 / 9))
    assert m.f1 == pytest.approx(12 / 17)
    assert m.accept_rate == pytest.approx(0.75)
    assert m.as_upstream()["F1-Score"] == m.f1


def test_metrics_zero_division_gives_upstreams_zero_with_the_reason() -> None:
    """Upstream divides by (d + eps), so an empty denominator gives 0.0; ours too (the numbers
    agree with upstream's script), and `undefined` says why, so no display calls it measured.
    (This replaced "None, never 0": issue 13 asks for upstream's numbers.)"""
    empty = metrics(Confusion())
    assert empty.as_upstream() == {k: 0.0 for k in empty.as_upstream()}
    assert set(empty.undefined) == {"recall", "precision", "accuracy", "false_alarm", "f1", "accept_rate"}
    assert show(empty, "precision") == "0.00% (no proposals)" and show(empty, "accuracy") == "0.00% (nothing judged)"
    # never proposed: precision, false alarm, accept rate have nothing to divide; recall is a real 0
    silent = metrics(Confusion(tn=4, fn=2))
    assert silent.precision == silent.false_alarm == silent.accept_rate == 0.0
    assert set(silent.undefined) == {"precision", "false_alarm", "accept_rate", "f1"}
    assert silent.recall == 0.0 and silent.accuracy == pytest.approx(4 / 6) and silent.f1 == 0.0
    assert show(silent, "recall") == "0.00%" and show(silent, "f1", 1) == "0.0% (no proposals)"
    # nothing needed help and nothing was proposed: recall has nothing to divide either
    assert metrics(Confusion(tn=3)).undefined["recall"] == "no event needed help"
    assert metrics(Confusion(tn=3)).accuracy == 1.0
    # every proposal rejected and every need missed: both measured zeros, so F1 is a real 0
    wrong = metrics(Confusion(fp=2, fn=1, proposals=2))
    assert wrong.precision == 0.0 and wrong.recall == 0.0 and wrong.f1 == 0.0 and wrong.false_alarm == 1.0
    assert wrong.accept_rate == 0.0 and wrong.undefined == {} and show(wrong, "f1") == "0.00%"
    # records written before the rule hold None: shown as n/a
    assert show(Metrics(), "f1") == "n/a"


def test_confusion_from_judgements_counts_cells_and_skips() -> None:
    c = confusion_from_judgements([
        {"tasks": ["a"], "verdicts": ["accepted"]},                       # TP
        {"tasks": ["b"], "verdicts": ["rejected"]},                       # FP
        {"tasks": [], "verdicts": ["accepted"]},                          # TN
        {"tasks": [], "verdicts": ["rejected"]},                          # FN
        {"tasks": [], "verdicts": ["skipped"]},                           # not counted
        EventJudgement(tasks=["x", "y", "z"], verdicts=["rejected", "accepted", "rejected"]),  # FP, TP, FP
        EventJudgement(tasks=["x", "y"], verdicts=["skipped", "rejected"]),                     # FP (x not counted)
    ])
    # one cell per judged task, as upstream's calculate_scores counts
    assert (c.tp, c.fp, c.tn, c.fn, c.skipped) == (2, 4, 1, 1, 1)
    assert (c.proposals, c.accepted_proposals) == (6, 2)
    m = metrics(c)
    assert m.precision == pytest.approx(2 / 6) and m.accept_rate == m.precision


def test_confusion_from_upstream_judged_trace() -> None:
    trace = [
        {"observation": {"time": "1", "event": "a"}, "agent_response": ["help"], "judgement": [True]},
        {"observation": {"time": "2", "event": "b"}, "agent_response": [None], "judgement": [True]},
        {"observation": {"time": "3", "event": "c"}, "agent_response": [None], "judgement": [False]},
        {"observation": {"time": "4", "event": "d"}, "agent_response": ["x", "y", "z"], "judgement": [False, True, False]},
        {"observation": {"time": "5", "event": "e"}, "agent_response": [], "judgement": [True]},   # judged null
        {"observation": {"time": "6", "event": "f"}, "agent_response": [], "judgement": []},       # not counted
        {"observation": {"time": "7", "event": "g"}, "agent_response": {"candidate_task": []}, "task_status": False},
    ]
    per_candidate = confusion_from_trace(trace)  # upstream's calculate_scores
    assert (per_candidate.tp, per_candidate.fp, per_candidate.tn, per_candidate.fn) == (2, 2, 2, 1)
    assert (per_candidate.proposals, per_candidate.accepted_proposals) == (4, 2)
    assert per_candidate.skipped == 1  # run but not judged; the un-run event is left out


def test_metrics_by_split() -> None:
    per_trace = {"code_11": Confusion(tp=1, fn=1), "writing_11": Confusion(tn=2, fp=1, proposals=1)}
    splits = json.loads((TEST_DATA / "splits.json").read_text())
    totals = metrics_by_split(per_trace, splits)
    assert totals["real_coding"] == Confusion(tp=1, fn=1)
    assert totals["real_average"] == Confusion(tp=1, fn=1, tn=2, fp=1, proposals=1)


# -- tolerant parsing --------------------------------------------------------------------------------


def test_agent_reply_parsing_is_tolerant() -> None:
    r = ProposalReply.model_validate({"purpose": "p", "THOUGHTS": "t", "proactive_task": "null", "Response": "null"})
    assert r.tasks == [] and r.response is None
    # only None and "null" are null, as upstream's extrat_pred (issue 30): "" and "None" are written text
    r = ProposalReply.model_validate({"Purpose": "p", "Thoughts": "t", "Proactive Task": "", "Response": "None"})
    assert r.tasks == [""] and r.response == "None"
    assert ProposalReply.model_validate({"Purpose": "p", "Thoughts": "t", "Proactive Task": ["do x"], "Response": "r"}).tasks == ["do x"]
    # upstream reads only Proactive Task: a missing one is null, and no other key is needed
    # (this used to be a validation error and a re-ask; issue 13)
    assert ProposalReply.model_validate({"Purpose": "p", "Thoughts": "t", "Response": "r"}).tasks == []
    assert ProposalReply.model_validate({"Proactive Task": "do y"}).tasks == ["do y"]
    with pytest.raises(ValueError):
        ProposalReply.model_validate({"Proactive Task": ["one", "two"]})  # one candidate: not a list of several
    c = CandidatesReply.model_validate({"Purpose": "p", "Thoughts": "t", "Proactive Tasks": ["a", "null", "b"], "Response": "r"})
    assert c.tasks == ["a", "b"]
    assert CandidatesReply.model_validate({"Purpose": "p", "Thoughts": "t", "Proactive Task": "one", "Response": None}).tasks == ["one"]
    with pytest.raises(ValueError):
        CandidatesReply.model_validate({"Purpose": "p", "Thoughts": "t", "Proactive Task": ["1", "2", "3", "4"], "Response": None})
    assert "required" not in ProposalReply.model_json_schema()  # reading requires nothing
    schema = ProposalReply.asking_schema()  # a grammar-constrained model is still asked for all four
    assert schema["required"] == ["Purpose", "Thoughts", "Proactive Task", "Response"]
    assert list(schema["properties"]) == ["Purpose", "Thoughts", "Proactive Task", "Response"]
    assert ProposalReply.model_validate({"Purpose": "p", "Thoughts": "t", "Proactive Task": "x", "Response": "y"}).upstream_dict() == {
        "Purpose": "p", "Thoughts": "t", "Proactive Task": "x", "Response": "y"}


def test_human_verdict_parsing() -> None:
    assert parse_verdict_text("a").judgement == "accepted"
    assert parse_verdict_text(" Accept ").judgement == "accepted"
    v = parse_verdict_text("r too early")
    assert v.judgement == "rejected" and v.thought == "too early"
    assert parse_verdict_text("s").judgement == "skipped" and parse_verdict_text("ignore").judgement == "skipped"
    with pytest.raises(ValueError):
        parse_verdict_text("maybe")
    assert JudgeVerdict.model_validate({"thought": None, "judgement": "Accepted"}).judgement == "accepted"


# -- scripted sessions ---------------------------------------------------------------------------------


async def test_scripted_session_over_a_real_trace() -> None:
    env = real_env("code_11")
    proposing = {1, 3, 5, 8}
    agent = agent_proposing_on(proposing)
    # the judge accepts proposals on odd events and nulls on events 2..6
    judge = judge_accepting(lambda i, task: (i % 2 == 1) if task else 2 <= i <= 6)
    events = await collect(session(env, agent, judge))
    record = fold(events)
    assert record.termination.reason == "completed" and record.family == "proactivebench"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert all(parse_event(e.model_dump(mode="json")).type == e.type for e in events)  # every event round-trips
    section = record.section
    assert len(section.events) == 15 and section.trace == "code_11"
    assert set(section.splits) == {"real_average", "real_coding"}
    outcomes = [ev.outcome for ev in section.events]
    assert outcomes[:8] == ["TP", "TN", "TP", "TN", "TP", "TN", "FN", "FP"]
    c = section.confusion
    assert (c.tp, c.fp, c.tn, c.fn) == (3, 1, 3, 8)
    assert section.metrics == metrics(c)
    assert record.settings == {"retries": 0, "candidates": 1, "feedback": False, "max_events": None,
                               "agent_temperature": None}  # a scripted agent has no temperature
    assert set(record.seats) == {"agent", "user"} and record.mode == "watch"
    assert record.versions["prompts"].startswith("proposals-")
    # the agent sees every earlier event and its own earlier replies
    last = agent.calls[-1]
    assert len(last.messages) == 2 * 15 - 1
    assert "CheckName.rb" in json.loads(last.messages[0]["content"])["Event"]
    assert json.loads(last.messages[1]["content"]) == {
        "Purpose": "purpose 1", "Thoughts": "thoughts 1", "Proactive Task": "task 1", "Response": "offer 1"}
    # the judge sees the observations up to and including the current event
    observations, _ = judge_input(judge.calls[-1])
    assert observations == [e.observation.model_dump() for e in env.events[:15]]
    # running metrics after every event
    updates = [e for e in events if e.type == "proactivebench.proposal_metrics"]
    assert [u.index for u in updates] == list(range(1, 16))
    assert updates[0].confusion == Confusion(tp=1, proposals=1, accepted_proposals=1)


async def test_max_events_stops_early() -> None:
    record = fold(await collect(session(sample_env(), max_events=3)))
    assert len(record.section.events) == 3
    assert record.termination.reason == "completed" and "3 of 15" in record.termination.detail


async def test_feedback_reaches_the_agents_prompt_only_when_on() -> None:
    """Verdict feedback is the paper's ablation: on, the verdict is a note of its own before the
    next event (the event message keeps upstream's layout); off, the default since issue 13, the
    agent never sees it."""
    agent = agent_proposing_on({1})
    judge = judge_accepting(lambda i, task: False)  # rejects everything, with a reason
    await collect(session(sample_env(), agent, judge, max_events=3, feedback=True))
    second = agent.calls[1].messages
    assert "The user rejected your offer on the previous event: judged 1" in second[-2]["content"]
    assert second[-1]["content"].startswith('{"Instructions": ')
    third = agent.calls[2].messages
    assert "rejected your decision not to offer anything" in third[-2]["content"]
    assert "judged 1" in third[2]["content"]  # the notes stay in the history

    agent = agent_proposing_on({1})
    await collect(session(sample_env(), agent, judge_accepting(lambda i, t: False), max_events=3))
    assert all("The user rejected" not in m["content"] and "judged" not in m["content"]
               for call in agent.calls for m in call.messages)


async def test_retries_after_rejection() -> None:
    attempts: dict[int, int] = {}

    def agent_structured(request, schema):
        n = request.turn
        attempts[n] = attempts.get(n, 0) + 1
        return {"Purpose": "p", "Thoughts": "t", "Proactive Task": f"task {n} try {attempts[n]}", "Response": "r"}

    agent = ScriptedParticipant([], structured=agent_structured, label="agent")
    # rejects every first try; accepts a second try only on event 1
    judge = judge_accepting(lambda i, task: task is not None and "try 2" in task and i == 1)
    record = fold(await collect(session(sample_env(), agent, judge, max_events=2, retries=2)))
    ev1, ev2 = record.section.events
    assert [a.attempt for a in ev1.attempts] == [0, 1] and ev1.outcome == "TP"
    assert [a.tasks for a in ev1.attempts] == [["task 1 try 1"], ["task 1 try 2"]]
    assert [a.attempt for a in ev2.attempts] == [0, 1, 2] and ev2.outcome == "FP"  # out of retries
    retry_request = agent.calls[1]
    assert "The user rejected your offer" in retry_request.messages[-1]["content"]
    assert json.loads(retry_request.messages[-2]["content"])["Proactive Task"] == "task 1 try 1"
    # the event is scored on its final attempt
    assert record.section.confusion == Confusion(tp=1, fp=1, proposals=2, accepted_proposals=1)
    # with no retries a rejection is final
    record = fold(await collect(session(sample_env(), agent_proposing_on({1}), judge_accepting(lambda i, t: False), max_events=1)))
    assert len(record.section.events[0].attempts) == 1


async def test_three_candidates_accepted_if_any_one_is() -> None:
    def agent_structured(request, schema):
        assert schema is CandidatesReply
        n = request.turn
        return {"Purpose": "p", "Thoughts": "t", "Proactive Task": [f"e{n} first", f"e{n} second", f"e{n} third"],
                "Response": "r"}

    agent = ScriptedParticipant([], structured=agent_structured)
    judge = judge_accepting(lambda i, task: task == "e1 second")
    events = await collect(session(sample_env(), agent, judge, max_events=2, candidates=3))
    record = fold(events)
    ev1, ev2 = record.section.events
    assert [v.judgement for v in ev1.final.verdicts] == ["rejected", "accepted", "rejected"]
    assert [v.candidate for v in ev1.final.verdicts] == [0, 1, 2]
    assert ev1.outcome == "TP" and ev2.outcome == "FP"
    assert ev1.cells == ["FP", "TP", "FP"] and ev2.cells == ["FP", "FP", "FP"]
    c = record.section.confusion  # one cell per candidate, as upstream's calculate_scores
    assert (c.tp, c.fp, c.proposals, c.accepted_proposals) == (1, 5, 6, 1)
    assert record.section.metrics.precision == pytest.approx(1 / 6) and record.section.metrics.accept_rate == pytest.approx(1 / 6)
    assert "up to three" in agent.calls[0].system


async def test_human_verdicts_via_the_queue() -> None:
    human = HumanParticipant()
    s = session(sample_env(), agent_proposing_on({1, 2}), human, max_events=4)
    answers = iter(["a", "maybe", "r not now", "s", "reject"])
    seen = []
    async for event in s.events():
        seen.append(event)
        if event.type == "awaiting_human":
            assert event.seat == "user"
            human.submit(next(answers))
    record = fold(seen)
    assert record.mode == "play" and record.human_seats == ["user"]
    prompts = [e for e in seen if e.type == "awaiting_human"]
    assert any("not a verdict" in p.hint for p in prompts)  # 'maybe' was asked again
    assert "no offer (null)" in prompts[-1].hint
    outcomes = [(ev.judgement, ev.outcome) for ev in record.section.events]
    assert outcomes == [("accepted", "TP"), ("rejected", "FP"), ("skipped", None), ("rejected", "FN")]
    verdicts = [v for ev in record.section.events for v in ev.final.verdicts]
    assert verdicts[1].thought == "not now" and verdicts[0].by == "person" and verdicts[0].by_kind == "human"
    c = record.section.confusion
    assert (c.tp, c.fp, c.tn, c.fn, c.skipped) == (1, 1, 0, 1, 1)


async def test_person_stopping_ends_the_session() -> None:
    human = HumanParticipant()
    s = session(sample_env(), agent_proposing_on({1}), human)
    seen = []
    async for event in s.events():
        seen.append(event)
        if event.type == "awaiting_human":
            human.stop()
    assert fold(seen).termination.reason == "user_stopped"


# -- through the fake OpenAI server -----------------------------------------------------------------------


def agent_json(task: str | None = "Offer to write the loader test") -> str:
    return json.dumps({"Purpose": "working", "Thoughts": "they may need help", "Proactive Task": task, "Response": "Want me to?"})


async def test_unusable_agent_json_is_asked_again_with_the_same_messages() -> None:
    """As upstream's tenacity loop: an unreadable reply is asked for again with the messages
    unchanged (no re-ask text), and a reply without Purpose/Thoughts/Response is read, not re-asked
    (it used to be; issue 13)."""
    with FakeOpenAIServer() as server:
        server.script(
            "Sure! I think the user needs help.",                          # no JSON at all: asked again
            '```json\n{"Purpose": "p", "Thoughts": "t"}\n```',            # no Proactive Task: null, read
            json.dumps({"thought": "I was just starting", "judgement": "accepted"}),
        )
        settings = ModelSettings(model="openai/fake", api_base=server.base_url, max_retries=0)
        seats = ProactiveBenchSeats(agent=LLMParticipant(Gateway(), settings), user=LLMParticipant(Gateway(), settings))
        record = fold(await collect(ProactiveBenchSession(sample_env(), seats, ProactiveBenchSettings(max_events=1))))
        bodies = [r.body for r in server.requests]
    assert len(bodies) == 3
    assert bodies[1]["messages"] == bodies[0]["messages"]
    ev = record.section.events[0]
    assert ev.final.tasks == [] and ev.final.response is None and ev.outcome == "TN"
    assert ev.final.purpose == "p" and record.section.confusion.tn == 1 and record.section.confusion.skipped == 0
    assert bodies[0]["response_format"]["json_schema"]["name"] == "ProposalReply"  # decoding only
    assert bodies[2]["response_format"]["json_schema"]["name"] == "JudgeVerdict"
    assert record.totals.total_tokens > 0


async def test_unusable_agent_reply_skips_the_event_and_carries_it_forward() -> None:
    with FakeOpenAIServer() as server:
        server.script("nope", "still nope", "no JSON here either", agent_json(), json.dumps({"thought": "ok", "judgement": "accepted"}))
        settings = ModelSettings(model="openai/fake", api_base=server.base_url, max_retries=0)
        seats = ProactiveBenchSeats(agent=LLMParticipant(Gateway(), settings), user=LLMParticipant(Gateway(), settings))
        record = fold(await collect(ProactiveBenchSession(sample_env(), seats, ProactiveBenchSettings(max_events=2))))
        second_agent_call = server.requests[3].body["messages"]
    ev1, ev2 = record.section.events
    assert ev1.outcome is None and ev1.judgement == "skipped" and ev2.outcome == "TP"
    assert record.section.confusion.skipped == 1 and any("not counted" in e for e in record.errors)
    # event 1 had no reply (upstream skips it too); it stays in the history as an earlier event:
    # plain {"Time", "Event"}, with no reply after it; only event 2 is wrapped
    env = sample_env()
    first, second = (e.observation for e in env.events[:2])
    assert second_agent_call[1:] == [
        {"role": "user", "content": json.dumps({"Time": first.time, "Event": first.event})},
        {"role": "user", "content": prompts.event_message(second.time, second.event)},
    ]


# -- export -----------------------------------------------------------------------------------------------


async def test_export_round_trip_matches_the_run_record(tmp_path: Path) -> None:
    from proactive_tui.families.proactivebench.export import judged_trace
    from proactive_tui.export.registry import EXPORTERS, export

    env = real_env("writing_11")
    agent = agent_proposing_on({1, 2, 5, 9, 13})
    judge = judge_accepting(lambda i, task: (i in (1, 9)) if task else i % 3 != 0)
    record = fold(await collect(session(env, agent, judge, max_events=14)))
    record = RunRecord.model_validate_json(record.model_dump_json())  # as read back from a file
    assert "proactivebench" in EXPORTERS
    written = export([record], "proactivebench", tmp_path / "out")
    assert [p.name for p in written] == ["writing_11.json", "splits.json", "proactivebench_sessions.json"]
    manifest = json.loads((tmp_path / "out" / "proactivebench_sessions.json").read_text())
    assert manifest["writing_11.json"]["session"] == record.id
    assert manifest["writing_11.json"]["protocol"] == "upstream's evaluation"
    data = json.loads((tmp_path / "out" / "writing_11.json").read_text())
    assert len(data) == 14
    first = data[0]
    assert first["agent_response"] == ["task 1"] and first["judgement"] == [True]
    assert first["other_infomation"] == {"Purpose": "purpose 1", "Thoughts": "thoughts 1", "Response": "offer 1"}
    assert data[2]["agent_response"] == [None] and data[2]["judgement"] == [False]
    assert first["observation"] == env.events[0].observation.model_dump()
    assert "task_status" in first  # upstream's annotations are kept
    assert judged_trace(record) == data
    # reload the exported folder as environments; the metrics function gives the record's numbers
    reloaded = load_paths([tmp_path / "out"])
    assert not reloaded.problems
    trace = reloaded.get("proactivebench/writing_11")
    assert len(trace.events) == 14 and set(trace.splits) == {"real_average", "real_writing"}
    confusion = confusion_from_trace(trace.events)
    assert confusion == record.section.confusion
    assert metrics(confusion) == record.section.metrics


async def test_export_three_candidates_and_skips(tmp_path: Path) -> None:
    from proactive_tui.export.registry import export

    offers = {1: ["x", "y"], 4: ["p", "q"]}

    def agent_structured(request, schema):
        return {"Purpose": "p", "Thoughts": "t", "Proactive Task": offers.get(request.turn), "Response": "r"}

    human = HumanParticipant()
    s = session(sample_env(), ScriptedParticipant([], structured=agent_structured), human, max_events=4, candidates=3)
    answers = iter(["r", "a", "s", "a", "s", "a"])
    events = []
    async for event in s.events():
        events.append(event)
        if event.type == "awaiting_human" and "not a verdict" not in event.hint:
            human.submit(next(answers))
    record = fold(events)
    export([record], "proactivebench", tmp_path)
    data = json.loads((tmp_path / "coding_01.json").read_text())
    assert data[0]["agent_response"] == ["x", "y"] and data[0]["judgement"] == [False, True]
    # a skipped null keeps what the agent answered, with no verdict: not counted
    assert data[1]["agent_response"] == [None] and data[1]["judgement"] == []
    assert data[2]["agent_response"] == [None] and data[2]["judgement"] == [True]
    # a skipped candidate is kept, after the judged one, unpaired (upstream zips the two lists)
    assert data[3]["agent_response"] == ["q", "p"] and data[3]["judgement"] == [True]
    assert confusion_from_trace(data) == record.section.confusion


async def test_metrics_by_split_over_records() -> None:
    r1 = fold(await collect(session(real_env("code_11"), agent_proposing_on({1}), max_events=2)))
    r2 = fold(await collect(session(real_env("writing_12"), agent_proposing_on(set()), max_events=3)))
    totals = record_metrics_by_split([r1, r2])
    assert totals["real_coding"].confusion == Confusion(tp=1, tn=1, proposals=1, accepted_proposals=1)
    assert totals["real_writing"].confusion == Confusion(tn=3)
    both = totals["real_average"]
    assert both.confusion == Confusion(tp=1, tn=4, proposals=1, accepted_proposals=1) and both.metrics.accuracy == 1.0
    assert both.traces == ["code_11", "writing_12"] and both.events == 5 and both.ablations == {}


async def test_stop_keeps_the_events_judged_so_far() -> None:
    import asyncio

    agent = agent_proposing_on({1, 2, 3})
    agent.delay = 0.05
    s = session(sample_env(), agent)
    seen = []
    async for event in s.events():
        seen.append(event)
        if event.type == "proactivebench.proposal_metrics" and event.index == 2:
            s.stop()
    record = fold(seen)
    assert record.termination.reason == "cancelled"
    assert [ev.outcome for ev in record.section.events[:2]] == ["TP", "TP"]
    assert record.section.confusion.tp == 2
    await asyncio.sleep(0)


def test_a_person_in_the_agent_seat_types_the_task() -> None:
    from proactive_tui.families.proactivebench.protocol import parse_agent_text

    assert parse_agent_text("Offer to fix the KeyError").tasks == ["Offer to fix the KeyError"]
    assert parse_agent_text("null").tasks == [] and parse_agent_text("-").tasks == []
    assert parse_agent_text("a | b | c | d", candidates=3).tasks == ["a", "b", "c"]
    assert parse_agent_text('{"Purpose": "p", "Thoughts": "t", "Proactive Task": "x", "Response": "r"}').purpose == "p"
    with pytest.raises(ValueError):
        parse_agent_text("   ")
