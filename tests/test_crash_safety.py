"""Crash safety: headless sessions of every family SIGKILLed at seeded random points, then resumed.

Per family, 20 kill points: a `run` is started in a subprocess and killed once the store holds a
seeded random number of its events (polled from the store file, never after a sleep); the killed
session is resumed (`sessions resume`), and that resumed session is itself killed further on, and
so on, until 20 kills were made; the last one is resumed to its end. After each kill:

- the store passes `PRAGMA integrity_check`;
- every event the test read from the store just before the kill is still there;
- the session shows as interrupted and can be resumed (the next link of the chain does).

The session each chain ends with must have the result of an uninterrupted run with the same
seats (same section, scores and ending), and a resumed session must never re-ask a model for a
step its predecessor committed, nor skip one (both follow from the equal results and the
per-family replay tests in test_resume_replay.py).

The subprocesses run the real command line (`proactive_tui.cli.main.main`: HeadlessRun, the
recorder, the store) with the gateway's one network call (`Gateway.complete`) answered by the
deterministic responders below instead of litellm and an HTTP server: importing litellm costs
seconds per process, and this suite starts about seventy. Everything above that call (structured
output negotiation, parsing, re-asks) is the real gateway. The real transport to the fake server
is covered by test_store.py's SIGKILL test and the fake-server run tests.

Run as `python tests/test_crash_safety.py child ARGV...`, this file is that subprocess.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
API_BASE = "http://fake.invalid/v1"

# -- the subprocess: deterministic seats behind the real gateway ---------------------------------


def _schema(body: dict) -> str | None:
    fmt = body.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("name") or fmt.get("name") or _schema_in_prompt(body)


def _schema_in_prompt(body: dict) -> str | None:
    last = body["messages"][-1]["content"] if body.get("messages") else ""
    for name in ("PlanDraft", "PlanJudgement", "TurnVerdict", "GuidanceJudgement", "ReplyReading", "AgentReply"):
        if name in last:
            return name
    return None


def proactiveeval_responder(body: dict) -> str:
    """Replies that depend only on the request (so a resumed session gets the same ones)."""
    name = _schema(body)
    if name == "PlanDraft":
        return json.dumps({"target": "pick a laptop", "sub_targets": ["ask the budget", "compare two", "suggest one"]})
    if name == "PlanJudgement":
        return json.dumps({"reasoning": "close to the reference", "score": 7})
    if name == "TurnVerdict":
        turns = body["messages"][-1]["content"].count("Assistant: ")
        return json.dumps({"reasoning": f"turn {turns}", "target_reached": False, "covered_steps": [min(turns, 3)]})
    if name == "GuidanceJudgement":
        turns = body["messages"][-1]["content"].count("Assistant: ")
        return json.dumps({"reasoning": "steady", "effectiveness": 6, "personalization": 7, "tone": 8,
                           "engagement": 6, "naturalness": 7, "overall": min(10, 3 + turns)})
    n = len(body["messages"])
    who = "agent" if "proactive" in body["messages"][0]["content"].lower() else "user"
    return f"{who} line after {n} messages: " + " ".join(f"w{i}" for i in range(n % 5 + 3))


def proactivebench_responder(body: dict) -> str:
    name = _schema(body)
    last = body["messages"][-1]["content"]
    if name in ("ProposalReply", "CandidatesReply"):
        if not last.startswith('{"Instructions": '):  # a retry after a rejection: stay quiet
            return json.dumps({"Purpose": "p", "Thoughts": "t", "Proactive Task": "null", "Response": "null"})
        event = json.loads(last.split('"Observation": "', 1)[1][:-2])["Event"]
        task = f"Offer help with: {event[:30]}" if len(event) % 2 == 0 else "null"
        return json.dumps({"Purpose": "p", "Thoughts": "t", "Proactive Task": task, "Response": "Shall I?"})
    data = json.loads(last)
    accepted = (data["Proposed Task"] is None) == (len(data["Observations (Time Ascending)"]) % 3 == 0)
    return json.dumps({"thought": "fair enough", "judgement": "accepted" if accepted else "rejected"})


def _chronos_reply(action: str, status: str, text: str, trigger: dict | None = None) -> str:
    return json.dumps({"response_text": text, "proactive_action": action,
                       "trigger_condition": trigger or {"type": None, "value": None},
                       "task_description": {"intention": "buy a car", "constraints": {"budget": "low"}, "status": status}})


def chronos_responder(body: dict) -> str:
    """The protocol-following agent of chronos_helpers.scripted_agent_responder, the user a fixed
    line, the judge reading by the reply's words."""
    name = _schema(body)
    if name == "ReplyReading":
        return json.dumps({"reasoning": "fake judge", "reading": "other"})
    if name != "AgentReply":
        return "My budget is about 12,000 and I'd like under 90,000 km."
    last = body["messages"][-1]["content"]
    if 'source="internal_trigger"' in last:
        return _chronos_reply("KEEP_SILENT", "IN_PROGRESS", "not yet")
    if 'source="tool_call"' in last:
        return _chronos_reply("NO_ACTION", "PENDING", "Nothing fits yet. What is your budget?")
    user_msgs = [m for m in body["messages"] if m["role"] == "user" and "<observation" not in m["content"]
                 and "could not be used" not in m["content"]]
    if len(user_msgs) == 1:
        return _chronos_reply("INFO_RETRIEVAL", "PENDING", "Let me check.")
    if len(user_msgs) == 2:
        return _chronos_reply("NO_ACTION", "PENDING", "Noted. Anything else?")
    return _chronos_reply("SET_REMINDER", "IN_PROGRESS", "I'll watch for it.", {"type": "EVENT", "value": "a match"})


