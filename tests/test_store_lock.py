"""A headless session while another process holds the session database's write lock (issue 33, 6).

The session must go on as if the store were free: every turn runs while the lock is still held,
its events are kept in order, and once the other process lets go they are all written, in order,
and the run says so. Before the fix each store write waited out SQLite's 5 s busy timeout on the
event loop's thread, so a session ran at one event every 5-23 s and ten turns took several minutes.

The test waits for the session's end with a hang guard (minutes, far beyond what ten turns on the
fake server take even on a loaded machine) and asserts by counts and order, never by speed: the
session printed its end while the other process still held the lock, and nothing had been
written by then.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from test_store import ENV_ID, counting_responder
from proactive_tui.core.run_record import RunRecord, fold
from proactive_tui.store import Store, load_events
from proactive_tui.store.db import default_path
from proactive_tui.testing.fake_openai import FakeOpenAIServer

TURNS = 10
HANG_GUARD_S = 240
"""Hang guard only: ten turns on the fake server take seconds; before the fix, 240 s reached turn 2."""

LOCKER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")  # holds the write lock until told to let go
db.execute("UPDATE sessions SET title = title")
print("locked", flush=True)
sys.stdin.readline()
db.execute("COMMIT")
print("released", flush=True)
"""


class _Lines:
    """A pipe's lines as they come, read on a thread (so waiting for one is bounded)."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line)

    def wait_for(self, text: str, proc: subprocess.Popen, what: str) -> None:
        guard = time.monotonic() + HANG_GUARD_S
        while not any(text in line for line in self.lines):
            assert proc.poll() is None or any(text in line for line in self.lines), \
                f"{what} exited before {text!r}:\n{''.join(self.lines)[-3000:]}"
            assert time.monotonic() < guard, (f"{text!r} not printed within the {HANG_GUARD_S}s hang guard: the "
                                              f"session is stalled by the lock. So far:\n{''.join(self.lines)[-3000:]}")
            time.sleep(0.05)


def test_a_session_runs_every_turn_while_another_process_holds_the_write_lock(isolated_dirs: Path) -> None:
    Store(default_path()).close()  # the database exists, as it does after any earlier session
    out = isolated_dirs / "run.json"
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(default_path())], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    started: list[subprocess.Popen] = [locker]
    try:
        assert locker.stdout.readline().strip() == "locked"
        with FakeOpenAIServer(responder=counting_responder()) as server:
            run = subprocess.Popen(
                [sys.executable, "-m", "proactive_tui", "run", ENV_ID, "--api-base", server.base_url,
                 "--agent", "openai/a", "--user", "openai/u", "--judge", "openai/j", "--max-turns", str(TURNS),
                 "--no-planning", "--out", str(out)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"})
            started.append(run)
            stdout = _Lines(run.stdout)
            stderr = _Lines(run.stderr)
            stdout.wait_for("session ended:", run, "the run")

            # Every turn ran while the other process still held the lock, and nothing reached the store.
            assert locker.poll() is None
            printed = "".join(stdout.lines)
            assert [t for t in range(1, TURNS + 1) if f"[turn {t}] user" in printed] == list(range(1, TURNS + 1))
            with sqlite3.connect(default_path()) as reader:  # WAL: a reader is never blocked by the writer
                assert reader.execute("SELECT count(*) FROM events").fetchone() == (0,)
            assert run.poll() is None  # still waiting to save, not given up

            locker.stdin.write("\n")
            locker.stdin.flush()
            assert locker.wait(timeout=60) == 0
            assert run.wait(timeout=HANG_GUARD_S) == 0
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    # Rich wraps a warning at the console's width (COLUMNS=200); a long temporary path breaks the
    # line anywhere, so the words are compared, not the line breaks
    warnings = " ".join("".join(stderr.lines).split())
    assert warnings.count("keeping the events and retrying while the session goes on") == 1, warnings
    assert "the session database is writable again: every kept event is saved" in warnings
    assert "saved as session" in warnings and "NOT saved" not in warnings

    record = RunRecord.model_validate_json(out.read_text(encoding="utf-8"))
    with Store(default_path()) as store:
        events = load_events(store, record.id)
        row = store.session(record.id)
    seqs = [e.seq for e in events]
    assert seqs == sorted(set(seqs))  # in the order they were emitted, none twice
    assert events[0].type == "session_started" and events[-1].type == "session_ended"
    assert row is not None and row.status == "finished"
    stored = fold(events)
    assert [(m.role, m.turn, m.content) for m in stored.messages] == \
        [(m.role, m.turn, m.content) for m in record.messages]  # nothing lost
    assert len(record.messages) == 2 * TURNS
