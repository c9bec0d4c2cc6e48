"""Headless `run` against a server that keeps failing the same way: the session ends with an error
that names the fault, its partial transcript is kept, and nothing empty is scored (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest

from proactive_tui.core.run_record import RunRecord
from proactive_tui.llm import gateway as gateway_module
from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply, default_responder

PE_ENV = "proactiveeval/persuasion/fair/0"
SEATS = ["--agent", "openai/a", "--user", "openai/u", "--judge", "openai/j", "--no-planning", "--max-turns", "2"]


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gateway's usual retry count, with back-off in milliseconds."""
    real_init = gateway_module.Gateway.__init__

    def quick_init(self, *args, **kwargs) -> None:
        kwargs.setdefault("base_delay", 0.001)
        kwargs.setdefault("max_delay", 0.005)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(gateway_module.Gateway, "__init__", quick_init)


def run(server: FakeOpenAIServer, out: Path, *extra: str) -> int:
    from proactive_tui.cli.main import main

    return main(["run", PE_ENV, "--api-base", server.base_url, *SEATS, *extra, "--out", str(out)])


def test_an_agent_answered_with_html_ends_the_session_with_that_error(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    def responder(body: dict) -> str | Reply:
        if body.get("model") == "a":
            return Reply(fault="html")
        return default_responder(body)

    out = tmp_path / "run.json"
    with FakeOpenAIServer(responder=responder) as server:
        rc = run(server, out)
        agent_calls = [r for r in server.chat_requests() if r.body.get("model") == "a"]
    err = capsys.readouterr().err
    record = RunRecord.model_validate_json(out.read_text())
    assert rc == 1 and record.termination.reason == "error"
    assert "answered HTTP 200 with a non-JSON body (an HTML page?" in record.termination.detail
    assert "non-JSON body" in err
    assert len(agent_calls) == 5  # retried with the usual bound (max_retries 4), then given up
    assert not [m for m in record.messages if m.role == "agent"]  # nothing empty stands in for a reply
    assert record.section.guidance is None and not [c for c in record.section.turn_checks if c.target_reached is not None]


def test_a_server_that_never_answers_ends_the_run_naming_the_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Accepts the connection, reads the request, then says nothing: small bounds cut every
    attempt, and a timeout is asked again once, not max_retries times (five attempts at the
    default 120 s first-token bound kept a run waiting over ten minutes)."""
    monkeypatch.setenv("PROACTIVE_TUI_FIRST_TOKEN_TIMEOUT", "0.3")
    monkeypatch.setenv("PROACTIVE_TUI_TIMEOUT", "0.6")
    out = tmp_path / "run.json"
    with FakeOpenAIServer(responder=lambda body: Reply(fault="hang", delay=30)) as server:
        rc = run(server, out)
        calls = len(server.chat_requests())
    err = capsys.readouterr().err
    record = RunRecord.model_validate_json(out.read_text())
    assert rc == 1 and record.termination.reason == "error"
    assert "first-token timeout" in record.termination.detail and "first-token timeout" in err
    assert calls == 2  # one attempt and one retry (TIMEOUT_RETRIES), though max_retries is 4
    assert "given up after 2 attempts" in record.termination.detail
    assert not [m for m in record.messages if not m.partial and not m.content.strip()]
