"""ProactiveBench against upstream's own code: the benchmark's numbers are the benchmark's (issue 13).

Upstream is thunlp/ProactiveAgent (Apache-2.0). The functions marked "upstream" below are faithful
copies or re-implementations of its evaluation code, kept here (never read from anywhere at test
time) so each comparison is against what upstream does, not against what we think it does:

- `extrat_pred` and `STEP` from `eval/script.py` (how a reply is read; the agent's messages),
- `SYSTEM` and `format_reward_instruction` from `eval/reward_model_template.py` (the judge's input),
- `calculate_scores` and the split loop of `main` from `eval/calculate_agent_performance.py`.

Copyright for those parts stays with the upstream authors; they are used under the Apache License
2.0 (see proactive_tui/families/proactivebench/data/LICENSE and NOTICE.md).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_TRACES
from engine_helpers import collect
from proactive_tui.core.participants import ScriptedParticipant
from proactive_tui.core.run_record import RunRecord, fold
from proactive_tui.core.spec import SessionSpec, build_session
from proactive_tui.envs import load_paths
from proactive_tui.export import load_formats
from proactive_tui.export.registry import export
from proactive_tui.families.proactivebench import prompts
from proactive_tui.families.proactivebench.export import judged_trace
from proactive_tui.families.proactivebench.judges import read_agent_reply
from proactive_tui.families.proactivebench.metrics import METRIC_LABELS, Confusion, confusion_from_trace, metrics
from proactive_tui.families.proactivebench.record import metrics_by_split
from proactive_tui.families.proactivebench.report import report, scores
from proactive_tui.families.proactivebench.settings import ProactiveBenchSettings
from proactive_tui.llm.gateway import Gateway
from proactive_tui.llm.settings import resolve_roles
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from test_proactivebench_engine import agent_proposing_on, judge_accepting, session

# ---------------------------------------------------------------------------------------------
# Upstream, re-implemented (thunlp/ProactiveAgent, Apache-2.0)
# ---------------------------------------------------------------------------------------------

# eval/script.py
UPSTREAM_STEP = json.dumps({
    "Instructions": "Now analyze the history events and provide a task if you think the user needs your help.",
    "Observation": "[placeholder]"
    })


def upstream_extrat_pred(s):  # eval/script.py, verbatim
    if '```json' in s:
        s = re.findall(r'```json\n(.*?)\n```', s, re.DOTALL)[0]

    ret = json.loads(s)
    if ret.get("Proactive Task", None) is None:
        ret["Proactive Task"] = None
    elif ret.get("Proactive Task") == "null":
        ret["Proactive Task"] = None

    if ret.get("Response", None) is not None and ret.get("Response") == "null":
        ret["Response"] = None
    return ret


def upstream_agent_messages(events: list[dict], replies: list[str]) -> list[dict]:
    """The messages `get_trace` in eval/script.py has built after answering `events` with
    `replies` and appending the next event, system prompt left out (ours is our own)."""
    messages: list[dict] = []
    for idx, event in enumerate(events):
        raw_event = event["observation"]
        event_filtered = {"Time": raw_event["time"], "Event": raw_event["event"]}
        query_prompt = UPSTREAM_STEP.replace("[placeholder]", json.dumps(event_filtered))
        messages.append({"role": "user", "content": query_prompt})
        if idx == len(replies):
            break
        result = upstream_extrat_pred(replies[idx])
        messages.append({"role": "assistant", "content": json.dumps(result)})
        messages[-2]["content"] = json.dumps(event_filtered)
    return messages


# eval/reward_model_template.py
UPSTREAM_SYSTEM = '''<Task>
Evaluate the task proposed by the proactive assistant as the user.
</Task>

<Rule>
0. Analyze the current observation to understand your current situation and requirements.
1. If the proposed task is `null` (indicating no task is proposed under the current observation), follow these steps:
   - Accept the `null` task if you believe there is no need for a task.
   - Reject the `null` task if you believe a task is needed.
2. Minimize interruptions from the assistant by only accepting tasks that are valuable.
3. Evaluate the current observation and make a judgment on the proposed task accordingly.
</Rule>

<Format>
You should answer with following JSON format:
{
    "thought": "Give your thoughts first, then provide the judgement of the task.",
    "judgement": "accepted or rejected"
}
</Format>'''


def upstream_format_reward_instruction(obs: list[dict], pred_task: str) -> list[dict]:
    inst_dict = {
        "Observations (Time Ascending)": obs,
        "Proposed Task": pred_task,
        "Instruction": "Now give your judgement. You should complete the reasoning process in first person."
    }

    return [
        {"role": "system", "content": UPSTREAM_SYSTEM},
        {"role": "user", "content": json.dumps(inst_dict, sort_keys=False, ensure_ascii=False, indent=4)}
    ]


# eval/calculate_agent_performance.py, verbatim
def upstream_calculate_scores(event_trace: list[dict], eps=1e-8) -> list[int]:

    TP = 0
    TN = 0
    FP = 0
    FN = 0
    tasks_proposed = 0
    tasks_accepted = 0
    for event in event_trace:
        if len(event.get("agent_response", [])) > 0:
            for pred, judge in zip(event["agent_response"], event["judgement"]):
                if pred is not None:
                    tasks_proposed += 1
                    if judge:
                        tasks_accepted += 1
                        TP += 1
                    else:
                        FP += 1
                else:
                    if judge:
                        TN += 1
                    else:
                        FN += 1
    # turn based
    Recall = TP / (TP + FN + eps)
    Precision = TP / (TP + FP + eps)
    Accuracy = (TP + TN) / (TP + TN + FP + FN + eps)
    FA = FP / (TP + FP + eps)
    # single task based
    Accept = tasks_accepted / (tasks_proposed + eps)

    return {
        "Recall": Recall,
        "Precision": Precision,
        "Accuracy": Accuracy,
        "False-Alarm": FA,
        "F1-Score": 2 * (Precision * Recall) / (Precision + Recall + 1e-8),
        "Accept Rate": Accept,
        "Total Events": len(event_trace),
    }


def upstream_main(in_dir: Path, splits_path: Path) -> list[dict]:
    """`main` of calculate_agent_performance.py without pandas: one row per split whose files
    all exist, each split's files concatenated and scored."""
    splits: dict = json.load(fp=open(splits_path))
    results = []
    for split_name, split_cfg in splits.items():
        files = [os.path.join(in_dir, f) for f in split_cfg["files"]]
        datas = []
        valid_set = True
        for file in files:
            try:
                with open(file, "r") as f:
                    data = json.load(f)
                    datas.extend(data)
            except Exception:
                valid_set = False
                break
        if not valid_set:
            continue
        results.append({"Category": split_name, **upstream_calculate_scores(datas)})
    return results


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

