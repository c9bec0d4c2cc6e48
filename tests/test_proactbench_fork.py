"""ProactBench sessions forked at a trigger reply and re-graded with another judge, the way a
person does it: `run` against the fake OpenAI server, then `sessions fork` or `regrade`, through
the real litellm path and the session store."""

from __future__ import annotations

import json
import re
from pathlib import Path

from proactive_tui import envs
from proactive_tui.cli.main import main
from proactive_tui.core import registry
from proactive_tui.core.fork import EDITED_BY
from proactive_tui.store import open_store
from proactive_tui.store.queries import load_events, load_record
from proactive_tui.testing.fake_openai import FakeOpenAIServer

ENV_ID = "proactbench/BP_PROFESSIONAL_01_NONE__style1__531a542ff1714bb080d8f06f3cd2daff"
"""Trigger points at turns 1, 3, 5 and 7."""
EDIT = "EDITED: before wiping, copy the photos off and verify them with checksums."


def proactbench_responder(body: dict) -> str:
    """The agent answers `reply at turn N` (N from how many user messages it sees); the judge
    `openai/judge-m` gives PARTIAL (PASS for an edited reply), `openai/judge-2` FAIL, each quoting
    the reply it scores."""
    messages = body["messages"]
    if messages[0]["content"].startswith("You evaluate"):  # the offline judge
        text = " ".join(m["content"] for m in messages)
        reply = text.split("ASSISTANT REPLY UNDER REVIEW\n", 1)[1].split("\n\n", 1)[0]
        if body["model"] == "judge-2":
            score = "FAIL"
        else:
            score = "PASS" if reply.startswith("EDITED") else "PARTIAL"
        return json.dumps({"rationale": f"{score.lower()} by {body['model']}", "score": score, "evidence": reply[:24]})
    turn = sum(1 for m in messages if m["role"] == "user")
    return f"reply at turn {turn}: check SMART first, then copy what matters."


def run(server: FakeOpenAIServer, out: Path, *args: str) -> str:
    argv = ["run", ENV_ID, "--api-base", server.base_url, "--agent", "openai/agent-m", "--judge", "openai/judge-m",
            *args, "--out", str(out), "--quiet"]
    assert main(argv) == 0
    return json.loads(out.read_text(encoding="utf-8"))["id"]


def test_a_fork_at_a_trigger_keeps_earlier_verdicts_and_redoes_the_rest(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=proactbench_responder) as server:
        parent_id = run(server, tmp_path / "parent.json", "--max-triggers", "3")
        assert main(["sessions", "fork", parent_id, "--list"]) == 0
        listed = capsys.readouterr().out
        assert main(["sessions", "fork", parent_id, "--turn", "3", "--seat", "agent", "--edit", EDIT,
                     "--api-base", server.base_url, "--out", str(tmp_path / "branch.json"), "--quiet"]) == 0
        branch_id = json.loads((tmp_path / "branch.json").read_text(encoding="utf-8"))["id"]
        assert main(["sessions", "fork", parent_id, "--turn", "5", "--seat", "agent", "--api-base", server.base_url,
                     "--out", str(tmp_path / "again.json"), "--quiet"]) == 0
        again_id = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))["id"]
    assert "trigger 2 · turn 3 · CRITICAL reply" in listed and "trigger 3 · turn 5" in listed
    with open_store() as store:
        parent, branch, again = (load_record(store, i) for i in (parent_id, branch_id, again_id))
        branch_events = load_events(store, branch_id)
    assert [t.counted for t in parent.section.triggers] == ["PARTIAL", "PARTIAL", "PARTIAL"]
    # trigger 1 is the parent's verdict; trigger 2 is the edit, judged again; trigger 3 is redone
    assert [t.counted for t in branch.section.triggers] == ["PARTIAL", "PASS", "PARTIAL"]
    assert branch.section.triggers[0] == parent.section.triggers[0]
    edited = next(m for m in branch.messages if m.turn == 3)
    assert (edited.content, edited.model) == (EDIT, EDITED_BY)
    k = branch_events[0].forked_from["prefix_events"]
    own_calls = [e for e in branch_events[k + 1:] if e.type == "model_called"]
    assert [(c.seat, c.purpose) for c in own_calls] == [("judge", "verdict on turn 3"), ("agent", "turn 5 agent reply"),
                                                        ("judge", "verdict on turn 5")]
    assert EDIT in own_calls[0].call.request["messages"][-1]["content"]
    # offline context is the recorded dialogue: the edit never enters a later trigger's context
    later = own_calls[1].call.request["messages"]
    assert EDIT not in json.dumps(later) and later[-1]["content"] == envs.load_default().get(ENV_ID).dialogue.turn(5).user_message
    # a regenerated fork asks the agent again at its trigger, and keeps triggers 1 and 2
    assert again.section.triggers[:2] == parent.section.triggers[:2]
    assert again.section.triggers[2].judged and again.forked_from["change"] == "regenerated"


