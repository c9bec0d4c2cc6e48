"""Nothing lost under faults (issue 15): seeded headless sessions of every family against a fake
server that answers a request with a fault with probability 0.3.

Each session runs through `proactive-tui run` (cli.main, in process), so the gateway's retries and
bounds, the engine's error handling, the run record and the session store are the real ones. What
must hold for every seed:

- the session completes, or ends with a clear error the engine recorded (its termination, not a
  traceback turned into a reason);
- its transcript, partial or not, is in the session store and matches the run record;
- no reply that was empty or failed is scored as if it were a real one.

A fault is drawn per request from a `random.Random` keyed by the seed and the request itself (its
body, and how often that exact body was sent: a retry is the same request again), so concurrent
calls (ProactiveBench judges candidates in parallel) cannot reorder the draws and a failing seed
reproduces. Bounds and back-off are tiny so the whole file stays fast.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest

from chronos_helpers import scripted_agent_responder
from proactive_tui.core.run_record import RunRecord
from proactive_tui.llm import gateway as gateway_module
from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply, default_responder

SEEDS = range(20)
FAULT_RATE = 0.3
FAULTS = ("429_retry_after", "429", "500", "503", "reset", "stall", "truncated", "html", "invalid_json",
          "empty_choices")
ENDINGS = {"completed", "error", "max_turns", "target_reached", "timeline_exhausted", "max_events"}
"""How a session may end here: finished in one of the families' ways, or with a recorded error."""
TRACEBACK_DETAIL = re.compile(r"^[A-Za-z_.]*(Error|Exception|Exit|Interrupt|Iteration)\b|Traceback")
"""A termination detail that is an unhandled exception's `Type: message` (SessionBase's last resort)."""


def bench_responder(body: dict) -> str:
    """ProactiveBench's agent proposes at every event; its judge accepts every task."""
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if name in ("ProposalReply", "CandidatesReply"):
        return json.dumps({"Purpose": "p", "Thoughts": "t", "Proactive Task": "Offer to help", "Response": "Shall I?"})
    if name == "JudgeVerdict":
        return json.dumps({"thought": "fair enough", "judgement": "accepted"})
    return default_responder(body)


def eval_responder(body: dict) -> str:
    """ProactiveEval's agent plans two steps (the schema's smallest example has none, which is no
    plan); everything else is the fake server's default (echo, or the schema's smallest example)."""
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if name == "PlanDraft":
        return json.dumps({"target": "persuade gently", "sub_targets": ["ask what matters", "offer a reason"]})
    return default_responder(body)


FAMILIES: dict[str, tuple[str, Callable[[dict], str], list[str]]] = {
    "proactiveeval": ("proactiveeval/persuasion/fair/0", eval_responder, ["--max-turns", "2"]),
    "proactivebench": ("proactivebench/coding_01", bench_responder, ["--max-events", "2", "--retries", "1"]),
    "chronos": ("chronos/car-purchase/positive", scripted_agent_responder, ["--max-turns", "3"]),
}


class FaultyResponder:
    """The family's responder, with a fault drawn for each request (and recorded, for messages)."""

    def __init__(self, seed: int, answer: Callable[[dict], str]) -> None:
        self.seed = seed
        self.answer = answer
        self.seen: Counter[str] = Counter()
        self.injected: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> str | Reply:
        digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:16]
        with self._lock:
            self.seen[digest] += 1
            rng = random.Random(f"{self.seed}/{digest}/{self.seen[digest]}")
        text = self.answer(body)
        if rng.random() >= FAULT_RATE:
            return text
        fault = rng.choice(FAULTS)
        structured = bool(body.get("response_format")) or "JSON" in json.dumps(body.get("messages", []))
        with self._lock:
            self.injected[fault] += 1
        streamed = bool(body.get("stream"))
        return {
            "429_retry_after": lambda: Reply.error(429, "slow down", retry_after=1),
            "429": lambda: Reply.error(429, "slow down"),
            "500": lambda: Reply.error(500, "internal error"),
            "503": lambda: Reply.error(503, "overloaded"),
            "reset": lambda: Reply(content=text, fault="reset"),
            "stall": lambda: Reply(content=text, fault="stall" if streamed else "hang", delay=5),
            "truncated": lambda: Reply(content=text, fault="drop_stream"),
            "html": lambda: Reply(fault="html"),
            "invalid_json": lambda: Reply.text("Sure! Here it is: {\"reasoning\": " if structured else text),
            "empty_choices": lambda: Reply(fault="empty_choices"),
        }[fault]()


