"""A batch worker's put-off work (`evalrun.idle`): it waits for an idle loop, never past its
bound, keeps its order, and never lets a session's end reach the parent before its events."""

from __future__ import annotations

import asyncio

from proactive_tui.evalrun import workers
from proactive_tui.evalrun.idle import IdleQueue


async def busy_for(turns: int, log: list[str]) -> None:
    """Keep the loop busy for `turns` turns (a callback ready on each), as replies arriving do."""
    done = asyncio.get_running_loop().create_future()

    def step(left: int) -> None:
        log.append(f"busy {left}")
        if left:
            asyncio.get_running_loop().call_soon(step, left - 1)
        else:
            done.set_result(None)

    asyncio.get_running_loop().call_soon(step, turns)
    await done


def test_a_deferred_job_waits_for_the_loop_to_have_nothing_else_ready() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        idle = IdleQueue(max_wait_s=3600)
        busy = asyncio.ensure_future(busy_for(5, log))
        await asyncio.sleep(0)  # the busy chain has started
        idle.defer(lambda: log.append("deferred"))
        await busy
        await asyncio.sleep(0.01)
        return log

    log = asyncio.run(main())
    assert log.index("deferred") > log.index("busy 0"), log  # not before the ready work ran out


def test_a_loop_that_is_never_idle_still_runs_it_after_the_bound() -> None:
    async def main() -> tuple[bool, float]:
        loop = asyncio.get_running_loop()
        idle = IdleQueue(max_wait_s=0.02)
        ran: list[float] = []
        asked = loop.time()
        idle.defer(lambda: ran.append(loop.time()))
        # busy (a callback ready every turn) for ten times the bound, by the loop's own clock
        while loop.time() - asked < 0.2 and not ran:
            await asyncio.sleep(0)
        return bool(ran), (ran[0] - asked) if ran else float("inf")

    ran, waited = asyncio.run(main())
    assert ran and waited >= 0.02


def test_jobs_keep_their_order_drain_runs_them_now_and_one_failure_stops_none() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        idle = IdleQueue(max_wait_s=3600)
        idle.defer(lambda: log.append("one"))
        idle.defer(lambda: 1 / 0)
        idle.defer(lambda: log.append("three"))
        assert log == [] and idle.pending == 3
        idle.drain()
        assert idle.pending == 0
        log.append("after drain")
        idle.defer(lambda: log.append("four"))
        idle.defer(lambda: log.append("five"))
        waiter = asyncio.ensure_future(idle.turn())
        await waiter
        return log

    assert asyncio.run(main()) == ["one", "three", "after drain", "four", "five"]


def test_litellms_success_logging_starts_only_at_the_workers_turn(monkeypatch) -> None:
    from litellm.litellm_core_utils import logging_worker

    from proactive_tui.llm.gateway import defer_litellm_logging

    log: list[str] = []
    queued: list = []

    class FakeLoggingWorker:
        def ensure_initialized_and_enqueue(self, async_coroutine) -> None:
            queued.append(async_coroutine)

    monkeypatch.setattr(logging_worker, "GLOBAL_LOGGING_WORKER", FakeLoggingWorker())

    async def turn() -> None:
        log.append("turn")

    async def success_log() -> str:
        log.append("logged")
        return "ok"

    assert defer_litellm_logging(turn)
    logging_worker.GLOBAL_LOGGING_WORKER.ensure_initialized_and_enqueue(async_coroutine=success_log())
    assert len(queued) == 1 and log == []
    assert asyncio.run(queued[0]) == "ok"
    assert log == ["turn", "logged"]


class Pipe:
    def __init__(self) -> None:
        self.sent: list[tuple] = []

    def send(self, batch: list[tuple]) -> None:
        self.sent.extend(batch)


def test_a_workers_store_writes_wait_for_idle_but_a_sessions_end_goes_after_them() -> None:
    async def main() -> tuple[list[str], list[str]]:
        pipe = Pipe()
        worker = workers._Worker(pipe, 1, lambda w: None, {})
        worker.idle = IdleQueue(max_wait_s=3600)
        store = workers.ForwardStore(worker.send, worker.idle.defer)
        store.append("s1", 1, "session_started", '{"seq": 1}', "2026-12-06T00:00:00Z")
        store.update_session("s1", "2026-12-06T00:00:01Z", status="finished")
        await asyncio.sleep(0)
        early = [m[0] for m in pipe.sent]  # the writes were put off: nothing went yet
        worker.send(("done", 0, {"ok": True}))
        await asyncio.sleep(0.01)
        return early, [m[0] for m in pipe.sent]

    early, sent = asyncio.run(main())
    assert early == []
    assert sent == ["append", "update", "done"]
