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

Closer = Callable[[], Awaitable[None]]
_SCOPE: ContextVar[list[Closer] | None] = ContextVar("proactive_tui_closers", default=None)
_CONTINUES: ContextVar[bool] = ContextVar("proactive_tui_continues", default=False)
log = logging.getLogger("proactive_tui.llm")


def open_scope(continues: bool = False) -> list[Closer]:
    """Start collecting closers in the current context (and the tasks it starts). `continues`: the
    session carries on a recorded dialogue (a branch, a resumed session), whose earlier replies a
    seat with state of its own (an agent program) did not give in this process."""
    scope: list[Closer] = []
    _SCOPE.set(scope)
    _CONTINUES.set(continues)
    return scope


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
