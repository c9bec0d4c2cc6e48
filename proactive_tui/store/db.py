"""The session database: one SQLite file, a sessions table and an append-only events table.

Why SQLite in WAL mode: every engine event is committed in its own transaction as it is emitted,
readers (the history screen, `sessions list`) never block the writer, and several processes (the
playground and a headless `run`) can share the file.

Durability, measured and chosen (see benchmarks/store.py):

- `synchronous=NORMAL` (the default here): a committed event survives the process being killed at
  any point (kill -9, a crash, Ctrl-C), because in WAL mode a commit has reached the operating
  system before `append` returns. On power loss or a kernel crash the last events committed
  since the WAL was last synced (at most since the previous checkpoint) may be lost; the database
  itself stays consistent (it rolls back to an earlier complete state, never a torn one).
- `synchronous=FULL` (`PROACTIVE_TUI_STORE_SYNC=FULL`, or `Store(path, synchronous="FULL")`)
  also fsyncs the WAL on every commit, so committed events survive power loss too. It costs an
  fsync per event. Measured on the development machines (benchmarks/store.py): NORMAL appends
  19-37k events/s and a recorded session at 50 ms model latency runs at 0.97-1.02x the time of an
  unrecorded one; FULL appends 2-6k events/s and ran at 1.01-1.22x, depending on how busy the
  disk was. So NORMAL is the default: losing the last moments of a session to a power cut is
  acceptable for a playground, stalling the session on a slow disk is not.

Schema changes go through numbered migrations (`PRAGMA user_version`). Opening a database that a
newer version wrote, or a file that is not a session database, raises StoreError with a plain
message and leaves the file untouched; before a migration a copy of the old file is kept beside
it. Nothing here ever deletes data except `delete_session`, which a person asks for.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel

DB_FILENAME = "sessions.db"
APPLICATION_ID = 0x50544931  # "PTI1": marks the file as a proactive-tui session database
SYNC_MODES = ("NORMAL", "FULL")

# Each entry upgrades the schema from version i to i + 1 (index 0 creates version 1). Add new
# steps at the end; never edit one that has shipped.
MIGRATIONS: list[list[str]] = [
    [  # v1: sessions and their append-only event log
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            env_id TEXT NOT NULL,
            family TEXT NOT NULL,
            seats TEXT NOT NULL DEFAULT '{}',
            models TEXT NOT NULL DEFAULT '{}',
            settings TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT ''
        )""",
        """CREATE TABLE events (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            payload TEXT NOT NULL,
            ts TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        ) WITHOUT ROWID""",
        "CREATE INDEX sessions_env ON sessions(env_id)",
    ],
    [  # v2: what resume needs (the session spec, the recording process) and cached headline scores
        "ALTER TABLE sessions ADD COLUMN spec TEXT",
        "ALTER TABLE sessions ADD COLUMN summary TEXT",
        "ALTER TABLE sessions ADD COLUMN pid INTEGER",
        "ALTER TABLE sessions ADD COLUMN resumed_from TEXT",
        "CREATE INDEX sessions_created ON sessions(created_at)",
    ],
    [  # v3: branches (core.fork): the parent, the fork point, and how many parent events it inherits
        "ALTER TABLE sessions ADD COLUMN forked_from TEXT",
        "ALTER TABLE sessions ADD COLUMN fork_turn INTEGER",
        "ALTER TABLE sessions ADD COLUMN fork_seat TEXT",
        "ALTER TABLE sessions ADD COLUMN fork_prefix INTEGER",
        "CREATE INDEX sessions_forked ON sessions(forked_from)",
    ],
    [  # v4: re-gradings (services.regrade): the judges run again over a stored session, each kept beside it
        """CREATE TABLE gradings (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            judge TEXT NOT NULL,
            created_at TEXT NOT NULL,
            events TEXT NOT NULL,
            summary TEXT
        )""",
        "CREATE INDEX gradings_session ON gradings(session_id)",
    ],
    [  # v5: a person's verdicts on judge verdicts (services.labels), and side-by-side comparisons with their vote
        """CREATE TABLE labels (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            verdict TEXT NOT NULL,
            kind TEXT NOT NULL,
            judge TEXT NOT NULL,
            judge_value TEXT NOT NULL,
            agree INTEGER NOT NULL,
            value TEXT,
            note TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            PRIMARY KEY (session_id, verdict)
        ) WITHOUT ROWID""",
        """CREATE TABLE comparisons (
            id TEXT PRIMARY KEY,
            env_id TEXT NOT NULL,
            sessions TEXT NOT NULL,
            blind INTEGER NOT NULL DEFAULT 0,
            vote TEXT,
            reason TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            voted_at TEXT
        )""",
    ],
    [  # v6: a blind comparison's shuffle (services.compare): the seed it was drawn from and which agent each side is
        "ALTER TABLE comparisons ADD COLUMN shuffle_seed INTEGER",
        "ALTER TABLE comparisons ADD COLUMN side_order TEXT",
    ],
    [  # v7: who gave a label or a vote (ProactBench's human study: many raters label one verdict, many
       # voters vote on one pair); '' is the person using this store. A label's key gains the rater.
        """CREATE TABLE labels_v7 (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            verdict TEXT NOT NULL,
            rater TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL,
            judge TEXT NOT NULL,
            judge_value TEXT NOT NULL,
            agree INTEGER NOT NULL,
            value TEXT,
            note TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            PRIMARY KEY (session_id, verdict, rater)
        ) WITHOUT ROWID""",
        "INSERT INTO labels_v7 (session_id, verdict, rater, kind, judge, judge_value, agree, value, note, created_at) "
        "SELECT session_id, verdict, '', kind, judge, judge_value, agree, value, note, created_at FROM labels",
        "DROP TABLE labels",
        "ALTER TABLE labels_v7 RENAME TO labels",
        "ALTER TABLE comparisons ADD COLUMN voter TEXT NOT NULL DEFAULT ''",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)