UPSTREAM_COLUMNS = {"recall": "Recall", "precision": "Precision", "accuracy": "Accuracy",
                    "false_alarm": "False-Alarm", "f1": "F1-Score", "accept_rate": "Accept Rate"}
SPLITS_JSON = REAL_TRACES / "splits.json"
"""Upstream's dataset/test_data/splits.json, shipped unmodified."""


def raw_trace(stem: str) -> list[dict]:
    return json.loads((REAL_TRACES / f"{stem}.json").read_text(encoding="utf-8"))


def real_env(stem: str):
    env = load_paths([REAL_TRACES]).get(f"proactivebench/{stem}")
    assert env is not None
    return env


def assert_same_numbers(ours, upstream: dict) -> None:
    """Our metrics equal upstream's up to its eps (1e-8 in every denominator)."""
    for key, column in UPSTREAM_COLUMNS.items():
        assert getattr(ours, key) == pytest.approx(upstream[column], abs=1e-6), key


def displayed(section_blocks) -> dict[str, str]:
    """measure -> the value the report's Metrics table shows."""
    table = next(b for b in section_blocks if getattr(b, "title", "") == "Metrics")
    return {row[0]: row[1] for row in table.rows}


def assert_displayed_as_upstream(record: RunRecord, upstream: dict) -> None:
    """The report's numbers and the headline scores read as upstream's numbers, to the digit."""
    (scores_section,) = [s for s in report(record) if s.id == "proactivebench.metrics"]
    shown = displayed(scores_section.blocks)
    score_by_name = {s.name: s for s in scores(record)}
    for key, label in METRIC_LABELS:
        want = f"{100 * upstream[UPSTREAM_COLUMNS[key]]:.2f}%"
        assert shown[label].split(" ")[0] == want, label
        assert score_by_name[key].display.split(" ")[0] == f"{100 * upstream[UPSTREAM_COLUMNS[key]]:.1f}%", key


