"""The session runner shared by every protocol: an event queue, sequencing and stopping.

A protocol runs as one asyncio task that emits events into a queue; `events()` yields them in
order and ends right after the single SessionEnded. Stopping cancels the protocol task; the
protocol turns the cancellation into a SessionEnded(cancelled) with partial text kept, and, when
asked to ("stop and score"), still lets the judge score what exists.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, AsyncIterator

from proactive_tui.core.events import ModelCalled, Retrying, SessionEnded, SessionStarted, now_iso
from proactive_tui.llm import trace


class SessionBase:
    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._seq = 0
        self._task: asyncio.Task[None] | None = None
        self.score_on_stop = False
        self.ended = False
        # Turn gate: auto-play runs freely; pause holds before the next turn; step lets one through.
        self.auto = True
        self._credits = 0
        self._gate_changed = asyncio.Event()
        self.holding = False
        """True while the protocol waits at `checkpoint` (paused between turns), so a viewer can say
        "paused" only when nothing is running, not while the turn a step let through runs."""
        self.gate_turn: int | None = None
        """The number of the last turn the gate let begin, for a protocol that names its turns
        (`checkpoint(turn)`; it sets 0 before its first, or the turns a resumed session already
        has); None for one that does not (a demo steps by message). With the steps still allowed
        it says which turn a pause really stops after (`last_to_run`)."""
        self.forked_from: Any = None
        """For a branch (`core.fork`): where it comes from (a ForkedFrom), set by `inherit`."""
        self._inherited: list[Any] = []
        self._fork_sides: Any = None
        self._fork_live = False
        self.rerun_of: dict[str, Any] | None = None
        """For a re-run against a new agent (`core.rerun`): what it re-runs, put in SessionStarted."""
        self.steer: Any = None
        """An `llm.trace.STEER` for this session's calls (a fork's added instruction)."""

    def inherit(self, forked_from: Any, prefix: list[Any], sides: Any, keep_resumed: bool = False) -> None:
        """Make this session a branch: `prefix` (the parent's events before the fork point) goes
        out right after this session's start, and what the protocol emits while it catches up on
        those turns is dropped, since the parent's events already say it (`sides`, the family's
        classifier, tells which events come before the fork point; an event it cannot place is
        dropped until the first event after the fork point, except retry notices, which only a
        live call makes)."""
        self.forked_from = forked_from
        self._inherited = list(prefix)
        self._fork_sides = sides
        self._keep_resumed = keep_resumed

    def _caught_up(self, event: Any) -> bool:
        """Whether a branch passes this event on (False: a replay of an inherited one)."""
        side = self._fork_sides(event)
        if side == "after" or isinstance(event, SessionEnded):
            self._fork_live = True
            return True
        if side == "before":
            return False
        return self._fork_live or isinstance(event, Retrying)

    def emit(self, event: Any) -> Any:
        """Stamp and queue one event. Protocols call this; consumers read `events()`."""
        if self.rerun_of is not None and isinstance(event, SessionStarted):
            event.rerun_of = self.rerun_of
        if self._fork_sides is not None:
            if isinstance(event, SessionStarted):
                event.forked_from = self.forked_from.model_dump()
                if not self._keep_resumed:  # a new branch resumes nothing (its prefix is restored, not resumed)
                    event.resumed_from = None
            elif not self._caught_up(event):
                return event
        self._seq += 1
        event.seq = self._seq
        event.ts = now_iso()
        self._queue.put_nowait(event)
        if isinstance(event, SessionStarted) and self._inherited:
            for inherited in self._inherited:  # the parent's events, as they were (a copy, renumbered)
                self._seq += 1
                self._queue.put_nowait(inherited.model_copy(update={"seq": self._seq}))
            self._inherited = []
        return event

    async def run_protocol(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def _on_call(self, call: trace.CallTrace, label: trace.CallLabel | None) -> None:
        """Every model call this session's tasks make, as a `model_called` event (none after the end)."""
        if self.ended:
            return
        if label is None:
            label = trace.CallLabel(seat="unknown", purpose="a call no one labelled")
        self.emit(ModelCalled(seat=label.seat, purpose=label.purpose, turn=label.turn, message_id=label.message_id,
                              call=call))

    async def _guarded(self) -> None:
        trace.SINK.set(self._on_call)  # this task's context: the protocol's calls and the tasks it starts
        if self.steer is not None:
            trace.STEER.set(self.steer)
        from proactive_tui.llm import closers

        continues = self.forked_from is not None or getattr(self, "resume_from", None) is not None
        recorded = None
        if continues:  # what an agent program in a seat saved of the dialogue, to restore it from
            from proactive_tui.core.acp_seat import recorded_restore_points

            recorded = recorded_restore_points(self._inherited, getattr(self, "resume_from", None))
        opened = closers.open_scope(continues=continues, recorded=recorded)  # an agent program stops with the protocol
        try:
            await self.run_protocol()
        except BaseException as exc:  # the protocol must always end the stream
            if not self.ended:
                self.emit(SessionEnded(reason="error", detail=f"{type(exc).__name__}: {exc}"))
                self.ended = True
            if not isinstance(exc, (Exception, asyncio.CancelledError)):
                raise
        finally:
            await closers.close_all(opened)
            self._queue.put_nowait(None)

    def end(self, reason: str, detail: str = "") -> None:
        if not self.ended:
            self.ended = True
            self.emit(SessionEnded(reason=reason, detail=detail))

    async def events(self) -> AsyncIterator[Any]:
        self._task = asyncio.create_task(self._guarded(), name=f"session-{self.session_id}")
        try:
            while True:
                event = await self._queue.get()
                if event is None:
                    break
                yield event
        finally:
            if self._task and not self._task.done():
                self._task.cancel()
                try:
                    await self._task
                except BaseException:
                    pass

    async def checkpoint(self, turn: int | None = None) -> None:
        """Protocols await this before starting a turn; it returns at once while auto-playing.
        `turn`: the number of the turn about to begin, in the family's unit (a turn, an event),
        for a protocol whose turns are numbered one after another; it becomes `gate_turn` once
        the turn may begin (while held here, the turns before it are what ran)."""
        if turn is not None:
            self.gate_turn = turn - 1
        try:
            while not self.auto and self._credits == 0:
                self.holding = True
                self._gate_changed.clear()
                await self._gate_changed.wait()
        finally:
            self.holding = False
        if not self.auto:
            self._credits -= 1
        if turn is not None:
            self.gate_turn = turn

    def pause(self) -> None:
        """Hold before the next turn (the turn under way finishes)."""
        self.auto = False

    def play(self) -> None:
        """Run turns without stopping. Steps not yet used are dropped: a later pause holds before
        the next turn, not after the turns those steps would have let through."""
        self.auto = True
        self._credits = 0
        self._gate_changed.set()

    def step(self) -> None:
        """Let exactly one more turn start, then hold again."""
        self.auto = False
        self._credits += 1
        self._gate_changed.set()

    @property
    def paused(self) -> bool:
        return not self.auto and self._credits == 0

    @property
    def last_to_run(self) -> int | None:
        """Paused or stepping: the number of the last turn that begins before the gate holds (the
        turn it let through last, plus one for each step still allowed; 0 when none will begin).
        None while auto-playing, or when the protocol does not name its turns. A turn that began
        runs to its end, so this is the last turn that runs (unless the session ends first)."""
        if self.auto or self.gate_turn is None:
            return None
        return self.gate_turn + self._credits

    def stop(self, score: bool = False) -> None:
        """End the session as `cancelled`; with `score=True` the judge still scores the transcript."""
        self.score_on_stop = score
        if self._task and not self._task.done():
            self._task.cancel()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()


def drain(session: Any) -> list[Any]:
    """The events a session object emitted so far (a grader uses a protocol session's judging
    methods without running its protocol, so nobody reads its queue but this)."""
    out = []
    while not session._queue.empty():
        event = session._queue.get_nowait()
        if event is not None:
            out.append(event)
    return out