@pytest.fixture
def tiny_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny call bounds and back-off: a stall costs a fraction of a second, a retry almost nothing."""
    for name, value in {"FIRST_TOKEN_TIMEOUT": "0.4", "IDLE_TIMEOUT": "0.4", "TIMEOUT": "1.2",
                        "CONNECT_TIMEOUT": "2", "MAX_RETRIES": "2"}.items():
        monkeypatch.setenv(f"PROACTIVE_TUI_{name}", value)
    real_init = gateway_module.Gateway.__init__

    def quick_init(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("base_delay", 0.001)
        kwargs.setdefault("max_delay", 0.005)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(gateway_module.Gateway, "__init__", quick_init)


def unscored_failures(record: RunRecord) -> list[str]:
    """Every place a failed or empty reply carries a score as if it were a real one (should be none)."""
    problems = [f"message {m.id} ({m.role}, turn {m.turn}) is empty but not partial"
                for m in record.messages if not m.partial and not m.content.strip()]
    section = record.section
    if record.family == "proactiveeval":
        full = {m.turn for m in record.messages if m.role == "agent" and not m.partial and m.content.strip()}
        problems += [f"turn {c.turn} judged without a full agent reply"
                     for c in section.turn_checks if c.target_reached is not None and c.turn not in full]
    elif record.family == "proactivebench":
        for event in section.events:
            for attempt in event.attempts:
                if attempt.verdicts and not attempt.raw.strip():
                    problems.append(f"event {event.index} attempt {attempt.attempt} judged with an empty reply")
    elif record.family == "chronos":
        for turn in section.turns:
            if turn.reply is not None and not turn.raw.strip():
                problems.append(f"turn {turn.turn} scored an empty reply as a valid one")
            if turn.reply is None and (turn.action_correct or not turn.format_failure):
                problems.append(f"turn {turn.turn} has no valid reply but is not a format failure")
    return problems


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_session_under_faults_ends_clearly_and_keeps_its_transcript(
        family: str, seed: int, tmp_path: Path, tiny_bounds: None, capsys: pytest.CaptureFixture[str]) -> None:
    from proactive_tui.cli.main import main
    from proactive_tui.store import open_store
    from proactive_tui.store.queries import load_record

    env_id, answer, extra = FAMILIES[family]
    responder = FaultyResponder(seed, answer)
    out = tmp_path / "run.json"
    with FakeOpenAIServer(responder=responder) as server:
        rc = main(["run", env_id, "--api-base", server.base_url, "--agent", "openai/agent-m", "--user", "openai/user-m",
                   *(["--judge", "openai/judge-m"] if family != "proactivebench" else []), *extra, "--out", str(out)])
    printed = capsys.readouterr()
    where = f"{family} seed {seed} (faults injected: {dict(responder.injected)})"
    assert out.exists(), f"{where}: no run record; stderr:\n{printed.err[-2000:]}"
    record = RunRecord.model_validate_json(out.read_text())
    termination = record.termination
    assert termination is not None, f"{where}: the session has no termination"
    assert termination.reason in ENDINGS, f"{where}: ended as {termination.reason}: {termination.detail}"
    assert rc == (1 if termination.reason == "error" else 0), f"{where}: exit {rc} for {termination.reason}"
    if termination.reason == "error":
        assert termination.detail.strip() and not TRACEBACK_DETAIL.search(termination.detail), (
            f"{where}: not a clear error: {termination.detail!r}")
    assert "Traceback" not in printed.err, f"{where}: a traceback was printed:\n{printed.err[-2000:]}"

    store = open_store()
    try:
        stored = load_record(store, record.id)
    finally:
        store.close()
    assert [(m.role, m.turn, m.content, m.partial) for m in stored.messages] == [
        (m.role, m.turn, m.content, m.partial) for m in record.messages], f"{where}: the stored transcript differs"
    assert stored.termination is not None and stored.termination.reason == termination.reason, where

    problems = unscored_failures(record)
    assert not problems, f"{where}: " + "; ".join(problems)


def test_retries_are_a_seat_setting_from_the_environment() -> None:
    """The suite (and a CI job that would rather fail fast) sets them with PROACTIVE_TUI_MAX_RETRIES."""
    from proactive_tui.llm.settings import resolve_roles

    roles = resolve_roles(environ={"PROACTIVE_TUI_MAX_RETRIES": "2", "PROACTIVE_TUI_JUDGE_MAX_RETRIES": "0"})
    assert (roles.agent.max_retries, roles.user.max_retries, roles.judge.max_retries) == (2, 2, 0)
