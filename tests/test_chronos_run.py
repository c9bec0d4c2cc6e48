"""`proactive-tui run chronos/<scenario>`: through the real litellm path to a fake server, with a
person on stdin, into the store and out as a dataset, and once on the embedded offline model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from chronos_helpers import scripted_agent_responder
from conftest import ROOT
from proactive_tui.core.run_record import RunRecord
from proactive_tui.testing.fake_openai import FakeOpenAIServer

ENV_ID = "chronos/car-purchase-towing/negative"


def cli(args: list[str], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "160"}
    return subprocess.run([sys.executable, "-m", "proactive_tui", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=kw.pop("timeout", 120), **kw)


def test_run_through_the_fake_server_writes_a_record(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    with FakeOpenAIServer(responder=scripted_agent_responder) as server:
        proc = cli(["run", ENV_ID, "--api-base", server.base_url, "--agent", "openai/agent-m", "--user", "openai/user-m",
                    "--out", str(out)])
        agent_calls = [r for r in server.requests if r.body.get("response_format")]
    assert proc.returncode == 0, proc.stderr
    record = RunRecord.model_validate_json(out.read_text())
    o = record.section.outcome
    assert (o.success, o.reason, o.action_accuracy, o.status_accuracy) == (True, "kept_silent", 1.0, 1.0)
    assert record.termination.reason == "timeline_exhausted"
    assert record.models["agent"] == {**record.models["agent"], "model": "openai/agent-m", "temperature": 0.2}
    # the judge seat sits (it reads replies to offers); this negative-branch run never makes one
    assert set(record.seats) == {"agent", "user", "judge"} and record.settings["confirmation_reader"] == "judge"
    assert all(r.body["temperature"] == 0.2 for r in agent_calls)
    assert record.versions["prompts"].startswith("chronos-")
    assert "[turn 1] agent (openai/agent-m): Let me check." in proc.stdout
    assert "INFO_RETRIEVAL / PENDING" in proc.stdout and "<observation: tool call" in proc.stdout
    assert "verdict: SUCCESS" in proc.stdout and "Action accuracy" in proc.stdout and "100.00%" in proc.stdout
    assert "⏰ reminder 1 active: EVENT: a match" in proc.stdout


def test_run_with_a_person_as_the_user_then_export(tmp_path: Path) -> None:
    out = tmp_path / "human.json"
    with FakeOpenAIServer(responder=scripted_agent_responder) as server:
        proc = cli(["run", ENV_ID, "--api-base", server.base_url, "--agent", "openai/agent-m", "--user", "human",
                    "--max-turns", "5", "--out", str(out)], input="/dormant\nup to 12,000 euros\nunder 90,000 km\n")
    assert proc.returncode == 0, proc.stderr
    record = RunRecord.model_validate_json(out.read_text())
    assert record.human_seats == ["user"]
    assert [m.content for m in record.messages if m.role == "user"][1:] == ["up to 12,000 euros", "under 90,000 km"]
    # five counted turns (IR, NA, SR, KS, KS) plus the uncounted answer to the agent's own check
    assert record.section.outcome.reason == "turn_limit" and record.settings["max_turns"] == 5
    assert "No reminder is set yet" in proc.stdout and "/dormant" in proc.stdout and "you (user)>" in proc.stdout
    assert "/shift" not in proc.stdout  # a simple scenario has no change of plans to voice
    dataset = tmp_path / "data"
    proc = cli(["export", "--all", "--family", "chronos", "--format", "chronos", "--out", str(dataset)])
    assert proc.returncode == 0, proc.stderr
    [line] = (dataset / "chronos.jsonl").read_text(encoding="utf-8").splitlines()
    sample = json.loads(line)
    assert sample["id"] == record.id and len(sample["turns"]) == 6
    assert [m["role"] for m in sample["messages"][:4]] == ["system", "user", "assistant", "observation"]


# The bound on the embedded model's work is the turn and token caps, not the clock: one counted
# agent turn, plus at most one answering its own INFO_RETRIEVAL (the limit does not count those;
# max_tool_calls=2 bounds them) (each a structured reply, bounded by the grammar's string caps; a max-tokens cap that cut its JSON
# short would only make the gateway re-ask) and short free-text replies from the user's seat.
LOCAL_WORK = ["--max-turns", "1"]
LOCAL_ENV = {"PROACTIVE_TUI_USER_MAX_TOKENS": "24"}
# Only a hang guard, never a timing check: ~11 s on an idle 2-core machine, up to ~90 s measured with
# both cores kept busy by other work; the guard sits well above that.
LOCAL_HANG_GUARD_S = 600


def test_run_on_local_smollm2(tmp_path: Path, monkeypatch) -> None:
    for name, value in LOCAL_ENV.items():
        monkeypatch.setenv(name, value)  # cli() hands the environment on
    out = tmp_path / "local.json"
    proc = cli(["run", "chronos/car-purchase/positive", *LOCAL_WORK, "--out", str(out)], timeout=LOCAL_HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = RunRecord.model_validate_json(out.read_text())
    assert {info["model"] for info in record.models.values()} == {"local/smollm2"}
    assert record.models["agent"]["temperature"] == 0.2
    turns = record.section.turns
    assert len(turns) in (1, 2) and record.section.outcome is not None
    assert [t.input_kind for t in turns][:2] == ["user", "tool_call"][:len(turns)]
    for t in turns:  # the grammar keeps the JSON in shape; only the reminder rule can still fail it
        assert (t.reply is not None and t.model == "local/smollm2") or t.format_failure
    assert record.termination.reason in ("max_turns", "derailed", "task_completed", "task_failed", "timeline_exhausted")
    assert "Verdict" in proc.stdout and "Action accuracy" in proc.stdout