RESPONDERS = {"proactiveeval": proactiveeval_responder, "proactivebench": proactivebench_responder,
              "chronos": chronos_responder}


def answer_in_process(family: str, setattr=setattr) -> None:
    """Answer the gateway's network call with `family`'s responder (in this process), and let
    every model string through the seat preflight (it would ask litellm)."""
    import asyncio

    from proactive_tui.llm import preflight
    from proactive_tui.llm import gateway

    respond = RESPONDERS[family]

    async def complete(self, settings, messages, *, on_retry=None, on_delta=None, structured=False, **extra):
        text = respond({"model": settings.model, "messages": messages, **extra})
        await asyncio.sleep(0.004)  # a model takes a while: the parent's poll gets to see each step
        if on_delta is not None:
            for k, word in enumerate(text.split(" ")):
                result = on_delta(word if k == 0 else " " + word)
                if asyncio.iscoroutine(result):
                    await result
        tokens = len(text.split())
        return gateway.Completion(text=text, model=settings.model,
                                  usage=gateway.Usage(prompt_tokens=10, completion_tokens=tokens, total_tokens=10 + tokens))

    setattr(gateway.Gateway, "complete", complete)
    setattr(preflight, "check_seats", lambda spec, seats: [])


def child(family: str, argv: list[str]) -> int:
    """The subprocess: `proactive-tui ARGV` with the gateway's network call answered in-process."""
    answer_in_process(family)
    from proactive_tui.cli.main import main

    return main(argv)


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] == "child":
    raise SystemExit(child(sys.argv[2], sys.argv[3:]))


# -- the tests ---------------------------------------------------------------------------------------

import pytest  # noqa: E402  (the subprocess above does not need it)

KILLS_PER_FAMILY = 20
SEATS = ["--api-base", API_BASE, "--agent", "openai/agent-m", "--user", "openai/user-m"]
JUDGE = ["--judge", "openai/judge-m"]
RUNS = {
    "proactiveeval": (["run", "proactiveeval/recommendation/fair/0", *SEATS, *JUDGE, "--max-turns", "5", "--no-early-stop",
                       "--live"], 1501),
    "proactivebench": (["run", "proactivebench/coding_01", *SEATS, "--max-events", "8", "--retries", "1"], 1502),
    "chronos": (["run", "chronos/car-purchase-towing/negative", *SEATS, *JUDGE], 1503),
}


