"""Resources a session's seats open while it runs, closed when its protocol ends.

Why: most seats hold nothing (a model call is one HTTP request), but an agent program in the
agent seat (`llm.acp`) is a process that lives across the session's turns. The session runner
(`core.session.SessionBase`) opens a scope around its protocol task; a seat registers a closer in
it when it starts something, and the runner awaits every closer when the protocol ends, however it
ends (finished, stopped, failed). Outside a scope (a seat used directly), `register` returns False
and the caller closes what it opened itself.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

Closer = Callable[[], Awaitable[None]]
_SCOPE: ContextVar[list[Closer] | None] = ContextVar("proactive_tui_closers", default=None)
_CONTINUES: ContextVar[bool] = ContextVar("proactive_tui_continues", default=False)
_RECORDED: ContextVar[dict[str, list[dict[str, Any]]] | None] = ContextVar("proactive_tui_recorded", default=None)
log = logging.getLogger("proactive_tui.llm")


def open_scope(continues: bool = False, recorded: dict[str, list[dict[str, Any]]] | None = None) -> list[Closer]:
    """Start collecting closers in the current context (and the tasks it starts). `continues`: the
    session carries on a recorded dialogue (a branch, a resumed session), whose earlier replies a
    seat with state of its own (an agent program) did not give in this process. `recorded`: per
    seat, what the continued record says such a seat left to restore from (an agent program's
    saved sessions, `core.acp_seat.recorded_restore_points`)."""
    scope: list[Closer] = []
    _SCOPE.set(scope)
    _CONTINUES.set(continues)
    _RECORDED.set(recorded)
    return scope


def recorded_for(seat: str) -> list[dict[str, Any]]:
    """What the continued record left `seat` to restore from (see `open_scope`); none outside one."""
    return list((_RECORDED.get() or {}).get(seat, []))


def continues_recorded() -> bool:
    """Whether the current session continues a recorded dialogue (see `open_scope`)."""
    return _CONTINUES.get()


def register(closer: Closer) -> bool:
    scope = _SCOPE.get()
    if scope is None:
        return False
    scope.append(closer)
    return True


async def close_all(scope: list[Closer]) -> None:
    """Await every closer, newest first; one that fails is logged, the rest still run."""
    while scope:
        closer = scope.pop()
        with contextlib.suppress(BaseException):
            try:
                await closer()
            except Exception as exc:  # noqa: BLE001
                log.info("closing a seat's resource failed: %s", exc)
