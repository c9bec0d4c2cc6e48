"""`proactive-tui run` as a script uses it: through the real litellm path to a fake server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


from conftest import ROOT
from proactive_tui.core.run_record import RunRecord
from proactive_tui.testing.fake_openai import FakeOpenAIServer

ENV_ID = "proactiveeval/persuasion/fair/0"


def judge_aware_responder(body: dict) -> str:
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if name == "TurnVerdict":
        turns = body["messages"][-1]["content"].count("Assistant: ")
        return json.dumps({"reasoning": "checking", "target_reached": turns >= 2, "covered_steps": [turns]})
    if name == "GuidanceJudgement":
        return json.dumps({"reasoning": "solid", "effectiveness": 7, "personalization": 8, "tone": 7,
                           "engagement": 6, "naturalness": 9, "overall": 7})
    if name == "PlanDraft":
        return json.dumps({"target": "walk more", "sub_targets": ["ask", "suggest"]})
    if name == "PlanJudgement":
        return json.dumps({"reasoning": "reasonable", "score": 6})
    return "[bold]Hi[/bold] \x1b[31mthere\x1b[0m, shall we talk?"


def run_cli(args: list[str], server: FakeOpenAIServer, **kw) -> subprocess.Popen:
    env = {**os.environ, "COLUMNS": "160"}
    cmd = [sys.executable, "-m", "proactive_tui", "run", ENV_ID, "--api-base", server.base_url,
           "--agent", "openai/agent-m", "--judge", "openai/judge-m", *args]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def test_run_streams_judges_and_writes_record(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    with FakeOpenAIServer(responder=judge_aware_responder) as server:
        proc = run_cli(["--user", "openai/user-m", "--out", str(out), "--max-turns", "4", "--live"], server)
        stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    record = RunRecord.model_validate_json(out.read_text())
    assert record.termination.reason == "target_reached"
    assert record.section.planning.score == 6 and record.section.guidance.overall == 7
    assert record.models["agent"]["model"] == "openai/agent-m" and record.models["judge"]["model"] == "openai/judge-m"
    assert len(record.section.live_scores) == 2
    assert "[turn 1] agent (openai/agent-m):" in stdout
    assert "reached no" in stdout and "reached yes" in stdout
    assert "[bold]Hi[/bold]" in stdout  # markup shown literally
    assert "\x1b[31m" not in stdout  # escapes from the model stripped
    assert "overall" in stdout and "7/10" in stdout


def test_run_with_a_human_user_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "human.json"
    with FakeOpenAIServer(responder=judge_aware_responder) as server:
        proc = run_cli(["--user", "human", "--no-planning", "--max-turns", "3", "--out", str(out)], server, stdin=subprocess.PIPE)
        stdout, stderr = proc.communicate("I am not sure\nok, I will try\n", timeout=120)
    assert proc.returncode == 0, stderr
    record = RunRecord.model_validate_json(out.read_text())
    assert record.human_seats == ["user"] and record.mode == "play"
    assert [m.content for m in record.messages if m.role == "user"] == ["I am not sure", "ok, I will try"]
    assert record.models["user"]["model"] == "person"
    assert "you (user)>" in stdout


def test_a_blank_line_on_stdin_is_no_reply(tmp_path: Path) -> None:
    """Enter on an empty line asks again; it never becomes an empty user turn."""
    out = tmp_path / "human.json"
    with FakeOpenAIServer(responder=judge_aware_responder) as server:
        proc = run_cli(["--user", "human", "--no-planning", "--max-turns", "2", "--out", str(out)], server, stdin=subprocess.PIPE)
        stdout, stderr = proc.communicate("\n   \nI am not sure\n", timeout=120)
    assert proc.returncode == 0, stderr
    record = RunRecord.model_validate_json(out.read_text())
    assert [m.content for m in record.messages if m.role == "user"] == ["I am not sure"]
    assert stdout.count("you (user)>") >= 3


def test_ctrl_c_exits_130_and_keeps_partial_record(tmp_path: Path) -> None:
    out = tmp_path / "partial.json"
    with FakeOpenAIServer(responder=judge_aware_responder, chunk_delay=0.3) as server:
        proc = run_cli(["--user", "openai/user-m", "--no-planning", "--out", str(out)], server)
        deadline = time.time() + 60
        while time.time() < deadline and not any(r.body.get("stream") for r in server.requests):
            time.sleep(0.05)
        time.sleep(1.0)  # a few words of the agent's first message have streamed
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    record = RunRecord.model_validate_json(out.read_text())
    assert record.termination.reason == "cancelled"
    assert record.messages and record.messages[0].partial and record.messages[0].content


def test_run_unknown_env_and_bad_settings() -> None:
    proc = subprocess.run([sys.executable, "-m", "proactive_tui", "run", "proactiveeval/nope/fair/0"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1 and "no environment with id" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "proactive_tui", "run", ENV_ID, "--max-turns", "0"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1 and "invalid settings" in proc.stderr and "--max-turns" in proc.stderr