def _env(data: Path) -> dict[str, str]:
    return {**os.environ, "PROACTIVE_TUI_DATA": str(data), "PROACTIVE_TUI_CONFIG": str(data / "config.toml"),
            "PROACTIVE_TUI_NO_PRELOAD": "1", "COLUMNS": "160", "PYTHONPATH": os.pathsep.join(
                [str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def _start(family: str, argv: list[str], data: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "child", family, *argv, "--quiet"], cwd=ROOT, env=_env(data),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _read(db: Path, sql: str, args: tuple = ()) -> list[tuple]:
    """One read of the store from outside the process writing it (read-only, its own connection)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as con:
        return con.execute(sql, args).fetchall()


def _session_of(db: Path, pid: int) -> str | None:
    if not db.exists():
        return None
    try:
        rows = _read(db, "SELECT id FROM sessions WHERE pid = ?", (pid,))
    except sqlite3.OperationalError:  # the schema is being created
        return None
    return rows[0][0] if rows else None


def _poll_and_kill(proc: subprocess.Popen, db: Path, threshold: int | None) -> tuple[str | None, set[int]]:
    """Watch the store until the process's session holds `threshold` events, read which ones,
    then SIGKILL it (None: let it run to its end). One read-only connection, a count per poll."""
    if threshold is None:
        return None, set()
    con: sqlite3.Connection | None = None
    session_id = None
    try:
        while proc.poll() is None:
            time.sleep(0.003)
            try:
                if con is None:
                    if not db.exists():
                        continue
                    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
                if session_id is None:
                    row = con.execute("SELECT id FROM sessions WHERE pid = ?", (proc.pid,)).fetchone()
                    session_id = row[0] if row else None
                    continue
                (count,) = con.execute("SELECT COUNT(*) FROM events WHERE session_id = ?", (session_id,)).fetchone()
            except sqlite3.OperationalError:  # the schema is being created
                continue
            if count >= threshold:
                seen = {seq for (seq,) in con.execute("SELECT seq FROM events WHERE session_id = ?", (session_id,))}
                proc.send_signal(signal.SIGKILL)
                return session_id, seen
    finally:
        if con is not None:
            con.close()
    return session_id, set()


def _seqs(db: Path, session_id: str) -> set[int]:
    return {seq for (seq,) in _read(db, "SELECT seq FROM events WHERE session_id = ?", (session_id,))}


def _record(data: Path, session_id: str):
    from proactive_tui.store import Store, load_record

    with Store(data / "sessions.db") as store:
        return load_record(store, session_id)


def _result(record) -> dict:
    """What must not depend on interruptions: the family's section, the scores, the ending, the dialogue."""
    return {"section": record.section.model_dump(mode="json"), "scores": [s.model_dump(mode="json") for s in record.scores],
            "ended": record.termination.reason if record.termination else None,
            "messages": [(m.role, m.turn, m.content) for m in record.messages if not m.partial]}


def _first_difference(got, want, path: str = "") -> str:
    """Where two results first differ (for the assertion message)."""
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want), key=str):
            if got.get(key) != want.get(key):
                return _first_difference(got.get(key), want.get(key), f"{path}.{key}")
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (a, b) in enumerate(zip(got, want)):
            if a != b:
                return _first_difference(a, b, f"{path}[{i}]")
    return f"{path}: got {got!r:.300}, uninterrupted {want!r:.300}"


def _run_in_process(family: str, argv: list[str], data: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The uninterrupted run, in this process (same command line, same responders)."""
    for key, value in _env(data).items():
        if key.startswith("PROACTIVE_TUI_"):
            monkeypatch.setenv(key, value)
    answer_in_process(family, monkeypatch.setattr)
    from proactive_tui.cli.main import main

    assert main([*argv, "--quiet"]) == 0, f"{family}: the uninterrupted run failed"
    (row,) = _read(data / "sessions.db", "SELECT id FROM sessions")
    return row[0]


@pytest.mark.parametrize("family", list(RUNS))
def test_sigkill_at_seeded_points_then_resume_to_the_uninterrupted_result(family: str, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    argv, seed = RUNS[family]
    rng = random.Random(seed)
    reference_dir = tmp_path / "reference"
    reference_id = _run_in_process(family, argv, reference_dir, monkeypatch)
    expected = _result(_record(reference_dir, reference_id))
    total = len(_seqs(reference_dir / "sessions.db", reference_id))

    data = tmp_path / "data"
    db = data / "sessions.db"
    kills, chains, parent, floor = 0, 0, None, 0
    log: list[str] = []
    while True:
        what = f"{family} seed {seed}, kill {kills + 1}, chain {chains + 1} ({', '.join(log[-4:])})"
        # kill somewhere in the next stretch: past the events the parent already had (so each
        # link gets further), at most a third of the session on
        threshold = floor + rng.randint(1, max(2, total // 3)) if kills < KILLS_PER_FAMILY else None
        proc = _start(family, ["sessions", "resume", parent, "--api-base", API_BASE] if parent else argv, data)
        session_id, seen = _poll_and_kill(proc, db, threshold)
        _, err = proc.communicate(timeout=120)
        session_id = session_id or _session_of(db, proc.pid)
        assert session_id, f"{what}: no session recorded\n{err[-2000:]}"
        if proc.returncode == -signal.SIGKILL:
            kills += 1
            log.append(f"killed {session_id[:6]} at {len(seen)} events")
            assert _read(db, "PRAGMA integrity_check") == [("ok",)], what
            after = _seqs(db, session_id)
            assert seen <= after, f"{what}: committed events lost: {sorted(seen - after)[:10]}"
            from proactive_tui.store import Store, effective_status

            with Store(db) as store:
                status = effective_status(store.session(session_id))
            if status == "interrupted":
                parent, floor = session_id, len(after)
                continue
            assert status == "finished", f"{what}: {status}"  # killed after its end was committed
        else:
            assert proc.returncode == 0, f"{what}: exit {proc.returncode}\n{err[-2000:]}"
        record = _record(data, session_id)
        got = _result(record)
        assert got == expected, (f"{what}: the resumed chain ended differently from the uninterrupted run: "
                                 f"{_first_difference(got, expected)}")
        if parent is not None:
            assert record.resumed_from and record.resumed_from["session_id"] == parent, what
        log.append(f"{session_id[:6]} finished")
        chains += 1
        if kills >= KILLS_PER_FAMILY:
            break
        parent, floor = None, 0  # a fresh session for the kill points left
    assert kills == KILLS_PER_FAMILY, f"{family} seed {seed}: {log}"
