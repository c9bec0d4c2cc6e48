"""Re-running a recorded session against a new agent (issue 18): the same environment, settings,
user and judge; the user's recorded turns sent again verbatim (frozen) or the user model asked
(simulated); the original never changes, and both sessions' headline scores are printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from family_runs import RUNS, run_in_process
from proactive_tui.cli.main import main
from proactive_tui.store import open_store
from proactive_tui.store.queries import load_events, load_record
from proactive_tui.testing.fake_openai import FakeOpenAIServer


def calls(session_id: str) -> list:
    with open_store() as store:
        return [e for e in load_events(store, session_id) if e.type == "model_called"]


@pytest.mark.parametrize("family", ["proactiveeval", "chronos"])
def test_a_frozen_user_says_exactly_what_it_said_to_the_new_agent(family: str, tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=RUNS[family].responder) as server:
        original_id = run_in_process(family, server.base_url, tmp_path / "o.json")
        with open_store() as store:
            before_rows = store.event_rows(original_id)
        capsys.readouterr()
        assert main(["sessions", "rerun", original_id, "--agent", "openai/new-agent", "--api-base", server.base_url,
                     "--out", str(tmp_path / "r.json"), "--quiet"]) == 0
        printed = capsys.readouterr().out
    rerun_id = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["id"]
    original, rerun = load_record_of(original_id), load_record_of(rerun_id)
    with open_store() as store:
        assert store.event_rows(original_id) == before_rows  # the original never changes
    said = [m.content for m in sorted(original.messages, key=lambda m: m.turn) if m.role == "user" and m.turn > (family == "chronos")]
    heard = [m for m in sorted(rerun.messages, key=lambda m: m.turn) if m.role == "user" and m.turn > (family == "chronos")]
    frozen = rerun.rerun_of["user_turns_recorded"]
    assert rerun.rerun_of == {"session_id": original_id, "user": "frozen", "user_turns_recorded": len(said),
                              "agent": "openai/new-agent"}
    assert heard and [m.content for m in heard][:frozen] == said[:len(heard)]  # verbatim, in order
    # a frozen turn asks no model: the user seat's calls are only for turns beyond the recording
    user_calls = [c for c in calls(rerun_id) if c.seat == "user"]
    assert len(user_calls) == max(0, len(heard) - frozen)
    # and the new agent heard them: its next call carries the user's first recorded turn verbatim
    agent_calls = [c for c in calls(rerun_id) if c.seat == "agent" and c.purpose != "planning"]
    assert agent_calls and all(c.call.model == "openai/new-agent" for c in agent_calls)
    assert any(said[0] in [m["content"] for m in c.call.request["messages"]] for c in agent_calls[1:])
    # same environment, settings and the other seats' models
    assert rerun.environment == original.environment and rerun.settings == original.settings
    assert rerun.models["judge"]["model"] == original.models["judge"]["model"]
    assert rerun.models["user"]["model"] == original.models["user"]["model"]
    assert f"original {original_id}" in printed and f"re-run   {rerun_id}" in printed and "differences:" in printed


def load_record_of(session_id: str):
    with open_store() as store:
        return load_record(store, session_id)


def test_a_simulated_user_answers_the_new_agent_and_proactivebench_cannot_freeze(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=RUNS["proactivebench"].responder) as server:
        original_id = run_in_process("proactivebench", server.base_url, tmp_path / "o.json")
        capsys.readouterr()
        assert main(["sessions", "rerun", original_id, "--agent", "openai/new-agent", "--api-base", server.base_url]) == 1
        assert "no user turns to freeze" in capsys.readouterr().err
        assert main(["sessions", "rerun", original_id, "--agent", "openai/new-agent", "--simulated-user",
                     "--api-base", server.base_url, "--out", str(tmp_path / "r.json"), "--quiet"]) == 0
    rerun = load_record_of(json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["id"])
    assert rerun.rerun_of["user"] == "simulated" and rerun.rerun_of["user_turns_recorded"] == 0
    assert {c.call.model for c in calls(rerun.id) if c.seat == "agent"} == {"openai/new-agent"}
    assert {c.call.model for c in calls(rerun.id) if c.seat == "user"} == {"openai/judge-m"}  # the same judge
    assert main(["export", rerun.id, "--format", "markdown", "--out", str(tmp_path / "r.md")]) == 0
    assert f"re-run of {original_id} against openai/new-agent, the user simulated" in \
        (tmp_path / "r.md").read_text(encoding="utf-8")


def test_proactbench_cannot_freeze_and_says_why_in_its_own_words(tmp_path: Path, capsys) -> None:
    """Offline, the user's messages are the recorded ones in every session: the refusal says so
    (not another family's reason) and a re-run with the user 'simulated' sends them as recorded."""
    with FakeOpenAIServer(responder=RUNS["proactbench"].responder) as server:
        original_id = run_in_process("proactbench", server.base_url, tmp_path / "o.json")
        capsys.readouterr()
        assert main(["sessions", "rerun", original_id, "--agent", "openai/new-agent", "--api-base", server.base_url]) == 1
        err = capsys.readouterr().err
        assert "no user turns to freeze" in err and "recorded user messages" in err and "ProactiveBench" not in err
        assert main(["sessions", "rerun", original_id, "--agent", "openai/new-agent", "--simulated-user",
                     "--api-base", server.base_url, "--out", str(tmp_path / "r.json"), "--quiet"]) == 0
    original = load_record_of(original_id)
    rerun = load_record_of(json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["id"])
    assert {c.call.model for c in calls(rerun.id) if c.seat == "agent"} == {"openai/new-agent"}
    heard = [[m["content"] for m in c.call.request["messages"] if m["role"] == "user"]
             for c in calls(rerun.id) if c.seat == "agent"]
    said = [[m["content"] for m in c.call.request["messages"] if m["role"] == "user"]
            for c in calls(original_id) if c.seat == "agent"]
    assert heard == said and len(heard) == 2  # the recorded user turns, in order, at both triggers
    assert [t.turn for t in rerun.section.triggers] == [t.turn for t in original.section.triggers]
