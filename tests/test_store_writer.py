"""The batch parent's store writer: what one read from a worker brings commits as one
transaction, all or none, in order, and a locked database keeps the whole read for later."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from proactive_tui.evalrun.workers import StoreWriter
from proactive_tui.store import StoreError
from proactive_tui.store.db import SessionRow, Store


def _store(tmp_path: Path) -> tuple[Store, list[str]]:
    store = Store(tmp_path / "s.db", busy_timeout_s=0.05)
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    return store, statements


def _appends(session: str, seqs: range) -> list[tuple]:
    return [("append", session, seq, "note", f'{{"n": {seq}}}', "2026-12-06T00:00:00Z") for seq in seqs]


def _stored(store: Store, session: str) -> list[int]:
    rows = store._conn.execute("SELECT seq FROM events WHERE session_id = ? ORDER BY seq", (session,))
    return [row[0] for row in rows]


def test_writes_applied_together_commit_once_in_order(tmp_path: Path) -> None:
    store, statements = _store(tmp_path)
    writer = StoreWriter(store, warn=lambda _: None)
    with writer.together():
        writer.apply(("create", SessionRow(id="s1", env_id="e", family="proactiveeval", status="running")))
        for op in _appends("s1", range(1, 6)):
            writer.apply(op)
        writer.apply(("update", "s1", "2026-12-06T00:00:01Z", {"status": "finished"}))
        assert _stored(store, "s1") == []  # nothing written before the read ends
    assert _stored(store, "s1") == [1, 2, 3, 4, 5] and store.session("s1").status == "finished"
    assert [s for s in statements if s in ("BEGIN IMMEDIATE", "COMMIT")] == ["BEGIN IMMEDIATE", "COMMIT"]
    statements.clear()
    writer.apply(_appends("s1", range(6, 7))[0])  # outside together(): its own write, no BEGIN
    assert _stored(store, "s1")[-1] == 6 and "BEGIN IMMEDIATE" not in statements


def test_flush_writes_what_came_before_and_gathering_goes_on(tmp_path: Path) -> None:
    store, statements = _store(tmp_path)
    store.create_session(SessionRow(id="s1", env_id="e", family="proactiveeval"))
    writer = StoreWriter(store, warn=lambda _: None)
    with writer.together():
        for op in _appends("s1", range(1, 3)):
            writer.apply(op)
        writer.flush()  # e.g. a session's end is handled next: its events are in the store first
        assert _stored(store, "s1") == [1, 2]
        for op in _appends("s1", range(3, 5)):
            writer.apply(op)
        assert _stored(store, "s1") == [1, 2]
    assert _stored(store, "s1") == [1, 2, 3, 4]


def test_one_failed_write_keeps_none_of_its_transaction(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    store.create_session(SessionRow(id="s1", env_id="e", family="proactiveeval"))
    with pytest.raises(ValueError), store.one_transaction():
        store.append("s1", 1, "note", "{}", "2026-12-06T00:00:00Z")
        store.update_session("s1", "2026-12-06T00:00:01Z", no_such_column=1)
    assert _stored(store, "s1") == [] and not store._conn.in_transaction
    store.append("s1", 2, "note", "{}", "2026-12-06T00:00:00Z")  # the store goes on
    assert _stored(store, "s1") == [2]


@pytest.mark.asyncio
async def test_a_locked_database_keeps_the_whole_read_and_writes_it_in_order_once_it_clears(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    store.create_session(SessionRow(id="s1", env_id="e", family="proactiveeval"))
    other = sqlite3.connect(tmp_path / "s.db", isolation_level=None, timeout=0.05)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    said: list[str] = []
    writer = StoreWriter(store, warn=said.append)
    writer.wait_s = 0.0
    with writer.together():
        for op in _appends("s1", range(1, 4)):
            writer.apply(op)
    assert len(writer.backlog) == 3 and any("keeping the events" in s for s in said)
    with writer.together():
        for op in _appends("s1", range(4, 6)):
            writer.apply(op)  # later writes wait behind the kept ones
    assert len(writer.backlog) == 5
    other.execute("COMMIT")
    other.close()
    await writer.close()
    assert _stored(store, "s1") == [1, 2, 3, 4, 5] and not writer.backlog
    with pytest.raises(StoreError):  # the lock really refused the first try: a write under it fails
        blocker = sqlite3.connect(tmp_path / "s.db", isolation_level=None, timeout=0.05)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            with store.waiting_at_most(0), store.one_transaction():
                store.append("s1", 9, "note", "{}", "2026-12-06T00:00:00Z")
        finally:
            blocker.execute("COMMIT")
            blocker.close()
    assert _stored(store, "s1") == [1, 2, 3, 4, 5]
