"""Record a session into the store while it runs: every event committed as the engine emits it.

    async with contextlib.aclosing(record_events(store, spec, session)) as events:
        async for event in events:
            ...  # show it; it is already committed (stream deltas: see below)

Each event is appended in its own transaction *before* it is passed on, so whatever a consumer
has seen (apart from the last few stream deltas) survives a kill at any point. Stream deltas are
coalesced: a message's deltas are buffered and written as one MessageDelta at most every 250 ms,
and always before any other event (in particular before that message's MessageDone), so the log
stays in emission order and a completed message is never coalesced away. A kill loses at most
the last 250 ms of streamed text of an unfinished message. A streamed reply is stored once, as
its deltas: its later copies (the finished message, the call trace, later requests quoting it) are
stored as references to them and put back when the session is read (`store.replies`).

The sessions-table row is created from SessionStarted (with the SessionSpec, so the session can be
resumed with the same settings) and its status moves running -> finished | stopped | error,
or -> interrupted when the consumer stops reading before the session ended. A process that dies
leaves `running` behind; readers show such a row as interrupted (queries.effective_status).

A store failure never stops the session, nor slows it. A locked database (another process holding
its write lock) is transient: the write is kept in order in a backlog, reported once through
`on_error`, retried before each later write, every `RETRY_POLL_S` while the session waits (a model
call, a person typing) and, at `close()`, for up to `CLOSE_RETRY_S`; once the lock clears every
kept event is written and that is reported too. Writes run on the event loop's thread, so none
of them may wait long for the lock: a first write waits at most `WRITE_WAIT_S` (another writer's
commit takes milliseconds), a retry not at all. The store's own busy timeout (5 s for a headless
run) is for commands that write once; spent on every event it made a session run at one event
every 5-23 s while another process held the lock (issue 33). Any other failure (disk full, a
damaged file) is reported once and recording stops. `saved` says afterwards whether every event
reached the store, so a command never claims a session was saved when it was not.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, AsyncIterator, Callable

from proactive_tui.core.events import now_iso
from proactive_tui.core.run_record import RunRecordBuilder
from proactive_tui.store.db import SessionRow, Store, StoreError
from proactive_tui.store.queries import headline, models_with_writers, status_for
from proactive_tui.store.replies import StreamedReplies

FLUSH_INTERVAL = 0.25
CLOSE_RETRY_S = 30.0
"""How long `close()` keeps retrying a backlog held up by a locked database."""
CLOSE_POLL_S = 0.2
WRITE_WAIT_S = 0.1
"""How long a write waits for another process's write lock before it is kept in the backlog."""
RETRY_POLL_S = 0.2
"""How often a backlog is retried while no new event comes (each try waits for nothing)."""