def fake_responder(agent_reply, judge_rule):
    """Agent: `agent_reply(n)` (n = the newest event's 1-based index, counted from the event
    messages); judge: accepts when `judge_rule(n, task)`, with a reason naming the event."""

    def responder(body: dict) -> str:
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
        if name == "JudgeVerdict":
            data = json.loads(body["messages"][-1]["content"])
            n = len(data["Observations (Time Ascending)"])
            ok = judge_rule(n, data["Proposed Task"])
            return json.dumps({"thought": f"REASON-{n}-{'yes' if ok else 'no'}", "judgement": "accepted" if ok else "rejected"})
        n = sum(1 for m in body["messages"] if m["role"] == "user" and m["content"].startswith(('{"Time"', '{"Instructions"')))
        return agent_reply(n)

    return responder


async def run_through_server(server: FakeOpenAIServer, env, **settings) -> RunRecord:
    """A session as `run` builds it (the family's builder, real gateway, litellm to the fake server)."""
    roles = resolve_roles(cli={"agent": {"model": "openai/agent-m", "api_base": server.base_url, "max_retries": 0},
                               "user": {"model": "openai/judge-m", "api_base": server.base_url, "max_retries": 0}})
    spec = SessionSpec(env_id=env.id, roles=roles, seats={"agent": "model", "user": "model"},
                       settings=ProactiveBenchSettings(**settings).model_dump())
    record = fold(await collect(build_session(spec, env, gateway=Gateway())))
    return RunRecord.model_validate_json(record.model_dump_json())


def bodies(server: FakeOpenAIServer, schema: str) -> list[dict]:
    return [r.body for r in server.requests
            if r.method == "POST" and (r.body.get("response_format") or {}).get("json_schema", {}).get("name") == schema]


# ---------------------------------------------------------------------------------------------
# 2. replies read as upstream reads them
# ---------------------------------------------------------------------------------------------

UPSTREAM_VARIANTS = {
    "plain": '{"Purpose": "p", "Thoughts": "t", "Proactive Task": "Fix the test", "Response": "Shall I?"}',
    "fenced": 'Here you go:\n```json\n{"Purpose": "p", "Thoughts": "t", "Proactive Task": "Fix the test", "Response": "r"}\n```\nDone.',
    "null string": '{"Purpose": "p", "Thoughts": "t", "Proactive Task": "null", "Response": "null"}',
    "JSON null": '{"Purpose": "p", "Thoughts": "t", "Proactive Task": null, "Response": null}',
    "missing task": '{"Purpose": "p", "Thoughts": "t", "Response": "null"}',
    "only the task": '{"Proactive Task": "Fix the test"}',
    "missing Response": '{"Purpose": "p", "Proactive Task": "Fix the test"}',
    # issue 30: only None and "null" are "no proposal" upstream; every other spelling is a task
    "None string": '{"Purpose": "p", "Thoughts": "t", "Proactive Task": "None", "Response": "None"}',
    "none string": '{"Purpose": "p", "Proactive Task": "none"}',
    "empty string": '{"Purpose": "p", "Proactive Task": ""}',
    "no proposal words": '{"Thoughts": "t", "Proactive Task": "no proposal"}',
    "extra key": '{"Proactive Task": "Fix the test", "Confidence": 0.9, "Response": "r"}',
    "fenced null": '```json\n{"Thoughts": "they are fine", "Proactive Task": "null"}\n```',
}


@pytest.mark.parametrize("name", list(UPSTREAM_VARIANTS))
def test_a_reply_is_read_as_upstreams_extrat_pred_reads_it(name: str) -> None:
    text = UPSTREAM_VARIANTS[name]
    upstream = upstream_extrat_pred(text)
    reading = read_agent_reply(text)
    task = upstream["Proactive Task"]
    assert reading.reply.tasks == ([] if task is None else [task])
    # the parsed object itself, key order included: it is what goes back into the history
    assert list(reading.data.items()) == list(upstream.items())
    assert prompts.reply_message(reading.data) == json.dumps(upstream)


OUR_EXTRAS = {
    # text: the task we read (upstream's extrat_pred would raise, or read these as a task)
    '{"proactive_task": "Fix it", "purpose": "p"}': "Fix it",         # key spelling
    '```\n{"Proactive Task": "Fix it"}\n```': "Fix it",                # a fence without "json"
    'Sure! {"Proactive Task": "Fix it"} hope that helps': "Fix it",   # chatter around the JSON
}


