"""End to end against a real OpenAI-compatible server nobody here wrote: llama-cpp-python's
`python -m llama_cpp.server` serving the bundled SmolLM2 GGUF on a free loopback port, one short
session of each family through the litellm path (`openai/smollm2` with `--api-base .../v1`).

It is the server that found issue 14: it refuses `json_schema` with a 500, so every structured call
used to fail after five retries. Here the first structured call negotiates json_object, the mode is
remembered beside the config, and the server's own access log shows exactly one refused request in
the whole run (no retries, no second negotiation). The server's deps come from the `test` extra
(`llama-cpp-python[server]`); when they are missing or the server cannot start, the test skips
with the reason, never passes silently.

The work is bounded by turns, events and token caps, never by the clock: one dialogue turn for
ProactiveEval (no planning: the turn check and the guidance score are its structured calls), one
event for ProactiveBench, one turn for Chronos; short caps for free text, room for the judge's JSON.
The server gets one thread (`--n_threads 1`: on 2 busy cores more threads are slower) and
`--interrupt_requests False`, since by default it aborts a streaming reply whenever another request
arrives, and sessions overlap calls (the judge checks a turn while the agent writes the next).
"""

from __future__ import annotations

import importlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from proactive_tui.core.run_record import RunRecord

pytestmark = pytest.mark.slow  # minutes when other work keeps both cores busy; deselect with -m "not slow"

SERVER_DEPS = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings", "llama_cpp.server.app")
STARTUP_GUARD_S = 180
"""Only a hang guard for the model load (a few seconds when the machine is quiet)."""
SESSIONS = [
    # env id, flags, token caps per seat (free text short; a seat that writes JSON gets room, since
    # the server's grammar does not cap string lengths and a cut object is asked for again)
    ("proactiveeval/persuasion/fair/0", ["--judge", "openai/smollm2", "--no-planning", "--max-turns", "1",
                                         "--memory-turns", "1"], {"AGENT": 64, "USER": 32, "JUDGE": 200}),
    ("proactivebench/coding_01", ["--max-events", "1"], {"AGENT": 512, "USER": 200}),
    # Chronos's judge seat reads replies to offers; one turn makes none, but the seat is the server's too
    ("chronos/car-purchase/positive", ["--judge", "openai/smollm2", "--max-turns", "1"],
     {"AGENT": 384, "USER": 32, "JUDGE": 200}),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory):
    for name in SERVER_DEPS:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - any failure means: no server here
            pytest.skip(f"llama-cpp-python's server cannot be imported ({name}: {exc}); "
                        "install the test extra: pip install -r requirements/test.lock")
    from proactive_tui.llm.local import LocalModelUnavailable, model_path

    try:
        gguf = model_path()
    except LocalModelUnavailable as exc:
        pytest.skip(f"no bundled GGUF to serve: {exc}")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", "4096", "--n_threads", "1", "--interrupt_requests", "False"],
            stdout=out, stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}/v1"
    guard = time.monotonic() + STARTUP_GUARD_S
    while True:
        if proc.poll() is not None:
            pytest.skip(f"llama_cpp.server exited ({proc.returncode}) before serving:\n{_log_tail(log)}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as answer:
                if answer.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > guard:
            proc.kill()
            pytest.skip(f"llama_cpp.server did not answer within {STARTUP_GUARD_S}s:\n{_log_tail(log)}")
        time.sleep(0.25)
    try:
        yield base, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_one_session_of_each_family_through_llama_cpp_server(llama_server, tmp_path: Path, monkeypatch, capsys) -> None:
    from proactive_tui.cli.main import main
    from proactive_tui.llm.structured import memory_path

    base, log = llama_server
    records: dict[str, RunRecord] = {}
    for env_id, flags, caps in SESSIONS:
        for seat, cap in caps.items():
            monkeypatch.setenv(f"PROACTIVE_TUI_{seat}_MAX_TOKENS", str(cap))
        out = tmp_path / (env_id.split("/")[0] + ".json")
        rc = main(["run", env_id, "--agent", "openai/smollm2", "--user", "openai/smollm2", "--api-base", base,
                   "--no-store", "--out", str(out), *flags])
        printed = capsys.readouterr()
        assert rc == 0, printed.err[-3000:] + printed.out[-2000:]
        assert "Retrying" not in printed.err and "rejects response_format" not in printed.err
        record = RunRecord.model_validate_json(out.read_text())
        assert record.errors == [], record.errors  # no failed call, structured or not
        assert {info["model"] for seat, info in record.models.items() if seat in record.seats} == {"openai/smollm2"}
        assert record.models["agent"]["api_base"] == base and record.models["agent"]["max_tokens"] == caps["AGENT"]
        records[env_id.split("/")[0]] = record

    # what was negotiated, remembered once for the base and used by every later call
    learned = json.loads(memory_path().read_text())["servers"][base]
    assert learned["mode"] == "json_object" and learned["rejected"] == ["json_schema"]
    access = [line for line in log.read_text(errors="replace").splitlines() if "POST /v1/chat/completions" in line and "HTTP/1.1\"" in line]
    refused = [line for line in access if '" 500' in line]
    assert len(refused) == 1, refused  # the one json_schema probe; before: 5 attempts per structured call
    assert len(access) > len(SESSIONS) * 2

    pe = records["proactiveeval"].section
    assert pe.turn_checks and pe.guidance is not None and 1 <= pe.guidance.overall <= 10
    assert pe.guidance.judge_model == "openai/smollm2"
    pb = records["proactivebench"].section
    assert len(pb.events) == 1 and pb.confusion.events + pb.confusion.skipped == 1
    ch = records["chronos"]
    agent_turns = [m for m in ch.messages if m.role == "agent"]
    assert agent_turns and all(m.content.strip() for m in agent_turns)
    assert ch.section.turns and ch.section.outcome is not None
