"""The session store: append and read back, delta coalescing, statuses, crashes, migrations, resume."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import ROOT
from engine_helpers import collect, make_session, sample_env, scripted_judge, scripted_user
from proactive_tui.core.events import MessageDelta, MessageDone, MessageRecord, MessageStarted, parse_event
from proactive_tui.core.spec import SessionSpec
from proactive_tui.core.participants import ScriptedParticipant
from proactive_tui.families.proactiveeval.protocol import ProactiveEvalSession, ProactiveEvalSettings, ProactiveEvalSeats
from proactive_tui.core.run_record import fold
from proactive_tui.store import (
    SCHEMA_VERSION, SessionRecorder, SessionRow, Store, StoreError, list_sessions, load_events, load_record,
    open_store, record_events, resume_spec,
)
from proactive_tui.store.db import default_path
from proactive_tui.store.recorder import WRITE_WAIT_S
from proactive_tui.store.queries import effective_status
from proactive_tui.testing.fake_openai import FakeOpenAIServer

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "store"
ENV_ID = "proactiveeval/recommendation/fair/0"


def spec(**settings) -> SessionSpec:
    return SessionSpec(env_id=ENV_ID, settings=ProactiveEvalSettings(**settings).model_dump())


async def recorded(store: Store, session, **settings) -> list:
    async with contextlib.aclosing(record_events(store, spec(**settings), session)) as events:
        return [e async for e in events]


# -- append and read back -----------------------------------------------------------------------


async def test_events_are_appended_and_read_back(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    session = make_session(max_turns=3, live_judging=True)
    emitted = await recorded(store, session, max_turns=3, live_judging=True)
    stored = load_events(store, session.session_id)
    # every event but stream deltas is stored as emitted, in order
    assert [e for e in stored if e.type != "message_delta"] == [e for e in emitted if e.type != "message_delta"]
    seqs = [e.seq for e in stored]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # deltas were coalesced, yet each message's stored deltas add up to its text
    assert sum(e.type == "message_delta" for e in stored) < sum(e.type == "message_delta" for e in emitted)
    for done in (e for e in stored if e.type == "message_done"):
        text = "".join(e.text for e in stored if e.type == "message_delta" and e.message_id == done.message.id)
        assert text == done.message.content
    assert load_record(store, session.session_id) == fold(emitted)
    row = store.session(session.session_id)
    assert row.status == "finished" and row.family == "proactiveeval" and row.env_id == ENV_ID
    assert row.spec["settings"]["max_turns"] == 3 and row.pid == os.getpid()
    assert row.summary == {"turns": 3, "overall": "8/10", "plan": "7/10", "ended": "max_turns"}
    assert store.integrity_check() == "ok"
    with sqlite3.connect(tmp_path / "s.db") as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_default_path_follows_the_data_dir(isolated_dirs: Path) -> None:
    assert default_path() == isolated_dirs / "data" / "sessions.db"
    with open_store() as store:
        assert store.path.exists() and store.schema_version() == SCHEMA_VERSION


def _message_events(message_id: str = "agent-1-abcdef") -> tuple:
    started = MessageStarted(message_id=message_id, role="agent", turn=1, model="m", seq=2, ts="t2")
    deltas = [MessageDelta(message_id=message_id, text=w, seq=3 + i, ts=f"t{3 + i}") for i, w in enumerate(["a", " b", " c"])]
    done = MessageDone(message=MessageRecord(id=message_id, role="agent", content="a b c", turn=1, started_at="t2",
                                             finished_at="t6", model="m"), seq=6, ts="t6")
    return started, deltas, done


def _started_event():
    from proactive_tui.core.events import SessionStarted

    return SessionStarted(session_id="s1", family="proactiveeval", env_id=ENV_ID, environment={"title": "t"},
                          mode="watch", seats={}, settings={}, prompt_version="p", app_version="a", seq=1, ts="t1"), None


def test_deltas_are_flushed_before_any_other_event(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    recorder = SessionRecorder(store)
    started_event, _ = _started_event()
    started, deltas, done = _message_events()
    for event in (started_event, started, *deltas):
        recorder.handle(event)
    assert [r[1] for r in store.event_rows("s1")] == ["session_started", "message_started"]  # deltas still buffered
    recorder.handle(done)
    rows = store.event_rows("s1")
    assert [(r[0], r[1]) for r in rows] == [(1, "session_started"), (2, "message_started"), (3, "message_delta"), (6, "message_done")]
    assert json.loads(rows[2][2])["text"] == "a b c"


def test_deltas_are_flushed_at_least_every_interval(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    recorder = SessionRecorder(store, flush_interval=0.05)
    started_event, _ = _started_event()
    started, deltas, _ = _message_events()
    recorder.handle(started_event)
    recorder.handle(started)
    recorder.handle(deltas[0])
    time.sleep(0.06)
    recorder.handle(deltas[1])  # the interval has passed: both are written now
    assert [json.loads(r[2]).get("text") for r in store.event_rows("s1")][2:] == ["a b"]
    recorder.handle(deltas[2])
    recorder.close()  # a session that never ended: the rest is flushed, the row marked interrupted
    assert [json.loads(r[2]).get("text") for r in store.event_rows("s1")][2:] == ["a b", " c"]
    assert store.session("s1").status == "interrupted"


async def test_timer_flushes_a_stalled_stream(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    recorder = SessionRecorder(store, flush_interval=0.05)
    started_event, _ = _started_event()
    started, deltas, _ = _message_events()
    for event in (started_event, started, deltas[0]):
        recorder.handle(event)
    await asyncio.sleep(0.15)  # no further event arrives: the timer writes the buffered text
    assert [r[1] for r in store.event_rows("s1")][-1] == "message_delta"


# -- statuses -----------------------------------------------------------------------------------


async def test_cancelled_and_interrupted_statuses(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    session = make_session(max_turns=5, user=scripted_user(delay=0.05))
    async with contextlib.aclosing(record_events(store, spec(), session)) as events:
        async for event in events:
            if event.type == "message_done" and event.message.role == "user":
                session.stop()
    assert store.session(session.session_id).status == "stopped"

    session = make_session(max_turns=5, user=scripted_user(delay=0.05))
    async with contextlib.aclosing(record_events(store, spec(), session)) as events:
        async for event in events:
            if event.type == "message_done":
                break  # the consumer walked away before the session ended
    assert store.session(session.session_id).status == "interrupted"
    summaries = {s.id: s for s in list_sessions(store)}
    assert summaries[session.session_id].headline["ended"] is None


def test_a_dead_recording_process_reads_as_interrupted(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(proc.stdout)
    store.create_session(SessionRow(id="x", env_id=ENV_ID, family="proactiveeval", status="running", pid=dead))
    store.create_session(SessionRow(id="y", env_id=ENV_ID, family="proactiveeval", status="running", pid=os.getpid()))
    assert effective_status(store.session("x")) == "interrupted"
    assert effective_status(store.session("y")) == "running"


async def test_a_store_failure_never_stops_the_session(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    problems: list[str] = []
    session = make_session(max_turns=2)
    seen = []
    async with contextlib.aclosing(record_events(store, spec(), session, on_error=problems.append)) as events:
        async for event in events:
            seen.append(event)
            if event.type == "message_done" and len(seen) > 1 and not problems:
                store._conn.close()  # the disk went away
    assert seen[-1].type == "session_ended" and fold(seen).termination.reason == "max_turns"
    assert len(problems) == 1 and "no longer being saved" in problems[0]


# -- crashes ------------------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import asyncio, sys
    sys.path[:0] = [{root!r}, {tests!r}]
    from engine_helpers import make_session, scripted_agent, scripted_user
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.store import Store, record_events

    async def main():
        store = Store({db!r})
        session = make_session(max_turns=50, planning=False, agent=scripted_agent(delay=0.01), user=scripted_user(delay=0.01))
        async for event in record_events(store, SessionSpec(env_id=session.env.id), session):
            print(event.seq, event.type, flush=True)

    asyncio.run(main())
""")