@pytest.mark.parametrize("text", list(OUR_EXTRAS))
def test_our_tolerance_on_top_of_upstreams_reading(text: str) -> None:
    want = OUR_EXTRAS[text]
    assert read_agent_reply(text).reply.tasks == ([] if want is None else [want])


async def test_replies_without_the_other_keys_are_counted_not_reasked() -> None:
    """The old behaviour re-asked such replies and then dropped the events ("0 events counted, 4
    skipped"); upstream counts them, and so do we, each with exactly one agent call."""
    replies = {1: UPSTREAM_VARIANTS["missing task"], 2: UPSTREAM_VARIANTS["only the task"],
               3: UPSTREAM_VARIANTS["JSON null"], 4: UPSTREAM_VARIANTS["fenced null"]}
    with FakeOpenAIServer(responder=fake_responder(replies.get, lambda n, task: True)) as server:
        record = await run_through_server(server, real_env("code_11"), max_events=4)
        agent_calls = bodies(server, "ProposalReply")
    c = record.section.confusion
    assert (c.judged, c.skipped) == (4, 0) and len(agent_calls) == 4
    assert [ev.final.tasks for ev in record.section.events] == [[], ["Fix the test"], [], []]
    assert (c.tp, c.tn) == (1, 3)


@pytest.mark.parametrize("spelling", ["None", "none", "", "no proposal", "no task", "NULL", " null"])
def test_only_none_and_the_string_null_mean_no_proposal(spelling: str) -> None:
    """Issue 30: upstream's `extrat_pred` nulls only None and "null"; any other spelling is a
    proposal, and `calculate_scores` counts it as one (`pred is not None`)."""
    text = json.dumps({"Purpose": "p", "Proactive Task": spelling})
    assert upstream_extrat_pred(text)["Proactive Task"] == spelling
    assert read_agent_reply(text).reply.tasks == [spelling]
    for none in ('{"Purpose": "p"}', '{"Purpose": "p", "Proactive Task": null}', '{"Purpose": "p", "Proactive Task": "null"}'):
        assert read_agent_reply(none).reply.tasks == []
    # an upstream trace: a string prediction is a proposal, whatever it says
    trace = [{"agent_response": [spelling], "judgement": [True]}, {"agent_response": [None], "judgement": [True]}]
    assert confusion_from_trace(trace) == Confusion(tp=1, tn=1, proposals=1, accepted_proposals=1)
    assert upstream_calculate_scores(trace)["Accept Rate"] == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("text", ['{"foo": 1}', "{}", '{"Task": "Fix it", "answer": null}'])
def test_a_reply_with_none_of_the_expected_keys_is_a_format_error(text: str) -> None:
    """Issue 30: such a reply is not "stayed quiet" (upstream's `ret.get` default would make it
    one): reading it fails, naming what is wrong."""
    from proactive_tui.families.proactivebench.judges import AgentFormatError

    with pytest.raises(AgentFormatError, match="none of the expected keys"):
        read_agent_reply(text)


async def test_a_format_error_is_recorded_reported_and_not_counted() -> None:
    """The reply is asked for again (upstream's retry), then the event is left uncounted with the
    reason in the record's event, its errors and the report, never scored as a null proposal."""
    replies = {1: UPSTREAM_VARIANTS["plain"], 2: '{"foo": 1}', 3: UPSTREAM_VARIANTS["JSON null"]}
    with FakeOpenAIServer(responder=fake_responder(replies.get, lambda n, task: True)) as server:
        record = await run_through_server(server, real_env("code_11"), max_events=3)
        agent_calls = bodies(server, "ProposalReply")
    assert len(agent_calls) == 1 + 3 + 1
    c = record.section.confusion
    assert (c.judged, c.skipped, c.tp, c.tn) == (2, 1, 1, 1)
    second = record.section.events[1]
    assert second.attempts == [] and second.outcome is None
    assert "agent format error" in second.format_error and "none of the expected keys" in second.format_error
    assert any("agent format error" in e for e in record.errors)
    trace = next(s for s in report(record) if s.id == "proactivebench.trace")
    lines = [getattr(b, "text", "") for b in trace.blocks]
    assert any(line.startswith("= skipped (not counted): ") and "none of the expected keys" in line for line in lines)
    speeches = [b.text for b in trace.blocks if type(b).__name__ == "Speech"]
    assert speeches == ["proposes: Fix the test", "stays quiet (null)"]  # event 2 has no reply to show


