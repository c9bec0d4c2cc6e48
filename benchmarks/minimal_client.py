"""A reference for the batch benchmarks' floor: the same sessions' shape with nothing of the project.

`batch_throughput.py` reads a batch's wall against max(ideal, CPU / cores). At the issue's
workload (32 sessions, all in flight) the two bounds are close, and no scheduler reaches either:
every session waits on its first reply, the batch ends on its last, and sessions that share a
core wait on each other. What a simple client of that shape gets on this machine, at that moment,
is what this measures: N forked processes, each with one asyncio loop (the project's batch loop,
`llm.batch_loop`) and one aiohttp session against the same fake server, run sessions of the same
shape (steps of 1 and 2 calls at once, as many calls in a row and in all), started the same
distance apart (`evalrun.spacing`), each call spending the CPU a call of the measured batch spent
(busy on `time.thread_time`, 40% before the request and 60% after the reply, on top of what the
client itself spends: a run with no burn measures that first). No parent writes anything, no
engine, no litellm. It is a yardstick, not a bound: it puts all of a call's CPU on its session's
path, where the batch's parent spends its share beside the workers, so the batch can read below it.
"""

from __future__ import annotations

import asyncio
import os
import time
import traceback
from typing import Any


def _burn(seconds: float) -> None:
    """Spend `seconds` of this thread's CPU (not of the wall: a preempted burn does not end early)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def _process(url: str, sessions: int, steps: tuple[int, ...], per_call_s: float, spacing_s: float) -> None:
    import aiohttp

    from proactive_tui.llm import batch_loop

    body: dict[str, Any] = {"model": "reference", "messages": [
        {"role": "system", "content": "You are the user in a conversation with an assistant."},
        {"role": "user", "content": "Shall we talk about it? " * 20}]}

    async def main() -> None:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
            async def call() -> None:
                _burn(per_call_s * 0.4)
                async with http.post(url, json=body) as reply:
                    await reply.read()
                _burn(per_call_s * 0.6)

            async def session(index: int) -> None:
                await asyncio.sleep(index * spacing_s)
                for at_once in steps:
                    await asyncio.gather(*(call() for _ in range(at_once)))

            await asyncio.gather(*(session(i) for i in range(sessions)))

    batch_loop.run(main())


def run(base_url: str, processes: int, sessions: int, steps: tuple[int, ...], per_call_s: float,
        spacing_s: float) -> dict[str, float]:
    """One run: its wall, the processes' CPU (seconds) and CPU per call."""
    url = base_url.rstrip("/") + "/chat/completions"
    before, start = os.times(), time.perf_counter()
    pids = []
    for index in range(processes):
        share = sessions // processes + (1 if index < sessions % processes else 0)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 0
            try:
                _process(url, share, steps, per_call_s, spacing_s)
            except BaseException:
                traceback.print_exc()  # why, beside the parent's "failed"
                code = 1
            os._exit(code)
        pids.append(pid)
    failed = [pid for pid in pids if os.waitpid(pid, 0)[1] != 0]
    wall = time.perf_counter() - start
    after = os.times()
    if failed:
        raise RuntimeError(f"{len(failed)} reference process(es) failed")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"wall": wall, "cpu": cpu, "per_call": cpu / (sessions * sum(steps))}