def test_sigkill_mid_session_keeps_every_committed_event(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    code = CHILD.format(root=str(ROOT), tests=str(ROOT / "tests"), db=str(db))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    printed: list[tuple[int, str]] = []
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seq, type_ = line.split()
        printed.append((int(seq), type_))
        if sum(t == "message_done" for _, t in printed) >= 7:  # mid-turn 4
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    with Store(db) as store:
        assert store.integrity_check() == "ok"
        (summary,) = list_sessions(store)
        assert summary.status == "interrupted"
        stored = {seq for seq, *_ in store.event_rows(summary.id)}
        # every event the consumer saw was committed first (deltas may have been coalesced)
        assert {seq for seq, t in printed if t != "message_delta"} <= stored
        record = load_record(store, summary.id)
        assert len([m for m in record.messages if not m.partial]) >= 7
        assert record.termination is None


# -- opening other files ------------------------------------------------------------------------


def test_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    Store(db).close()
    with sqlite3.connect(db) as raw:
        raw.execute(f"PRAGMA user_version={SCHEMA_VERSION + 5}")
    before = db.read_bytes()
    with pytest.raises(StoreError, match="newer proactive-tui") as err:
        Store(db)
    assert "left as it is" in str(err.value)
    assert db.read_bytes() == before


@pytest.mark.parametrize("content", [b"this is not a database at all" * 200, b"SQLite format 3\x00" + b"\xff" * 4000])
def test_corrupt_file_is_refused_and_left_untouched(tmp_path: Path, content: bytes) -> None:
    db = tmp_path / "bad.db"
    db.write_bytes(content)
    with pytest.raises(StoreError, match="not a readable session database"):
        Store(db)
    assert db.read_bytes() == content


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as raw:
        raw.execute("CREATE TABLE notes (x)")
    with pytest.raises(StoreError, match="not a proactive-tui session database"):
        Store(db)


def test_cli_reports_a_broken_database_without_a_traceback(isolated_dirs: Path) -> None:
    db = isolated_dirs / "data" / "sessions.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"garbage" * 1000)
    for argv in (["sessions", "list"], ["sessions", "show", "abc"], ["export", "--all", "-f", "markdown", "-o", "x"]):
        proc = subprocess.run([sys.executable, "-m", "proactive_tui", *argv], cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 1 and "not a readable session database" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    assert db.read_bytes() == b"garbage" * 1000


def test_migration_from_the_v1_schema(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    with sqlite3.connect(db) as raw:
        raw.executescript((FIXTURES / "schema_v1.sql").read_text())
    with Store(db) as store:
        assert store.schema_version() == SCHEMA_VERSION
        (row,) = store.sessions()
        assert row.id == "901de2c0ffee" and row.status == "finished" and row.spec is None and row.summary is None
        (summary,) = list_sessions(store)  # headline scores folded from the old rows' events
        assert summary.headline == {"turns": 2, "overall": "7/10", "plan": "7/10", "ended": "max_turns"}
        assert summary.human_seats == ["user"]
        record = load_record(store, row.id)
        assert [m.content for m in record.messages if m.role == "user"] == ["Every time, honestly.", "Yes please, under 100 euros."]
        assert store.integrity_check() == "ok"
    backup = tmp_path / "sessions.v1.backup.db"
    with sqlite3.connect(backup) as raw:  # the file as it was before the upgrade
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
        assert raw.execute("SELECT count(*) FROM events").fetchone()[0] > 0


# -- resume -------------------------------------------------------------------------------------


def agent_saying(prefix: str, delay: float = 0.0) -> ScriptedParticipant:
    from engine_helpers import scripted_agent

    agent = scripted_agent(delay=delay)
    agent.script = lambda req: f"{prefix} agent turn {req.turn}"
    return agent


async def test_resume_after_a_truncated_log_keeps_the_first_turns(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    first = ProactiveEvalSession(sample_env(), ProactiveEvalSeats(agent=agent_saying("first"), user=scripted_user(), judge=scripted_judge()),
                            ProactiveEvalSettings(max_turns=4))
    await recorded(store, first, max_turns=4)
    # simulate a crash after turn 2: drop every event after the user's turn-2 message
    events = load_events(store, first.session_id)
    cut = next(e.seq for e in events if e.type == "message_done" and e.message.role == "user" and e.message.turn == 2)
    with sqlite3.connect(tmp_path / "s.db") as raw:
        raw.execute("DELETE FROM events WHERE seq > ?", (cut,))
        raw.execute("UPDATE sessions SET status = 'running', summary = NULL, pid = 0")
    plan = resume_spec(store, first.session_id)
    assert plan.turns == 2 and plan.spec.settings["max_turns"] == 4 and plan.env.id == ENV_ID
    judge = scripted_judge()
    second = ProactiveEvalSession(plan.env, ProactiveEvalSeats(agent=agent_saying("second"), user=scripted_user(), judge=judge),
                             ProactiveEvalSettings(**plan.spec.settings), resume_from=plan.record)
    await recorded(store, second, max_turns=4)
    record = load_record(store, second.session_id)
    assert record.termination.reason == "max_turns" and record.resumed_from == {"session_id": first.session_id, "turns": 2}
    assert [(m.role, m.turn) for m in record.messages] == [(r, t) for t in range(1, 5) for r in ("agent", "user")]
    agent_lines = [m.content for m in record.messages if m.role == "agent"]
    assert agent_lines == ["first agent turn 1", "first agent turn 2", "second agent turn 3", "second agent turn 4"]
    assert record.section.planning.score == 7 and [c.turn for c in record.section.turn_checks] == [1, 2, 3, 4]
    # the kept turns were not judged again; the new agent saw the old turns as context
    assert record.messages[4].context_turns == [1, 2] and record.messages[4].visible_context[1].content == "first agent turn 1"
    assert store.session(second.session_id).resumed_from == first.session_id
    assert load_record(store, first.session_id).termination is None  # the original log is untouched


async def test_resume_runs_a_turn_check_the_crash_cut_off(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    first = make_session(max_turns=3, planning=False)
    await recorded(store, first, max_turns=3, planning=False)
    with sqlite3.connect(tmp_path / "s.db") as raw:  # turn 2's check never happened; neither did turn 3
        cut = [r for r in raw.execute("SELECT seq, type, payload FROM events ORDER BY seq")]
        keep = next(seq for seq, t, p in cut if t == "message_done" and '"role":"user","content":"user answers turn 2"' in p)
        raw.execute("DELETE FROM events WHERE seq > ? OR type = 'proactiveeval.turn_checked' AND payload LIKE '%\"turn\":2%'", (keep,))
        raw.execute("UPDATE sessions SET status = 'interrupted', summary = NULL")
    plan = resume_spec(store, first.session_id)
    second = make_session(max_turns=3, planning=False, reach_at=2)
    second.resume_from = plan.record
    record = fold(await collect(second))
    assert record.termination.reason == "target_reached"
    assert [c.turn for c in record.section.turn_checks] == [1, 2] and len(record.messages) == 4


def test_finished_sessions_are_not_resumed(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    session = make_session(max_turns=1)
    asyncio.run(recorded(store, session, max_turns=1))
    with pytest.raises(StoreError, match="nothing to resume"):
        resume_spec(store, session.session_id)


# -- through the command line -------------------------------------------------------------------


def counting_responder():
    count = {"n": 0}

    def respond(body: dict) -> str:
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
        if name == "TurnVerdict":
            return json.dumps({"reasoning": "not yet", "target_reached": False, "covered_steps": [1]})
        if name == "GuidanceJudgement":
            return json.dumps({"reasoning": "ok", "effectiveness": 6, "personalization": 6, "tone": 6, "engagement": 6,
                               "naturalness": 6, "overall": 6})
        count["n"] += 1
        return f"line number {count['n']} of the dialogue"

    return respond


def cli(*argv: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "proactive_tui", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, **kw)


def test_cli_run_killed_then_listed_shown_and_resumed(isolated_dirs: Path) -> None:
    with FakeOpenAIServer(latency=0.15, responder=counting_responder()) as server:
        cmd = [sys.executable, "-m", "proactive_tui", "run", ENV_ID, "--api-base", server.base_url, "--agent", "openai/a",
               "--user", "openai/u", "--judge", "openai/j", "--max-turns", "4", "--no-planning"]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"})
        out = ""
        deadline = time.time() + 90
        while time.time() < deadline and "[turn 3] agent" not in out:
            char = proc.stdout.read(1)
            if not char:
                break
            out += char
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert "[turn 3] agent" in out, proc.stderr.read()

        listed = cli("sessions", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
        assert row["status"] == "interrupted" and row["headline"]["turns"] == 2
        with Store(default_path()) as store:
            assert store.integrity_check() == "ok"
            before = load_record(store, row["id"])
        shown = cli("sessions", "show", row["id"][:6], env={**os.environ, "COLUMNS": "200"})
        assert shown.returncode == 0 and "sessions resume" in shown.stdout and before.messages[0].content in shown.stdout

        resumed = cli("sessions", "resume", row["id"][:8], env={**os.environ, "COLUMNS": "200"})
        assert resumed.returncode == 0, resumed.stderr
        assert "after 2 complete turns" in resumed.stderr
    listed = [json.loads(line) for line in cli("sessions", "list", "--json").stdout.splitlines()]
    new = next(r for r in listed if r["resumed_from"] == row["id"])
    assert new["status"] == "finished" and new["headline"]["turns"] == 4
    with Store(default_path()) as store:
        record = load_record(store, new["id"])
    assert [(m.role, m.turn) for m in record.messages] == [(r, t) for t in range(1, 5) for r in ("agent", "user")]
    kept = [m for m in before.messages if not m.partial and m.turn <= 2]
    assert [m.content for m in record.messages[:4]] == [m.content for m in kept]
    assert record.messages[4].content not in [m.content for m in before.messages if not m.partial]
    assert record.section.guidance is not None and record.section.guidance.overall == 6


def test_sessions_list_show_delete(isolated_dirs: Path) -> None:
    with Store(default_path()) as store:
        for max_turns in (1, 2):
            asyncio.run(recorded(store, make_session(max_turns=max_turns), max_turns=max_turns))
        ids = [s.id for s in list_sessions(store)]
    table = cli("sessions", "list", env={**os.environ, "COLUMNS": "200"})
    assert table.returncode == 0 and all(i in table.stdout for i in ids) and "overall" in table.stdout
    assert cli("sessions", "list", "--env", "proactiveeval/persuasion", "--json").stdout == ""
    assert len(cli("sessions", "list", "--env", "proactiveeval/recommendation", "--json").stdout.splitlines()) == 2
    shown = cli("sessions", "show", ids[0], "--json")
    assert json.loads(shown.stdout)["id"] == ids[0]
    refused = cli("sessions", "delete", ids[0], stdin=subprocess.DEVNULL)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert cli("sessions", "delete", ids[0], "--yes").returncode == 0
    missing = cli("sessions", "show", ids[0])
    assert missing.returncode == 1 and "no session with id" in missing.stderr and "Traceback" not in missing.stderr
    with Store(default_path()) as store:
        assert [s.id for s in list_sessions(store)] == ids[1:] and store.event_rows(ids[0]) == []


def test_run_records_unless_no_store(isolated_dirs: Path) -> None:
    from test_run_command import judge_aware_responder

    with FakeOpenAIServer(responder=judge_aware_responder) as server:
        base = ["run", "proactiveeval/persuasion/fair/0", "--api-base", server.base_url, "--agent", "openai/a",
                "--user", "openai/u", "--judge", "openai/j", "--max-turns", "2", "--quiet"]
        assert cli(*base, "--no-store").returncode == 0
        assert not default_path().exists()
        done = cli(*base)
    assert done.returncode == 0 and "saved as session" in done.stderr
    with Store(default_path()) as store:
        (summary,) = list_sessions(store)
        row = store.session(summary.id)
    assert summary.status == "finished" and summary.models["agent"] == "openai/a"
    assert SessionSpec.model_validate(row.spec).roles.agent.model == "openai/a"
    assert parse_event(store_first_payload(summary.id)).type == "session_started"


def store_first_payload(session_id: str) -> str:
    with Store(default_path()) as store:
        return store.event_rows(session_id)[0][2]


def test_history_commands_stay_light(isolated_dirs: Path) -> None:
    code = ("import sys, io, contextlib\nfrom proactive_tui.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['sessions', 'list'])\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'litellm', 'textual', 'llama_cpp', 'openai'}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stderr


# -- a locked database, and text that is not storable -------------------------------------------

async def _record_with_lock(tmp_path: Path, release_after: int | None, close_retry_s: float = 5.0):
    """Record a session while another connection holds the write lock from the first finished
    message on, releasing it after `release_after` more events (None: never, until close)."""
    db = tmp_path / "s.db"
    store = Store(db, busy_timeout_s=0.05)
    problems: list[str] = []
    recorder = SessionRecorder(store, spec(), on_error=problems.append)
    other = sqlite3.connect(db, isolation_level=None, timeout=0.05)
    seen, locked_at = [], None
    session = make_session(max_turns=2)
    events = session.events()
    async for event in events:
        recorder.handle(event)
        seen.append(event)
        if locked_at is None and event.type == "message_done":
            other.execute("BEGIN IMMEDIATE")  # another process writes and holds the lock
            locked_at = len(seen)
        elif release_after is not None and locked_at and len(seen) == locked_at + release_after:
            other.execute("COMMIT")
    recorder.close(retry_s=close_retry_s)
    if other.in_transaction:
        other.execute("COMMIT")
    other.close()
    return store, recorder, seen, problems


async def test_a_locked_database_keeps_the_events_and_writes_them_once_it_clears(tmp_path: Path) -> None:
    store, recorder, seen, problems = await _record_with_lock(tmp_path, release_after=3)
    assert seen[-1].type == "session_ended"
    assert recorder.saved and not recorder.failed
    stored = load_events(store, seen[0].session_id)
    seqs = [e.seq for e in stored]
    assert seqs == sorted(seqs)  # written in order, the kept ones first
    assert {e.seq for e in seen if e.type != "message_delta"} <= set(seqs)  # none lost to the lock
    assert store.session(seen[0].session_id).status == "finished"
    assert any("keeping the events and retrying" in p for p in problems)
    assert problems[-1].startswith("the session database is writable again")


async def test_a_lock_that_never_clears_is_reported_as_not_saved(tmp_path: Path) -> None:
    store, recorder, seen, problems = await _record_with_lock(tmp_path, release_after=None, close_retry_s=0.3)
    assert seen[-1].type == "session_ended"  # the session itself ran to its end
    assert not recorder.saved and "stayed locked" in recorder.unsaved_reason
    assert "the run record (--out) still holds the whole session" in problems[-1]


async def test_closing_while_the_database_is_locked_keeps_the_event_loop_running(tmp_path: Path) -> None:
    """`record_events` ends with `aclose`: while its last writes wait for another process's lock,
    the rest of the program (the playground, the other sessions of a batch) keeps running. The
    old synchronous close slept on the loop's thread, so nothing else ran until it gave up."""
    db = tmp_path / "s.db"
    store = Store(db, busy_timeout_s=0.05)
    other = sqlite3.connect(db, isolation_level=None, timeout=0.05)
    recorder = SessionRecorder(store, spec())
    events = make_session(max_turns=1).events()
    async for event in events:
        recorder.handle(event)
        if event.type == "message_done" and not other.in_transaction:
            other.execute("BEGIN IMMEDIATE")
    ticks = 0

    async def the_rest_of_the_app() -> None:
        nonlocal ticks
        while other.in_transaction:
            ticks += 1
            if ticks == 5:
                other.execute("COMMIT")  # the other process finishes its write
            await asyncio.sleep(0.05)

    rest = asyncio.create_task(the_rest_of_the_app())
    await recorder.aclose(retry_s=60)
    await rest
    other.close()
    assert ticks >= 5  # the loop ran while the close waited for the lock
    assert recorder.saved and store.session(recorder.session_id).status == "finished"


async def test_a_lone_surrogate_in_a_reply_is_stored_as_a_replacement_character(tmp_path: Path) -> None:
    from proactive_tui.core.participants import LLMParticipant
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.settings import ModelSettings
    from proactive_tui.store.db import event_json

    with FakeOpenAIServer() as server:
        server.script(*["half a pair \ud800 then more"] * 4)
        model = LLMParticipant(Gateway(), ModelSettings(model="openai/fake", api_base=server.base_url))
        session = make_session(max_turns=1, planning=False, user=model)
        store = Store(tmp_path / "s.db")
        problems: list[str] = []
        seen = [e async for e in record_events(store, spec(), session, on_error=problems.append)]
    assert problems == [] and seen[-1].type == "session_ended"
    users = [e.message.content for e in seen if e.type == "message_done" and e.message.role == "user"]
    assert users and all(u == "half a pair \ufffd then more" for u in users)
    record = load_record(store, seen[0].session_id)
    assert any(m.content == "half a pair \ufffd then more" for m in record.messages)
    # and should one get past the participants, the store writes U+FFFD instead of failing
    from proactive_tui.core.events import ErrorRaised

    assert json.loads(event_json(ErrorRaised(seat=None, message="x\udfffy")))["message"] == "x\ufffdy"


def test_sessions_list_at_80_columns_keeps_model_names_whole(isolated_dirs: Path) -> None:
    model = "openrouter/anthropic/claude-sonnet-4-5"
    with Store(default_path()) as store:
        store.create_session(SessionRow(id="abc123def456", env_id="chronos/house-hunting-bungalow/negative",
                                        family="chronos", status="finished", models={"agent": {"model": model}},
                                        created_at="2026-12-01T10:00:00", updated_at="2026-12-01T10:00:00"))
    for columns in ("80", "160"):
        proc = subprocess.run([sys.executable, "-m", "proactive_tui", "sessions", "list"], cwd=ROOT, capture_output=True,
                              text=True, env={**os.environ, "COLUMNS": columns})
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert all(len(line) <= int(columns) for line in lines), proc.stdout
        assert model in proc.stdout and "chronos/house-hunting-bungalow/negative" in proc.stdout, proc.stdout
        assert "finished" in proc.stdout


def test_labels_and_comparisons_are_kept_beside_sessions_and_go_with_them(tmp_path: Path) -> None:
    """Schema v5 (issue 18): a person's label replaces their earlier one on the same verdict and
    reads back typed; a comparison keeps its sessions in order and its vote; deleting a session
    deletes its labels."""
    from proactive_tui.store.db import ComparisonRow, LabelRow

    with Store(tmp_path / "s.db") as store:
        store.create_session(SessionRow(id="s1", env_id="e", family="proactiveeval", status="finished",
                                        created_at="2026-12-02T00:00:00", updated_at="2026-12-02T00:00:00"))
        first = LabelRow(session_id="s1", verdict="turn_check:2", kind="turn check", judge="openai/j",
                         judge_value=True, agree=True, value=True, created_at="2026-12-02T00:01:00")
        store.put_label(first)
        store.put_label(first.model_copy(update={"agree": False, "value": False, "note": "not yet, [b]really[/b]"}))
        (label,) = store.labels("s1")
        assert (label.agree, label.value, label.judge_value, label.note) == (False, False, True, "not yet, [b]really[/b]")
        assert store.labels() == [label] and store.labels("other") == []
        comparison = ComparisonRow(id="c1", env_id="e", sessions=["s1", "s2"], blind=True, created_at="2026-12-02T00:02:00")
        store.put_comparison(comparison)
        store.put_comparison(comparison.model_copy(update={"vote": "s2", "reason": "asked first", "voted_at": "t"}))
        (kept,) = store.comparisons("s2")
        assert kept.sessions == ["s1", "s2"] and kept.blind and kept.vote == "s2" and store.comparisons("s3") == []
        assert store.delete_session("s1") and store.labels() == []


# -- the busy timeout: set when it changes, never left short -----------------------------------

async def test_a_recorded_session_sets_the_busy_timeout_once_not_around_every_event(tmp_path: Path) -> None:
    """The recorder writes every event inside `waiting_at_most`. Setting the connection's busy
    timeout on the way in and back on the way out was two more statements per event; now the
    store sets it only when the wait asked for changes."""
    store = Store(tmp_path / "s.db")
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    recorder = SessionRecorder(store, spec())
    async for event in make_session(max_turns=2).events():
        recorder.handle(event)
    recorder.close()
    inserts = [s for s in statements if s.startswith("INSERT INTO events")]
    pragmas = [s for s in statements if s.startswith("PRAGMA busy_timeout")]
    assert len(inserts) >= 10
    assert pragmas == [f"PRAGMA busy_timeout={int(WRITE_WAIT_S * 1000)}"]


def test_a_write_after_a_short_wait_waits_the_stores_own_timeout_again(tmp_path: Path) -> None:
    """Inside `waiting_at_most(0)` a locked database fails the write at once (transient); the next
    write outside it waits the store's busy timeout again, here long enough for the other
    process's transaction to end."""
    import threading

    db = tmp_path / "s.db"
    store = Store(db, busy_timeout_s=60.0)
    store.create_session(SessionRow(id="s1", env_id=ENV_ID, family="proactiveeval", status="running"))
    other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    with pytest.raises(StoreError) as failed, store.waiting_at_most(0):
        store.append("s1", 1, "x", "{}", "2026-01-01T00:00:01")
    assert failed.value.transient
    committed = threading.Event()

    def commit_soon() -> None:
        time.sleep(0.2)
        other.execute("COMMIT")
        committed.set()

    threading.Thread(target=commit_soon, daemon=True).start()
    store.append("s1", 1, "x", "{}", "2026-01-01T00:00:01")  # waits for the lock instead of failing
    assert committed.is_set()
    assert other.execute("SELECT seq, type FROM events WHERE session_id = 's1'").fetchall() == [(1, "x")]
    other.close()