# ---------------------------------------------------------------------------------------------
# 4. the agent's messages: only the newest event wrapped, replies as parsed; temperature
# ---------------------------------------------------------------------------------------------

AGENT_REPLIES = {
    1: '```json\n{"Purpose": "starting", "Thoughts": "nothing yet", "Proactive Task": "null", "Response": "null"}\n```',
    2: '{"Thoughts": "é — unicode", "Proactive Task": "Review CheckName.rb"}',
    3: '{"Purpose": "p", "Thoughts": "t", "Proactive Task": null, "Response": null}',
    4: '{"Proactive Task": "Write a test"}',
}


async def test_only_the_newest_event_is_wrapped_as_upstream_builds_the_messages() -> None:
    with FakeOpenAIServer(responder=fake_responder(AGENT_REPLIES.get, lambda n, task: n != 2)) as server:
        record = await run_through_server(server, real_env("code_11"), max_events=4)
        agent_calls = bodies(server, "ProposalReply")
    events = raw_trace("code_11")
    assert len(agent_calls) == 4
    for n, body in enumerate(agent_calls, 1):
        replies = [AGENT_REPLIES[k] for k in range(1, n)]
        assert body["messages"][0]["role"] == "system"  # our own system prompt
        assert body["messages"][1:] == upstream_agent_messages(events[:n], replies), f"event {n}"
    # the newest message, byte for byte as script.py makes it (its placeholder sits inside quotes)
    newest = agent_calls[-1]["messages"][-1]["content"]
    obs = events[3]["observation"]
    assert newest == UPSTREAM_STEP.replace("[placeholder]", json.dumps({"Time": obs["time"], "Event": obs["event"]}))
    assert sum(m["content"].startswith('{"Instructions"') for m in agent_calls[-1]["messages"]) == 1
    # upstream's evaluation temperature for the agent (0.5 on every attempt), the judge at 0.0
    assert {b["temperature"] for b in agent_calls} == {0.5}
    assert {b["temperature"] for b in bodies(server, "JudgeVerdict")} == {0.0}
    assert record.settings["agent_temperature"] == 0.5 and record.models["agent"]["temperature"] == 0.5
    assert record.section.events[1].outcome == "FP"


async def test_a_chosen_agent_temperature_wins_and_is_recorded() -> None:
    with FakeOpenAIServer(responder=fake_responder(lambda n: AGENT_REPLIES[1], lambda n, task: True)) as server:
        record = await run_through_server(server, real_env("code_11"), max_events=1, agent_temperature=0.2)
        agent_calls = bodies(server, "ProposalReply")
    assert [b["temperature"] for b in agent_calls] == [0.2]
    assert record.settings["agent_temperature"] == 0.2 and record.models["agent"]["temperature"] == 0.2
    # the agent model's own temperature (config or environment) is a choice too
    roles = resolve_roles(cli={"agent": {"model": "openai/a", "temperature": 0.9}})
    spec = SessionSpec(env_id="proactivebench/code_11", roles=roles, seats={"agent": "model", "user": "model"})
    built = build_session(spec, real_env("code_11"), gateway=Gateway())
    assert built.settings.agent_temperature == 0.9 and built.seats.agent.settings.temperature == 0.9


# ---------------------------------------------------------------------------------------------
# 1. feedback: off by default (upstream's evaluation), labelled when on
# ---------------------------------------------------------------------------------------------

async def test_feedback_is_off_by_default_so_a_rejection_never_reaches_the_agent() -> None:
    assert ProactiveBenchSettings().feedback is False
    with FakeOpenAIServer(responder=fake_responder(lambda n: AGENT_REPLIES[4], lambda n, task: False)) as server:
        record = await run_through_server(server, real_env("code_11"), max_events=3)
        agent_calls = bodies(server, "ProposalReply")
    assert [ev.outcome for ev in record.section.events] == ["FP", "FP", "FP"]
    later = json.dumps(agent_calls[1:])
    assert "REASON-" not in later and "rejected" not in later.lower()
    assert record.settings["feedback"] is False
    assert not [line for s in report(record) for b in s.blocks for line in [getattr(b, "text", "")] if "ablation" in line]


