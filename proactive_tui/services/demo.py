"""Demo mode: a recorded session replayed at its real pace, faster, or step by step.

A demo of a session recorded earlier with a real model needs no keys and no waiting: the stored
event log is played again through `RecordedSession`, a `SessionBase` whose protocol re-emits the
recorded events in order instead of calling anyone, so the family's own session screen shows the
transcript, the judge panels and the call inspector exactly as they filled the first time.

Pacing: between two events the demo waits the gap between their recorded `ts`, divided by
`speed`, and never more than `MAX_GAP_S` at once (a person who left the recording idle for a
minute would otherwise stall a two-minute show). `speed` 0, or `step`, starts paused: nothing
passes the start of a step (the family's `step_starts`) until `step()` or `play()`, the screens' s/a keys
(p pauses again, as in a live session).

Why only stored sessions: a run-record file holds the messages, the family's section and the
scores, but no event log (no verdict-by-verdict order, no model calls, no timing of the judges),
so a replay synthesised from it would show something that never happened. A run-record file is
accepted when its session is in the store (its events are then read from there); otherwise the
error says so.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, ConfigDict

from proactive_tui.core.events import SessionEnded
from proactive_tui.core.session import SessionBase

MAX_GAP_S = 3.0
"""The longest single wait of a demo, in seconds (after dividing by the speed)."""


SKIPPED = ("awaiting_human",)
"""Recorded events a demo does not re-emit: nobody is asked to type in a demo (the person's
replies that followed are in the recording)."""


class DemoError(ValueError):
    """The session or file cannot be played as a demo (one line, for the CLI and the History)."""


def _seconds(ts: str) -> float | None:
    try:
        return datetime.fromisoformat(ts).timestamp()
    except (TypeError, ValueError):
        return None


def gaps(events: list[Any]) -> list[float]:
    """The recorded wait before each event, in seconds (0 for the first, an unreadable or
    backwards timestamp)."""
    out: list[float] = []
    previous: float | None = None
    for event in events:
        now = _seconds(getattr(event, "ts", ""))
        out.append(max(0.0, now - previous) if now is not None and previous is not None else 0.0)
        if now is not None:
            previous = now
    return out


def step_starts(family: str | None) -> tuple[str, ...]:
    """The event types that open a step of `family`'s demo (`Family.step_starts`; a message for a
    family that is not installed)."""
    from proactive_tui.core import registry
    from proactive_tui.core.family import DEFAULT_STEP_STARTS

    found = registry.find(family) if family else None
    return DEFAULT_STEP_STARTS if found is None else found.step_starts


class RecordedSession(SessionBase):
    """A stored session's events, emitted again in order at the recorded pace / `speed`.

    Each event is a copy of the recorded one (same type, same content; only `seq` and `ts` are
    stamped again by `emit`), `model_called` included, so the call inspector shows what the
    models saw. Nothing here calls a model. `sleep` is injectable (tests pass a fake that records
    the waits asked for)."""

    def __init__(self, events: list[Any], speed: float = 1.0, step: bool = False,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep, max_gap_s: float = MAX_GAP_S) -> None:
        start = events[0] if events and getattr(events[0], "type", "") == "session_started" else None
        super().__init__(getattr(start, "session_id", None))
        if speed < 0:
            raise DemoError(f"speed must be 0 (step by step) or more, not {speed}")
        self.recorded = list(events)
        self.step_starts = step_starts(getattr(start, "family", None))
        self.speed = speed
        self.max_gap_s = max_gap_s
        self._sleep = sleep
        if step or speed == 0:
            self.pause()

    def wait_for(self, gap: float) -> float:
        """How long the demo waits for a recorded gap: gap / speed, capped; 0 at speed 0."""
        if self.speed == 0 or gap <= 0:
            return 0.0
        return min(gap / self.speed, self.max_gap_s)

    async def run_protocol(self) -> None:
        try:
            for event, gap in zip(self.recorded, gaps(self.recorded)):
                if event.type in SKIPPED:
                    continue
                if event.type in self.step_starts:
                    await self.checkpoint()
                wait = self.wait_for(gap)
                if wait > 0:
                    await self._sleep(wait)
                if isinstance(event, SessionEnded):
                    self.ended = True
                self.emit(event.model_copy(deep=True))
        except asyncio.CancelledError:
            # stopped: the stream still ends with a session_ended, so a screen settles
            self.end("cancelled", "demo stopped")


class DemoPlan(BaseModel):
    """What a demo needs: the stored events and the environment and spec its screen is built with."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    session_id: str
    family: str
    events: list[Any]
    env: Any
    spec: Any


def demo_plan(store: Any, text: str) -> DemoPlan:
    """The demo of `text`: a session id (or unique prefix) in the store, or a run-record file
    whose session is in the store. Raises DemoError with the reason in one line."""
    from proactive_tui.core.run_record import fold, read_record
    from proactive_tui.store.db import StoreError
    from proactive_tui.store.queries import session_environment, load_events, resolve_id, stored_spec

    path = Path(text).expanduser()
    if path.is_file():
        try:
            record = read_record(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DemoError(f"{text}: not a run-record file ({type(exc).__name__})") from None
        if store is None or store.session(record.id) is None:
            raise DemoError(f"{text} is session {record.id}, which is not in the session store: a run-record file "
                            "holds no event log (no timing, no judge order, no model calls), so only stored "
                            "sessions can be played as a demo")
        session_id = record.id
    else:
        if store is None:
            raise DemoError("the session store cannot be opened: no session to play")
        try:
            session_id = resolve_id(store, text)
        except StoreError as exc:
            raise DemoError(f"{exc} (nor is it a run-record file)") from None
    try:
        events = load_events(store, session_id)
        record = fold(events)
        env = session_environment(record)
        spec = stored_spec(store, session_id)
    except (StoreError, ValueError) as exc:
        raise DemoError(f"session {session_id} cannot be played: {exc}") from None
    return DemoPlan(session_id=session_id, family=record.family, events=events, env=env, spec=spec)


def describe(session_id: str, speed: float, step: bool) -> str:
    """The header of a demo screen."""
    pace = "step by step" if step or speed == 0 else f"speed {speed:g}x"
    return f"demo of session {session_id} · {pace} (nothing is recorded)"
