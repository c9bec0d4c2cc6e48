"""Work a worker process puts off until its event loop has nothing else to do.

Why: a batch worker holds its part of `--concurrency` (16 sessions of the issue's 32 on two
cores), just past the point where its sessions keep its core busy, so its core is idle a fifth
to a quarter of the time, in gaps while every session waits on a reply, and at other times
several sessions' replies wait on the core. Some of a call's CPU is on no session's path:
forwarding the recorder's store writes to the parent (masking secrets, pickling, the pipe) and
litellm's own logging of each success (7-8% of a worker's CPU; nothing here reads it). Done when
the loop would otherwise wait, that work fills the gaps instead of holding up the next reply.
Measured (`benchmarks/batch_throughput.py`'s issue workload, 2 workers, rounds alternating):
the wall 6% shorter, wall / max(ideal, CPU / cores) 1.255 -> 1.218.

It waits at most `IDLE_MAX_WAIT_S` (a loop that is never idle still does it), and `drain()`
runs everything put off, in order, before anything that must follow it (a session's end, the
worker's goodbye). A worker killed outright (kill -9, the OOM killer) loses what it had put off,
at most that long of its running sessions' events: those sessions are lost with it anyway
(written as failed, their rows marked interrupted, run again by resume).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any, Callable

IDLE_MAX_WAIT_S = 0.05
"""The longest a put-off job waits for an idle loop before it runs anyway."""

log = logging.getLogger("proactive_tui.evalrun")


class IdleQueue:
    """Jobs run in order, each when the loop has no other callback ready (or after
    `max_wait_s`), one a loop turn.

    "No other callback ready" is read from the loop's ready queue (`_ready`, CPython's
    `BaseEventLoop`; a loop without one runs each job at its next turn, as `call_soon` would)."""

    def __init__(self, max_wait_s: float = IDLE_MAX_WAIT_S, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.loop = loop or asyncio.get_running_loop()
        self.max_wait_s = max_wait_s
        self._jobs: deque[tuple[float, Callable[[], Any]]] = deque()
        self._armed = False

    @property
    def pending(self) -> int:
        return len(self._jobs)

    def defer(self, job: Callable[[], Any]) -> None:
        """Run `job()` once the loop is idle, after every job deferred before it."""
        self._jobs.append((self.loop.time(), job))
        self._arm()

    async def turn(self) -> None:
        """Wait for this caller's turn at an idle loop (a coroutine that can wait, e.g. litellm's logging)."""
        ready: asyncio.Future[None] = self.loop.create_future()
        self.defer(lambda: ready.done() or ready.set_result(None))
        await ready

    def drain(self) -> None:
        """Run every deferred job now, in order."""
        while self._jobs:
            self._run(self._jobs.popleft()[1])

    def _arm(self) -> None:
        if not self._armed:
            self._armed = True
            self.loop.call_soon(self._tick)

    def _busy(self) -> bool:
        ready = getattr(self.loop, "_ready", None)
        return bool(ready)

    def _tick(self) -> None:
        self._armed = False
        if not self._jobs:
            return
        if self._busy() and self.loop.time() - self._jobs[0][0] < self.max_wait_s:
            self._arm()  # after what is ready now; checked again next turn
            return
        self._run(self._jobs.popleft()[1])
        if self._jobs:
            self._arm()

    @staticmethod
    def _run(job: Callable[[], Any]) -> None:
        try:
            job()
        except Exception:  # one job's failure is its own: the others still run
            log.exception("a deferred job failed")