def event_json(event: BaseModel) -> str:
    """The event as stored JSON. Text reaches events scrubbed of lone surrogates where it enters
    (`textsafe.scrub`); should one get through anyway, it becomes U+FFFD here rather than a
    serialization error that would stop the recording of the whole session."""
    try:
        return event.model_dump_json()
    except ValueError:  # pydantic_core.PydanticSerializationError: "surrogates not allowed"
        from proactive_tui.textsafe import scrub_deep

        return json.dumps(scrub_deep(event.model_dump(mode="json")), ensure_ascii=False)


class StoreError(Exception):
    """A problem with the session database, worded for the person reading it (no traceback).

    `transient`: the database was locked or busy (another process held a write lock longer than
    the write waited: the connection's busy timeout, or `Store.waiting_at_most`); the same write
    may succeed later, so a recorder keeps it and retries instead of giving up."""

    def __init__(self, message: str, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


class SessionRow(BaseModel):
    """One row of the sessions table, JSON columns decoded."""

    id: str
    env_id: str
    family: str
    seats: dict[str, Any] = {}
    models: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    status: str = "running"
    created_at: str = ""
    updated_at: str = ""
    title: str = ""
    spec: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None
    pid: int | None = None
    resumed_from: str | None = None
    forked_from: str | None = None
    """A branch's parent session; its events up to the fork point are the parent's, not stored here."""
    fork_turn: int | None = None
    fork_seat: str | None = None
    fork_prefix: int | None = None
    """How many parent events the branch inherits (its own rows start after them)."""


class LabelRow(BaseModel):
    """A person's label on one judge verdict of a session (`services.labels`): agreeing, or not with a
    corrected value, and a note. One per verdict (a new label replaces the old one); kept beside
    the session, never in its event log, so the judge's verdict stays what the judge said."""

    session_id: str
    verdict: str
    """The verdict's key within its session (`core.verdicts.Verdict.key`: "turn_check:2")."""
    kind: str
    """What sort of verdict ("turn check", "plan score", "proposal verdict", "action check"...)."""
    judge: str
    """Who gave the verdict: the judge's model string, or the rule set ("oracle (rules)")."""
    judge_value: Any = None
    """The verdict as the judge gave it (JSON: a bool, a score, a word)."""
    agree: bool
    value: Any = None
    """The person's value: the judge's when they agree, their correction otherwise."""
    note: str = ""
    created_at: str
    rater: str = ""
    """Who labelled: '' for the person using this store, else a named rater (an imported study's
    pseudonym, `A07`). One label per verdict and rater."""


class ComparisonRow(BaseModel):
    """Sessions run side by side on the same environment (`services.compare`), and a person's vote."""

    id: str
    env_id: str
    sessions: list[str]
    """The compared sessions, in the order shown (A, B, ...)."""
    blind: bool = False
    """The agents were shown as A and B until the vote."""
    vote: str | None = None
    """The session voted better, "tie", or None before a vote."""
    reason: str = ""
    created_at: str
    voted_at: str | None = None
    shuffle_seed: int | None = None
    """A blind comparison: the seed its sides were shuffled with (`services.compare.side_order`);
    None when the sides are in the order the agents were given (named, or recorded before v6)."""
    side_order: list[int] | None = None
    """For each side shown (A, B, ...), the index of its agent in the order the agents were given:
    [1, 0] showed the second agent as A. `sessions` is in the shown order, so a vote for a letter
    is the session (and the model) shown under it."""
    voter: str = ""
    """Who voted: '' for the person using this store, else a named voter (an imported pairwise
    study's pseudonym, `P03`)."""


_LABEL_COLUMNS = tuple(LabelRow.model_fields)
_COMPARISON_COLUMNS = tuple(ComparisonRow.model_fields)


class GradingRow(BaseModel):
    """One re-grading of a stored session (`services.regrade`): which judge, when, what it decided.

    Kept beside the session, never in its event log: the original grading (the session's own
    judge events and stored summary) never changes, and every later grading can be compared with
    it."""

    id: str
    session_id: str
    judge: str
    """The judge's model string."""
    created_at: str
    events: list[dict[str, Any]] = []
    """The judge events this grading produced, as stored JSON, in the family's own event types
    (and the `model_called` events: what the judge was sent and replied)."""
    summary: dict[str, Any] | None = None
    """The headline scores of the session as this grading scores it (`queries.headline`)."""


_GRADING_COLUMNS = tuple(GradingRow.model_fields)
_JSON_COLUMNS = ("seats", "models", "settings", "spec", "summary")
_COLUMNS = tuple(SessionRow.model_fields)


def default_path() -> Path:
    from proactive_tui.paths import data_dir

    return data_dir() / DB_FILENAME


def _plain(exc: BaseException) -> str:
    return str(exc).strip() or type(exc).__name__


def _busy_ms(seconds: float) -> int:
    return max(0, int(seconds * 1000))


class Store:
    """A connection to the session database. Cheap to open; safe to share between threads."""

    def __init__(self, path: Path | str | None = None, synchronous: str | None = None,
                 busy_timeout_s: float = 5.0) -> None:
        """`busy_timeout_s`: how long one write waits for another process's write lock before it
        fails as transient (`StoreError.transient`; the recorder then keeps and retries it)."""
        self.path = Path(path) if path is not None else default_path()
        self.busy_timeout_s = busy_timeout_s
        mode = (synchronous or os.environ.get("PROACTIVE_TUI_STORE_SYNC") or "NORMAL").upper()
        if mode not in SYNC_MODES:
            raise StoreError(f"unknown synchronous mode {mode!r}; use NORMAL or FULL")
        self.synchronous = mode
        self._lock = threading.RLock()
        self._wait_s: float | None = None
        """The wait `waiting_at_most` asks for while it is held, else None (`busy_timeout_s`)."""
        self._conn = self._connect()
        self._applied_ms = _busy_ms(busy_timeout_s)
        """The connection's busy timeout now (`sqlite3.connect(timeout=...)` set it), so a write
        sets it only when it changes: a recorder's writes, each inside `waiting_at_most`, set it
        once instead of twice per event, which was a third of a batch's database time."""

    # -- opening --------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        where = self.path
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the data folder {where.parent}: {_plain(exc)}") from None
        try:
            conn = sqlite3.connect(where, isolation_level=None, check_same_thread=False, timeout=self.busy_timeout_s)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the session database {where}: {_plain(exc)}") from None
        try:
            self._check_file(conn)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
            conn.execute("PRAGMA foreign_keys=ON")
            self._migrate(conn)
        except StoreError:
            conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(
                f"{where} is not a readable session database ({_plain(exc)}). It was left as it is; "
                "move it aside (or set PROACTIVE_TUI_DATA) to start a fresh one."
            ) from None
        return conn

    def _check_file(self, conn: sqlite3.Connection) -> None:
        """Refuse files this version must not touch: another program's database or a newer schema."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id not in (0, APPLICATION_ID) or (app_id == 0 and tables and version == 0):
            raise StoreError(
                f"{self.path} is an SQLite database but not a proactive-tui session database. "
                "It was left as it is; move it aside (or set PROACTIVE_TUI_DATA) to start a fresh one."
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the session database {self.path} was written by a newer proactive-tui (schema v{version}; "
                f"this version reads up to v{SCHEMA_VERSION}). Upgrade proactive-tui to open it; the file "
                "was left as it is."
            )

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > 0:
            self._backup(conn, version)
        for target in range(version + 1, SCHEMA_VERSION + 1):
            try:
                conn.execute("BEGIN IMMEDIATE")
                for statement in MIGRATIONS[target - 1]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version={target}")
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StoreError(
                    f"could not upgrade the session database {self.path} to schema v{target}: {_plain(exc)}. "
                    "Nothing was changed."
                ) from None

    def _backup(self, conn: sqlite3.Connection, version: int) -> None:
        """Keep a copy of the database as it was before a migration (never overwrite an older copy)."""
        target = self.path.with_name(f"{self.path.stem}.v{version}.backup{self.path.suffix}")
        if target.exists():
            return
        try:
            with sqlite3.connect(target) as copy:
                conn.backup(copy)
            copy.close()
        except sqlite3.Error as exc:
            raise StoreError(f"could not back up {self.path} before upgrading it: {_plain(exc)}") from None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @contextmanager
    def waiting_at_most(self, seconds: float) -> Iterator[None]:
        """Writes inside wait at most `seconds` (not `busy_timeout_s`) for another process's write
        lock before they fail as transient. The recorder writes on the event loop's thread: a wait
        there stalls the session and everything else on the loop, so it waits briefly and keeps
        what it could not write (store.recorder). Holds the store's lock throughout, so no other
        thread's write runs with the shorter wait."""
        with self._lock:
            outer, self._wait_s = self._wait_s, seconds
            try:
                yield
            finally:
                self._wait_s = outer

    def _apply_wait(self) -> None:
        """Give the connection the busy timeout this action should wait (inside `waiting_at_most`:
        its `seconds`; else `busy_timeout_s`), only when that differs from the one it has. Called
        with the lock held, so no other thread's action runs with the wrong wait."""
        ms = _busy_ms(self.busy_timeout_s if self._wait_s is None else self._wait_s)
        if ms == self._applied_ms:
            return
        try:
            self._conn.execute(f"PRAGMA busy_timeout={ms}")
        except sqlite3.Error:
            return  # a closed connection: the action itself says so
        self._applied_ms = ms

    @contextmanager
    def _guard(self, action: str) -> Iterator[sqlite3.Connection]:
        """Run one database action; turn SQLite's errors into plain StoreErrors."""
        with self._lock:
            self._apply_wait()
            try:
                yield self._conn
            except sqlite3.Error as exc:
                try:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                transient = isinstance(exc, sqlite3.OperationalError) and any(
                    word in str(exc).lower() for word in ("locked", "busy"))
                raise StoreError(f"session database {self.path}: could not {action}: {_plain(exc)}",
                                 transient=transient) from None

    @contextmanager
    def one_transaction(self) -> Iterator[None]:
        """The writes inside commit together when it ends: one commit for many. A batch's parent
        writes for every worker process (`evalrun.workers.StoreWriter`), and a commit per event
        was most of its CPU. If any write fails, none is kept: the transaction is rolled back and
        the StoreError raised (transient when another process held the lock), so the caller can
        keep all of them and try again. Holds the store's lock throughout."""
        with self._lock:
            with self._guard("save a batch's events") as conn:
                conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                try:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise
            with self._guard("save a batch's events") as conn:
                conn.execute("COMMIT")

    # -- writing --------------------------------------------------------------------------------

    def create_session(self, row: SessionRow, *, premasked: bool = False) -> None:
        """Add a session's row (`premasked`: its secrets are masked already, `masked_row`)."""
        values = _encode(row, premasked)
        with self._guard("record a new session") as conn:
            conn.execute(
                f"INSERT INTO sessions ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})",
                [values[c] for c in _COLUMNS],
            )

    def append(self, session_id: str, seq: int, type_: str, payload: str, ts: str, *, premasked: bool = False) -> None:
        """Append one event; it is committed (its own transaction) when this returns. Every
        secret the app knows is masked in it first (`redact.mask_json`: free when none is there),
        unless the caller did it (`premasked`: a batch's worker process masks what it sends, so
        the one process writing for every worker does not spend its CPU on it)."""
        if not premasked:
            from proactive_tui.redact import mask_json

            payload = mask_json(payload)
        with self._guard("save an event") as conn:
            conn.execute("INSERT INTO events (session_id, seq, type, payload, ts) VALUES (?, ?, ?, ?, ?)",
                         (session_id, seq, type_, payload, ts))

    def append_event(self, session_id: str, event: Any) -> None:
        self.append(session_id, event.seq, event.type, event_json(event), event.ts)

    def update_session(self, session_id: str, updated_at: str, *, premasked: bool = False, **fields: Any) -> None:
        """Set columns of one session (status, summary, title...) and its `updated_at`
        (`premasked`: the fields' secrets are masked already, `mask_fields`)."""
        unknown = set(fields) - set(_COLUMNS)
        if unknown:
            raise ValueError(f"unknown session columns: {sorted(unknown)}")
        values = {k: (json.dumps(v) if k in _JSON_COLUMNS and v is not None else v)
                  for k, v in (fields if premasked else _masked(fields)).items()}
        values["updated_at"] = updated_at
        with self._guard("update a session") as conn:
            conn.execute(f"UPDATE sessions SET {', '.join(f'{k} = ?' for k in values)} WHERE id = ?",
                         [*values.values(), session_id])

    def delete_session(self, session_id: str) -> bool:
        with self._guard("delete a session") as conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM gradings WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM labels WHERE session_id = ?", (session_id,))
            gone = conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
            conn.execute("COMMIT")
        return bool(gone)

    def add_grading(self, row: GradingRow) -> None:
        """Keep one re-grading (its own row: the session's events and summary are not touched)."""
        values = _masked(row.model_dump())
        values["events"] = json.dumps(values["events"], ensure_ascii=False)
        values["summary"] = json.dumps(values["summary"]) if values["summary"] is not None else None
        with self._guard("save a grading") as conn:
            conn.execute(f"INSERT INTO gradings ({', '.join(_GRADING_COLUMNS)}) "
                         f"VALUES ({', '.join('?' for _ in _GRADING_COLUMNS)})", [values[c] for c in _GRADING_COLUMNS])

    def gradings(self, session_id: str) -> list[GradingRow]:
        """A session's re-gradings, oldest first."""
        with self._guard("read a session's gradings") as conn:
            rows = conn.execute(f"SELECT {', '.join(_GRADING_COLUMNS)} FROM gradings WHERE session_id = ? "
                                "ORDER BY created_at, id", (session_id,)).fetchall()
        out = []
        for row in rows:
            data = dict(zip(_GRADING_COLUMNS, row))
            try:
                data["events"] = json.loads(data["events"]) if data["events"] else []
            except ValueError:
                data["events"] = []
            try:
                data["summary"] = json.loads(data["summary"]) if data["summary"] else None
            except ValueError:
                data["summary"] = None
            out.append(GradingRow.model_validate(data))
        return out

    def put_label(self, row: LabelRow) -> None:
        """Keep a person's label on one verdict (replacing their earlier label on it)."""
        values = row.model_dump()
        for col in ("judge_value", "value"):
            values[col] = json.dumps(values[col], ensure_ascii=False)
        values["agree"] = int(row.agree)
        with self._guard("save a label") as conn:
            conn.execute(f"INSERT OR REPLACE INTO labels ({', '.join(_LABEL_COLUMNS)}) "
                         f"VALUES ({', '.join('?' for _ in _LABEL_COLUMNS)})", [values[c] for c in _LABEL_COLUMNS])

    def delete_label(self, session_id: str, verdict: str, rater: str = "") -> bool:
        with self._guard("delete a label") as conn:
            return bool(conn.execute("DELETE FROM labels WHERE session_id = ? AND verdict = ? AND rater = ?",
                                     (session_id, verdict, rater)).rowcount)

    def labels(self, session_id: str | None = None) -> list[LabelRow]:
        """The labels of one session (or of every session), oldest first."""
        sql = f"SELECT {', '.join(_LABEL_COLUMNS)} FROM labels"
        params: tuple[Any, ...] = ()
        if session_id is not None:
            sql += " WHERE session_id = ?"
            params = (session_id,)
        with self._guard("read labels") as conn:
            rows = conn.execute(sql + " ORDER BY created_at, session_id, verdict, rater", params).fetchall()
        out = []
        for row in rows:
            data = dict(zip(_LABEL_COLUMNS, row))
            for col in ("judge_value", "value"):
                try:
                    data[col] = json.loads(data[col]) if data[col] is not None else None
                except ValueError:
                    data[col] = None
            data["agree"] = bool(data["agree"])
            out.append(LabelRow.model_validate(data))
        return out

    def put_comparison(self, row: ComparisonRow) -> None:
        """Keep a comparison (insert, or update its vote)."""
        values = row.model_dump()
        values["sessions"] = json.dumps(values["sessions"])
        values["side_order"] = json.dumps(values["side_order"]) if row.side_order is not None else None
        values["blind"] = int(row.blind)
        with self._guard("save a comparison") as conn:
            conn.execute(f"INSERT OR REPLACE INTO comparisons ({', '.join(_COMPARISON_COLUMNS)}) "
                         f"VALUES ({', '.join('?' for _ in _COMPARISON_COLUMNS)})",
                         [values[c] for c in _COMPARISON_COLUMNS])

    def comparisons(self, session_id: str | None = None) -> list[ComparisonRow]:
        """Every comparison (or those a session is part of), oldest first."""
        with self._guard("read comparisons") as conn:
            rows = conn.execute(f"SELECT {', '.join(_COMPARISON_COLUMNS)} FROM comparisons "
                                "ORDER BY created_at, id").fetchall()
        out = []
        for row in rows:
            data = dict(zip(_COMPARISON_COLUMNS, row))
            try:
                data["sessions"] = json.loads(data["sessions"])
            except ValueError:
                data["sessions"] = []
            data["blind"] = bool(data["blind"])
            try:
                data["side_order"] = json.loads(data["side_order"]) if data["side_order"] else None
            except ValueError:
                data["side_order"] = None
            comparison = ComparisonRow.model_validate(data)
            if session_id is None or session_id in comparison.sessions:
                out.append(comparison)
        return out

    # -- reading --------------------------------------------------------------------------------

    def session(self, session_id: str) -> SessionRow | None:
        with self._guard("read a session") as conn:
            row = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return _decode(row) if row else None

    def sessions(self, env_id: str | None = None, family: str | None = None, limit: int | None = None) -> list[SessionRow]:
        """Newest first. `env_id` matches an id or an id prefix (`proactiveeval/persuasion`)."""
        where, params = [], []
        if env_id:
            where.append("(env_id = ? OR env_id LIKE ? ESCAPE '\\')")
            params += [env_id, _like_prefix(env_id.rstrip("/") + "/")]
        if family:
            where.append("family = ?")
            params.append(family)
        sql = f"SELECT {', '.join(_COLUMNS)} FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        with self._guard("list sessions") as conn:
            rows = conn.execute(sql, params).fetchall()
        return [_decode(r) for r in rows]

    def branches(self, session_id: str) -> list[SessionRow]:
        """The sessions forked from this one (not their branches), oldest first."""
        with self._guard("list a session's branches") as conn:
            rows = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM sessions WHERE forked_from = ? "
                                "ORDER BY created_at, id", (session_id,)).fetchall()
        return [_decode(r) for r in rows]

    def ids_with_prefix(self, prefix: str) -> list[str]:
        with self._guard("look up a session") as conn:
            rows = conn.execute("SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY id",
                                (_like_prefix(prefix),)).fetchall()
        return [r[0] for r in rows]

    def event_rows(self, session_id: str) -> list[tuple[int, str, str, str]]:
        """(seq, type, payload JSON, ts) in order."""
        with self._guard("read a session's events") as conn:
            return conn.execute("SELECT seq, type, payload, ts FROM events WHERE session_id = ? ORDER BY seq",
                                (session_id,)).fetchall()

    def last_event_ts(self, session_id: str) -> str | None:
        with self._guard("read a session's events") as conn:
            row = conn.execute("SELECT ts FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
                               (session_id,)).fetchone()
        return row[0] if row else None

    def integrity_check(self) -> str:
        with self._guard("check the database") as conn:
            result: str = conn.execute("PRAGMA integrity_check").fetchone()[0]
            return result

    def schema_version(self) -> int:
        with self._guard("read the schema version") as conn:
            version: int = conn.execute("PRAGMA user_version").fetchone()[0]
            return version


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _masked(data: dict[str, Any]) -> dict[str, Any]:
    """A row's values with every secret the app knows masked in their strings (a provider error
    that echoed a key reaches a summary or a grading as text)."""
    from proactive_tui.redact import map_strings, mask_secrets

    masked: dict[str, Any] = map_strings(data, mask_secrets)
    return masked


def mask_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """`update_session`'s fields as it masks them (for a caller that passes `premasked`)."""
    return _masked(fields)


def masked_row(row: SessionRow) -> SessionRow:
    """The row as `create_session` masks it (for a caller that passes `premasked`)."""
    return SessionRow.model_validate(_masked(row.model_dump()))


def _encode(row: SessionRow, premasked: bool = False) -> dict[str, Any]:
    data = row.model_dump() if premasked else _masked(row.model_dump())
    for col in _JSON_COLUMNS:
        if data[col] is not None:
            data[col] = json.dumps(data[col])
    return data


def _decode(row: tuple[Any, ...]) -> SessionRow:
    data = dict(zip(_COLUMNS, row))
    for col in _JSON_COLUMNS:
        raw = data[col]
        try:
            data[col] = json.loads(raw) if raw else ({} if col in ("seats", "models", "settings") else None)
        except ValueError:
            data[col] = {} if col in ("seats", "models", "settings") else None
    return SessionRow.model_validate(data)


def open_store(path: Path | str | None = None, busy_timeout_s: float = 5.0) -> Store:
    """The user's session database (`PROACTIVE_TUI_DATA` moves it), created on first use."""
    return Store(path, busy_timeout_s=busy_timeout_s)