async def test_feedback_on_is_the_labelled_ablation_wherever_its_numbers_are_shown(tmp_path: Path) -> None:
    from proactive_tui.families.proactivebench import family

    flags = {f.flag: f.kwargs.get("help", "") for f in family.run_flags}
    assert "ablation" in flags["--feedback"] and "64.60 -> 56.00" in flags["--feedback"]
    with FakeOpenAIServer(responder=fake_responder(lambda n: AGENT_REPLIES[4], lambda n, task: False)) as server:
        record = await run_through_server(server, real_env("code_11"), max_events=2, feedback=True)
        agent_calls = bodies(server, "ProposalReply")
    assert any("REASON-1-no" in m["content"] for m in agent_calls[1]["messages"])  # the ablation does feed it back
    protocol = next(b for s in report(record) if s.id == "proactivebench.metrics" for b in s.blocks
                    if getattr(b, "label", "") == "Protocol:")
    assert "verdict feedback on (the paper's ablation)" in protocol.text
    headline = next(s for s in scores(record) if s.headline)
    assert headline.display.endswith("[feedback]")
    load_formats()
    export([record], "proactivebench", tmp_path)
    manifest = json.loads((tmp_path / "proactivebench_sessions.json").read_text())
    assert manifest["code_11.json"]["protocol"].startswith("verdict feedback on (the paper's ablation)")
    assert manifest["code_11.json"]["agent_temperature"] == 0.5


# ---------------------------------------------------------------------------------------------
# 3. the judge's input: format_reward_instruction, byte for byte
# ---------------------------------------------------------------------------------------------

async def test_the_judge_sees_format_reward_instruction_byte_for_byte() -> None:
    with FakeOpenAIServer(responder=fake_responder(AGENT_REPLIES.get, lambda n, task: True)) as server:
        await run_through_server(server, real_env("code_11"), max_events=4)
        judge_calls = bodies(server, "JudgeVerdict")
    events = raw_trace("code_11")
    tasks = [None, "Review CheckName.rb", None, "Write a test"]
    assert len(judge_calls) == 4
    for n, (body, task) in enumerate(zip(judge_calls, tasks), 1):
        want = upstream_format_reward_instruction([e["observation"] for e in events[:n]], task)
        assert body["messages"] == want, f"event {n}"
        assert [m["content"].encode() for m in body["messages"]] == [m["content"].encode() for m in want]


async def test_three_candidates_are_judged_one_by_one_in_upstreams_layout() -> None:
    def agent(n):
        return json.dumps({"Proactive Task": [f"e{n} a", f"e{n} b", f"e{n} c"]})

    with FakeOpenAIServer(responder=fake_responder(agent, lambda n, task: task.endswith("b"))) as server:
        await run_through_server(server, real_env("writing_11"), max_events=2, candidates=3)
        judge_calls = bodies(server, "JudgeVerdict")
    events = raw_trace("writing_11")
    want = [upstream_format_reward_instruction([e["observation"] for e in events[:n]], f"e{n} {c}")
            for n in (1, 2) for c in "abc"]
    assert sorted(json.dumps(b["messages"]) for b in judge_calls) == sorted(json.dumps(w) for w in want)


async def test_the_reward_judge_check_sends_the_same_layout(tmp_path: Path) -> None:
    from conftest import REWARD_DATA
    from proactive_tui.core.participants import LLMParticipant
    from proactive_tui.families.proactivebench.reward_check import load_items, run_check
    from proactive_tui.llm.settings import ModelSettings

    rows = [json.loads(line) for line in REWARD_DATA.read_text(encoding="utf-8").splitlines()[:3]]
    with FakeOpenAIServer(responder=fake_responder(lambda n: "{}", lambda n, task: task is not None)) as server:
        judge = LLMParticipant(Gateway(), ModelSettings(model="openai/rm", api_base=server.base_url, max_retries=0))
        rep = await run_check(judge, load_items(REWARD_DATA, limit=3), concurrency=1)
        sent = sorted(json.dumps(r.body["messages"]) for r in server.requests if r.method == "POST")
    assert sent == sorted(json.dumps(upstream_format_reward_instruction(r["obs"], r["pred_task"])) for r in rows)
    assert [r.judge for r in rep.results] == [r["pred_task"] is not None for r in rows]


# ---------------------------------------------------------------------------------------------
# 5. three candidates counted per candidate, as calculate_scores
# ---------------------------------------------------------------------------------------------

