"""Sessions that start at the same instant start a few milliseconds apart.

Why: a batch starts its first sessions together (every one of them, when there are no more
sessions than `--concurrency`). Started together, they send their first calls together, get the
replies back together, and then every session's turn waits on the others' CPU: each reply costs
litellm and the engine 5-7 ms of one core, the event loop runs the ready sessions' steps in turn,
so all of them finish their turn when the last does, send together again, and stay in step to the
end. Against a fake server at 100 ms a call, 16 sessions a worker, a call took about 150 ms
instead of 106. Started about one call's CPU apart, each session's turn runs while the others wait
for their replies, and they stay apart (`benchmarks/batch_throughput.py`, the issue's workload,
2 workers: wall / max(ideal, CPU / cores) 1.37-1.48 without spacing, 1.17-1.29 with it; the
benchmark's own 120 sessions 1.29-1.35 and 1.24-1.25).

Most of what kept them in step was each request leaving only once the loop's queue came round
(litellm's set-up in a thread pool, aiohttp's lazily started writer); a batch's own loop sends at
once (`llm.batch_loop`). Spacing still helps there: a minimal client of the same shape measured
1.18 without it and 1.11 with it.

The cost is at most `START_SPACING_S` a session at the start of a batch (16 sessions: 0.12 s);
against a provider answering in seconds that is nothing, and sessions that start as others end
are already apart, so they do not wait.
"""

from __future__ import annotations

import asyncio

START_SPACING_S = 0.008
"""About one model call's CPU here (5-7 ms, litellm most of it), a little more: with less (3 ms)
the sessions fell back into step on the benchmark; 5 ms was better, 8 ms best."""


class StartSpacing:
    """Hands out start times at least `spacing_s` apart (one event loop's sessions)."""

    def __init__(self, spacing_s: float = START_SPACING_S) -> None:
        self.spacing_s = spacing_s
        self._next = float("-inf")

    async def wait_turn(self) -> float:
        """Wait until this session may start; the loop time it was given to start at (now, when the
        last start was long enough ago)."""
        now = asyncio.get_running_loop().time()
        start_at = max(now, self._next)
        self._next = start_at + self.spacing_s
        if start_at > now:
            await asyncio.sleep(start_at - now)
        return start_at
