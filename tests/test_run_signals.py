"""SIGTERM stops a headless `run` the way Ctrl-C does: the `--out` record is written, valid, and
says the session was stopped (`timeout`, CI jobs and `docker stop` send SIGTERM, not SIGINT).

Through the real litellm path to the project's fake server, in a subprocess, with the signal sent
while the agent's first message is streaming.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from proactive_tui.core.run_record import RunRecord
from proactive_tui.testing.fake_openai import FakeOpenAIServer

ENV_ID = "proactiveeval/persuasion/fair/0"


def responder(body: dict) -> str:
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if name == "TurnVerdict":
        return json.dumps({"reasoning": "checking", "target_reached": False, "covered_steps": []})
    if name == "GuidanceJudgement":
        return json.dumps({"reasoning": "fine", "effectiveness": 5, "personalization": 5, "tone": 5,
                           "engagement": 5, "naturalness": 5, "overall": 5})
    return "Have you thought about walking a little more each day, starting with the station?"


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_writes_the_record_of_a_stopped_session(tmp_path: Path, signum: signal.Signals, code: int) -> None:
    out = tmp_path / "stopped.json"
    env = {**os.environ, "COLUMNS": "160"}
    with FakeOpenAIServer(responder=responder, chunk_delay=0.3) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "proactive_tui", "run", ENV_ID, "--api-base", server.base_url, "--agent", "openai/agent-m",
             "--user", "openai/user-m", "--judge", "openai/judge-m", "--no-planning", "--no-store", "--out", str(out)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120  # a hang guard only
        while time.time() < deadline and not any(r.body.get("stream") for r in server.requests):
            time.sleep(0.05)
        time.sleep(1.0)  # a few words of the agent's first message have streamed
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == code, stderr
    assert out.exists(), stderr
    record = RunRecord.model_validate_json(out.read_text(encoding="utf-8"))
    assert record.termination is not None and record.termination.reason == "cancelled"
    assert record.ended_at is not None
    assert record.messages and record.messages[0].partial and record.messages[0].content  # cut off, kept
    assert "run record written to" in stderr and "Traceback" not in stderr