def test_regrade_asks_another_judge_for_every_trigger_reply(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=proactbench_responder) as server:
        session_id = run(server, tmp_path / "s.json", "--max-triggers", "2")
        assert main(["regrade", session_id, "--judge", "openai/judge-2", "--api-base", server.base_url]) == 0
        judged_again = [r.body for r in server.requests if r.method == "POST" and r.body["model"] == "judge-2"]
    out = capsys.readouterr().out
    assert len(judged_again) == 2
    from proactive_tui.services.regrade import grading_record

    with open_store() as store:
        record = load_record(store, session_id)
        gradings = store.gradings(session_id)
        graded = grading_record(store, gradings[0])
    assert [t.counted for t in record.section.triggers] == ["PARTIAL", "PARTIAL"]  # the session's own, unchanged
    assert [t.counted for t in graded.section.triggers] == ["FAIL", "FAIL"]
    assert [t.judge for t in graded.section.triggers] == ["openai/judge-2"] * 2
    assert graded.score("overall_weighted").value == 0.0 and record.score("overall_weighted").value == 0.5
    assert re.search(r"overall", out)


def test_an_online_session_is_not_regradable_and_says_why(tmp_path: Path, capsys) -> None:
    from proactive_tui.core.family import UnsupportedFamily
    from proactive_tui.core.run_record import read_record
    from proactive_tui.families.proactbench.regrade import ONLINE_REASON
    import asyncio

    record = read_record(json.dumps({
        "id": "x", "family": "proactbench", "env_id": ENV_ID, "environment": {}, "mode": "watch", "human_seats": [],
        "seats": {}, "settings": {"protocol": "online"}, "format_version": 2}))
    try:
        asyncio.run(registry.get("proactbench").regrade.regrade(record, envs.load_default().get(ENV_ID), judge=None))
    except UnsupportedFamily as exc:
        assert str(exc) == ONLINE_REASON
    else:
        raise AssertionError("an online session was re-graded")


def test_an_online_fork_replays_plans_and_user_turns_then_the_user_agent_scores_the_edit(tmp_path: Path) -> None:
    from test_proactbench_engine import online_responder

    with FakeOpenAIServer(responder=online_responder()) as server:
        parent_id = run(server, tmp_path / "parent.json", "--user", "openai/user-m", "--protocol", "online",
                        "--max-turns", "3")
        assert main(["sessions", "fork", parent_id, "--turn", "1", "--seat", "agent", "--edit", EDIT,
                     "--api-base", server.base_url, "--out", str(tmp_path / "branch.json"), "--quiet"]) == 0
        branch_id = json.loads((tmp_path / "branch.json").read_text(encoding="utf-8"))["id"]
    with open_store() as store:
        parent, branch = load_record(store, parent_id), load_record(store, branch_id)
        events = load_events(store, branch_id)
    assert parent.termination.reason == branch.termination.reason == "completed"
    k = events[0].forked_from["prefix_events"]
    inherited = [e.type for e in events[1:k + 1]]
    assert "proactbench.planned" in inherited and "proactbench.trigger_opened" in inherited  # turn 1's plan and trigger
    own = [e for e in events[k + 1:] if e.type == "model_called"]
    assert [(c.seat, c.purpose) for c in own][:2] == [("judge", "turn 2 plan"), ("user", "turn 2 user message")]
    assert EDIT in own[1].call.request["messages"][-1]["content"]  # the user agent scores the edited reply
    first = branch.section.triggers[0]
    assert (first.response, first.counted, first.judged_by) == (EDIT, "PASS", "user_agent")
    assert [p.turn for p in branch.section.plans] == [1, 2, 3]
    assert next(m for m in branch.messages if (m.role, m.turn) == ("agent", 1)).model == EDITED_BY