class SessionRecorder:
    """Appends one session's events to the store; call `handle(event)` for each, then `close()`."""

    def __init__(self, store: Store, spec: Any = None, on_error: Callable[[str], Any] | None = None,
                 flush_interval: float = FLUSH_INTERVAL) -> None:
        self.store = store
        self.spec = spec
        self.on_error = on_error
        self.flush_interval = flush_interval
        self.session_id: str | None = None
        self.failed = False
        self.ended = False
        self.builder = RunRecordBuilder()
        self.replies = StreamedReplies()
        """The text each message streamed into the store: later copies are stored as references."""
        self._buffer: list[Any] = []  # deltas of one message, not yet written
        self._buffer_since = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._backlog: list[Callable[[], None]] = []
        """Writes held up by a locked database, in order; retried before any later write."""
        self._retrier: asyncio.Task[None] | None = None
        """Retries the backlog while the session waits (a backlog never waits for the next event)."""
        self.unsaved_reason = ""
        self._inherited_upto = 0
        """A branch's events with 1 < seq <= this are its parent's (core.fork): folded, never stored."""

    @property
    def saved(self) -> bool:
        """Every event of the session reached the store (false while a backlog waits, or after a failure)."""
        return self.session_id is not None and not self.failed and not self._backlog

    def _write(self, action: Callable[[], None]) -> None:
        """Run one store write in order: after the backlog, or into it while the database is locked.
        Never waits long for the lock (see the module docstring): the session goes on meanwhile."""
        if self._backlog and not self._drain():
            self._backlog.append(action)
            return
        try:
            with self.store.waiting_at_most(WRITE_WAIT_S):
                action()
        except StoreError as exc:
            if not exc.transient:
                raise
            self._backlog.append(action)
            self._start_retrier()
            if self.on_error is not None:
                self.on_error(f"{exc}; keeping the events and retrying while the session goes on")

    def _drain(self) -> bool:
        """Write the backlog in order, each write waiting for nothing; True when it is empty (a
        later write may go straight in)."""
        while self._backlog:
            try:
                with self.store.waiting_at_most(0):
                    self._backlog[0]()
            except StoreError as exc:
                if not exc.transient:
                    raise
                return False
            self._backlog.pop(0)
        if self.on_error is not None:
            self.on_error("the session database is writable again: every kept event is saved")
        return True

    def _start_retrier(self) -> None:
        """Retry the backlog every `RETRY_POLL_S` on the running loop (none: the next write or
        `close()` retries it)."""
        if self._retrier is not None and not self._retrier.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._retrier = loop.create_task(self._retry_backlog())

    async def _retry_backlog(self) -> None:
        while self._backlog and not self.failed:
            await asyncio.sleep(RETRY_POLL_S)
            try:
                if not self._backlog or self._drain():
                    return
            except StoreError as exc:
                self._fail(str(exc))
                return

    def _stop_retrier(self) -> None:
        if self._retrier is not None:
            self._retrier.cancel()
            self._retrier = None

    # -- events ---------------------------------------------------------------------------------

    def handle(self, event: Any) -> None:
        """Record one event (committed when this returns, unless it is a buffered delta)."""
        if self.failed:
            return
        try:
            self.builder.apply(event)
            if 1 < event.seq <= self._inherited_upto:
                return
            if event.type == "message_delta":
                self._buffer_delta(event)
                return
            self.flush()
            if event.type == "session_started":
                self._start(event)
            if self.session_id is None:
                return
            session_id = self.session_id
            payload = self.replies.payload(event)  # a streamed reply's later copies as references
            self._write(lambda: self.store.append(session_id, event.seq, event.type, payload, event.ts))
            if event.type == "session_ended":
                self.ended = True
                self._finish(status_for(event.reason))
        except StoreError as exc:
            self._fail(str(exc))
        except Exception as exc:  # noqa: BLE001 - recording must never stop the session
            self._fail(f"could not record a {event.type} event ({type(exc).__name__}: {exc})")

    def _buffer_delta(self, event: Any) -> None:
        if self._buffer and self._buffer[0].message_id != event.message_id:
            self.flush()
        if not self._buffer:
            self._buffer_since = time.monotonic()
            self._schedule_flush()
        self._buffer.append(event)
        if time.monotonic() - self._buffer_since >= self.flush_interval:
            self.flush()

    def _schedule_flush(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a synchronous caller): flushed by the next event or close()
        self._timer = loop.call_later(self.flush_interval, self._timed_flush)

    def _timed_flush(self) -> None:
        self._timer = None
        try:
            self.flush()
        except StoreError as exc:
            self._fail(str(exc))

    def flush(self) -> None:
        """Write the buffered deltas as one MessageDelta (the seq and time of the first)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._buffer or self.session_id is None or self.failed:
            self._buffer.clear()
            return
        first = self._buffer[0]
        merged = first.model_copy(update={"text": "".join(e.text for e in self._buffer)})
        self._buffer.clear()
        session_id = self.session_id
        self.replies.streamed(merged.message_id, merged.text)
        self._write(lambda: self.store.append_event(session_id, merged))

    # -- the sessions row -----------------------------------------------------------------------

    def _start(self, event: Any) -> None:
        resumed = getattr(event, "resumed_from", None) or {}
        forked = getattr(event, "forked_from", None) or {}
        self._inherited_upto = 1 + int(forked.get("prefix_events") or 0) if forked else 0
        self.session_id = event.session_id
        row = SessionRow(
            id=event.session_id, env_id=event.env_id, family=event.family,
            seats={seat: info.model_dump() for seat, info in event.seats.items()},
            models=event.models, settings=event.settings, status="running", created_at=event.ts,
            updated_at=event.ts, title=str(event.environment.get("title", "")),
            spec=self._stored_spec(event.family),
            pid=os.getpid(), resumed_from=resumed.get("session_id"), forked_from=forked.get("session_id"),
            fork_turn=forked.get("turn"), fork_seat=forked.get("seat"),
            fork_prefix=forked.get("prefix_events") if forked else None,
        )
        self._write(lambda: self.store.create_session(row))

    def _stored_spec(self, family_name: str) -> dict[str, Any] | None:
        """The spec as stored for resume and fork: with the seats' temperatures and token caps the
        family decided (`core.spec.with_family_seat_settings`), so a branch or a resumed session runs
        each seat as this session ran it, not at a default the stored copy would otherwise fix."""
        if self.spec is None:
            return None
        from proactive_tui.core import registry
        from proactive_tui.core.spec import with_family_seat_settings

        family = registry.find(family_name)
        return (self.spec if family is None else with_family_seat_settings(self.spec, family)).storable()

    def _finish(self, status: str) -> None:
        record = self.builder.record
        summary = headline(record) if record is not None else None
        fields: dict[str, Any] = {"status": status, "summary": summary}
        if record is not None:  # who wrote each seat's replies, as its record says (History's Models column)
            fields["models"] = models_with_writers(record)
        session_id, when = self.session_id, now_iso()
        self._write(lambda: self.store.update_session(session_id, when, **fields))  # type: ignore[arg-type]

    def close(self, retry_s: float = CLOSE_RETRY_S) -> None:
        """Flush what is buffered; a session that did not end is marked interrupted. A backlog held
        up by a locked database is retried for up to `retry_s` seconds before it is given up (and
        `saved` stays false, with the reason in `unsaved_reason`). Sleeps between tries: for code
        with no event loop to keep running; `record_events` uses `aclose`."""
        if not self._close_begin():
            return
        deadline = time.monotonic() + retry_s
        while self._close_pending(deadline):
            time.sleep(CLOSE_POLL_S)

    async def aclose(self, retry_s: float = CLOSE_RETRY_S) -> None:
        """`close()` that waits for a locked database without blocking the event loop: the
        playground and a batch of concurrent sessions keep running while one session's last
        writes wait for the lock."""
        if not self._close_begin():
            return
        deadline = time.monotonic() + retry_s
        while self._close_pending(deadline):
            await asyncio.sleep(CLOSE_POLL_S)

    def _close_begin(self) -> bool:
        """Flush and mark the end; False when there is nothing (more) to do."""
        self._stop_retrier()  # the close retries the backlog itself, until its deadline
        if self.failed or self.session_id is None:
            return False
        try:
            self.flush()
            if not self.ended:
                self._finish("interrupted")
        except StoreError as exc:
            self._fail(str(exc))
            return False
        return True

    def _close_pending(self, deadline: float) -> bool:
        """One try at the backlog: True while writes wait and there is time left to retry."""
        try:
            if not self._backlog or self._drain():
                return False
        except StoreError as exc:
            self._fail(str(exc))
            return False
        if time.monotonic() >= deadline:
            left = len(self._backlog)
            self.unsaved_reason = f"the session database stayed locked: {left} writes were not saved"
            if self.on_error is not None:
                self.on_error(f"{self.unsaved_reason}; the run record (--out) still holds the whole session")
            return False
        return True

    def _fail(self, message: str) -> None:
        self._stop_retrier()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._buffer.clear()
        self._backlog.clear()
        if not self.failed:
            self.failed = True
            self.unsaved_reason = message
            if self.on_error is not None:
                self.on_error(f"{message}; this session is no longer being saved")


async def record_events(store: Store, spec: Any, session: Any,
                        on_error: Callable[[str], Any] | None = None,
                        recorder: SessionRecorder | None = None) -> AsyncIterator[Any]:
    """`session.events()`, with each event committed to `store` before it is passed on."""
    recorder = recorder or SessionRecorder(store, spec, on_error=on_error)
    events = session.events()
    try:
        async for event in events:
            recorder.handle(event)
            yield event
    finally:
        try:
            await events.aclose()
        finally:
            await recorder.aclose()
