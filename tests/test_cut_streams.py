"""A reply cut by a bound is a partial reply in the record, never a full one, and the person is
told which bound cut it (headless `run`, in process, against the fake server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from proactive_tui.core.run_record import RunRecord
from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply, default_responder


def test_an_endless_agent_reply_is_cut_and_recorded_as_partial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from proactive_tui.cli.main import main

    monkeypatch.setenv("PROACTIVE_TUI_AGENT_TIMEOUT", "1")  # the whole call; the stream never ends
    out = tmp_path / "run.json"
    def responder(body: dict) -> str | Reply:
        if body.get("model") == "a" and body.get("stream"):  # the agent's dialogue message
            return Reply(content="on and on ", fault="endless")
        return default_responder(body)

    with FakeOpenAIServer(chunk_delay=0.01, responder=responder) as server:
        rc = main(["run", "proactiveeval/persuasion/fair/0", "--api-base", server.base_url, "--agent", "openai/a",
                   "--user", "openai/u", "--judge", "openai/j", "--no-planning", "--max-turns", "2", "--no-store",
                   "--out", str(out)])
    printed = capsys.readouterr()
    record = RunRecord.model_validate_json(out.read_text())
    agent = [m for m in record.messages if m.role == "agent"]
    assert agent and agent[0].partial and agent[0].content.startswith("on and on ")
    assert not [m for m in record.messages if m.role == "user"]  # nobody answered a cut reply
    assert "whole-call timeout" in printed.err and "[cut off]" in printed.out
    assert rc == 1 and record.termination.reason == "error"
    assert record.section.guidance is None  # a cut reply is never scored


def test_a_reply_reset_midway_says_the_stream_was_cut(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A connection reset after some chunks: the person is told the stream was cut (the server was
    reached), never "cannot reach"; what arrived is kept as partial and is not scored."""
    from proactive_tui.cli.main import main

    out = tmp_path / "run.json"

    def responder(body: dict) -> str | Reply:
        if body.get("model") == "a" and body.get("stream"):
            return Reply(content="first second third fourth fifth sixth seventh", fault="reset")
        return default_responder(body)

    with FakeOpenAIServer(responder=responder) as server:
        rc = main(["run", "proactiveeval/persuasion/fair/0", "--api-base", server.base_url, "--agent", "openai/a",
                   "--user", "openai/u", "--judge", "openai/j", "--no-planning", "--max-turns", "2", "--no-store",
                   "--out", str(out)])
    err = capsys.readouterr().err
    record = RunRecord.model_validate_json(out.read_text())
    agent = [m for m in record.messages if m.role == "agent"]
    assert rc == 1 and record.termination.reason == "error"
    assert "the stream was cut after" in record.termination.detail and "cannot reach" not in err
    assert agent and agent[0].partial and agent[0].content.startswith("first")
    assert record.section.guidance is None