async def test_three_candidates_give_upstreams_numbers_live_in_the_report_and_in_the_export(tmp_path: Path) -> None:
    offers = {1: ["a1", "b1", "c1"], 2: ["a2", "b2"], 3: None, 4: ["a4", "b4", "c4"], 5: None, 6: ["a6"]}
    accepted = {"b1", "a2", "b2", "a4", "a6"}

    def agent_structured(request, schema):
        return {"Purpose": "p", "Thoughts": "t", "Proactive Task": offers[request.turn], "Response": "r"}

    judge = judge_accepting(lambda i, task: task in accepted if task else i == 3)
    events = await collect(session(real_env("code_12"), ScriptedParticipant([], structured=agent_structured), judge,
                                   max_events=6, candidates=3))
    record = RunRecord.model_validate_json(fold(events).model_dump_json())
    load_formats()
    export([record], "proactivebench", tmp_path)
    trace = json.loads((tmp_path / "code_12.json").read_text(encoding="utf-8"))
    upstream = upstream_calculate_scores(trace)
    live = [e for e in events if e.type == "proactivebench.proposal_metrics"][-1]
    c = record.section.confusion
    # 9 tasks judged: TP 5 (b1, a2, b2, a4, a6), FP 4 (a1, c1, b4, c4); null: TN 1 (event 3), FN 1 (event 5)
    assert (c.tp, c.fp, c.tn, c.fn, c.proposals) == (5, 4, 1, 1, 9)
    assert live.confusion == c and live.metrics == record.section.metrics
    assert_same_numbers(record.section.metrics, upstream)
    assert_displayed_as_upstream(record, upstream)
    assert f"{100 * upstream['F1-Score']:.2f}%" == "66.67%"
    # what counting one cell per event (accepted if any candidate was) said before issue 13
    by_event = Confusion()
    for ev in record.section.events:
        by_event = by_event.add(ev.outcome)
    assert f"{100 * metrics(by_event).f1:.2f}%" == "88.89%"


# ---------------------------------------------------------------------------------------------
# 6 and 7. repeated runs of one trace, exports, and per-split numbers
# ---------------------------------------------------------------------------------------------

CODE = ["code_11", "code_12", "code_13", "code_14", "code_15", "code_16"]
WRITING = ["writing_11", "writing_12", "writing_13", "writing_14", "writing_15", "writing_16"]


_RUN_EVENTS: dict[str, list[dict]] = {}
"""session id -> its event log (as JSON), for the tests that put sessions in the store."""


async def run_trace(stem: str, started_at: str, accept, propose_on=frozenset({1, 3}), **settings) -> RunRecord:
    """A scripted run of the first 4 events of `stem`, dated `started_at` (runs seconds apart
    must not depend on the clock to be told apart)."""
    events = await collect(session(real_env(stem), agent_proposing_on(set(propose_on)), judge_accepting(accept),
                                   max_events=4, **settings))
    events[0] = events[0].model_copy(update={"ts": started_at})
    record = RunRecord.model_validate_json(fold(events).model_dump_json())
    assert record.started_at == started_at
    _RUN_EVENTS[record.id] = [e.model_dump(mode="json") for e in events]
    return record


@pytest.fixture
async def all_real_runs() -> dict[str, Any]:
    """Every real trace once, and code_11 twice: an early run where the judge accepts all, and a
    later one where it rejects every task."""
    runs = {"old": await run_trace("code_11", "2026-01-01T00:00:00.000+00:00", lambda i, t: True)}
    runs["new"] = await run_trace("code_11", "2026-01-02T00:00:00.000+00:00", lambda i, t: t is None)
    others = []
    for k, stem in enumerate(CODE[1:] + WRITING):
        others.append(await run_trace(stem, f"2026-01-01T01:{k:02d}:00.000+00:00", lambda i, t: (i + len(t or "")) % 3 != 0,
                                      propose_on={1, 2, 4} if stem.startswith("w") else {2, 3}))
    runs["others"] = others
    return runs


async def test_export_of_repeated_runs_writes_the_latest_once_and_upstream_scores_it(all_real_runs, tmp_path: Path,
                                                                                     capsys) -> None:
    old, new, others = all_real_runs["old"], all_real_runs["new"], all_real_runs["others"]
    load_formats()
    written = export([new, old, *others], "proactivebench", tmp_path)  # any order: the latest counts
    names = sorted(p.name for p in written)
    assert names == sorted([f"{s}.json" for s in CODE + WRITING] + ["splits.json", "proactivebench_sessions.json"])
    assert json.loads((tmp_path / "code_11.json").read_text()) == judged_trace(new)
    warning = capsys.readouterr().err
    assert f"code_11.json holds {new.id} (the latest), not {old.id}" in warning
    splits = json.loads((tmp_path / "splits.json").read_text())
    assert splits["real_coding"]["files"] == [f"{s}.json" for s in CODE]
    assert all(len(v["files"]) == len(set(v["files"])) for v in splits.values())
    manifest = json.loads((tmp_path / "proactivebench_sessions.json").read_text())
    assert manifest["code_11.json"]["session"] == new.id and manifest["code_11.json"]["not_written"] == [old.id]

    # upstream's script over the folder, with its own splits.json, equals our per-split numbers
    rows = {r["Category"]: r for r in upstream_main(tmp_path, SPLITS_JSON)}
    assert set(rows) == {"real_average", "real_coding", "real_writing"}
    ours = metrics_by_split([old, new, *others])
    assert set(ours) == set(rows)
    for name, row in rows.items():
        assert_same_numbers(ours[name].metrics, row)
        assert ours[name].events == row["Total Events"]
    assert ours["real_coding"].sessions[0] == new.id

    # `eval splits --dir` reads the folder the way upstream's script does, and prints the same
    from proactive_tui.families.proactivebench.eval_cli import run_splits, splits_from_folder

    from_folder = {s.split: s for s in splits_from_folder(tmp_path)[0]}
    for name, row in rows.items():
        assert_same_numbers(from_folder[name].metrics, row)
    assert run_splits(argparse.Namespace(dir=str(tmp_path), session_ids=[], env=None, out=None)) == 0
    out = capsys.readouterr().out
    for name, row in rows.items():
        line = next(line for line in out.splitlines() if line.strip("│ ").startswith(name))
        for column in ("Recall", "Precision", "F1-Score"):
            assert f"{100 * row[column]:.2f}%" in line


async def test_explicitly_picked_sessions_win(all_real_runs, tmp_path: Path, capsys) -> None:
    old, new = all_real_runs["old"], all_real_runs["new"]
    load_formats()
    export([old], "proactivebench", tmp_path / "picked")  # the person named the older session only
    assert json.loads((tmp_path / "picked" / "code_11.json").read_text())[0]["judgement"] == [True]
    assert "warning" not in capsys.readouterr().err
    export([old, new], "proactivebench", tmp_path / "both")  # both named: the latest, and a warning
    assert f"holds {new.id} (the latest), not {old.id}" in capsys.readouterr().err


async def test_eval_splits_over_the_session_history(all_real_runs, capsys) -> None:
    """Sessions in the store, scored per split: the latest run of each trace, upstream's split
    names, zero denominators as 0 with the reason, the older run named."""
    from proactive_tui.cli.main import main
    from proactive_tui.core.events import parse_event
    from proactive_tui.store import open_store
    from proactive_tui.store.queries import load_events
    from proactive_tui.store.recorder import SessionRecorder

    records = [all_real_runs["old"], all_real_runs["new"], *all_real_runs["others"]]
    # a trace where the agent never proposes: precision has nothing to divide
    silent = await run_trace("writing_16", "2026-01-03T00:00:00.000+00:00", lambda i, t: True, propose_on=set())
    with open_store() as store:
        for rec in [*records, silent]:
            recorder = SessionRecorder(store)
            for event in _RUN_EVENTS[rec.id]:
                recorder.handle(parse_event(event))
            recorder.close()
        assert len(load_events(store, silent.id)) > 0
    assert main(["eval", "splits", "--env", "proactivebench/writing_16"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "real_writing" in line)
    assert "0.00%*" in row and "no proposals" in out  # "0 by upstream's rule (x / (0 + eps)): no proposals"
    assert main(["eval", "splits"]) == 0
    captured = capsys.readouterr()
    expected = metrics_by_split([*records, silent])
    for name, score in expected.items():
        line = next(line for line in captured.out.splitlines() if line.strip("│ ").startswith(name))
        assert f"{100 * score.metrics.f1:.2f}%" in line
    assert f"code_11: 2 sessions; scored {all_real_runs['new'].id} (the latest)" in captured.err

