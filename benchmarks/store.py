"""Session store speed: raw append/replay throughput and what recording costs a live session.

Run: .venv/bin/python benchmarks/store.py

1. Append 10,000 events (payloads taken from a real session's log), each committed in its own
   transaction as the recorder does, with synchronous=NORMAL and with synchronous=FULL; then
   replay them (read, parse, fold into a run record). Events per second.
2. A 6-turn session through the real litellm path against the fake server at 50 ms per call,
   with live judging: wall time with the store (NORMAL, FULL) vs without, as a ratio (target
   <= 1.05), plus the time spent inside the recorder per turn (the part the store adds).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from engine_helpers import collect, make_session  # noqa: E402
from session_overhead import TURNS, llm_session, responder  # noqa: E402
from proactive_tui.core.spec import SessionSpec  # noqa: E402
from proactive_tui.core.run_record import fold  # noqa: E402
from proactive_tui.llm.gateway import litellm_module  # noqa: E402
from proactive_tui.store import SessionRecorder, Store, load_events, record_events  # noqa: E402
from proactive_tui.testing.fake_openai import FakeOpenAIServer  # noqa: E402

N_EVENTS = 10_000


async def sample_events() -> list:
    return await collect(make_session(max_turns=6, live_judging=True))


def append_and_replay(events: list, folder: Path, sync: str) -> tuple[float, float]:
    store = Store(folder / f"append-{sync}.db", synchronous=sync)
    recorder = SessionRecorder(store)
    recorder.handle(events[0])  # the session row
    body = [e for e in events[1:] if e.type not in ("session_started", "session_ended")]
    session_id = events[0].session_id
    start = time.perf_counter()
    for i in range(N_EVENTS):
        event = body[i % len(body)].model_copy(update={"seq": i + 2})
        store.append_event(session_id, event)  # one transaction per event, as recorded live
    append_s = time.perf_counter() - start
    start = time.perf_counter()
    replayed = load_events(store, session_id)
    fold(replayed)
    replay_s = time.perf_counter() - start
    assert len(replayed) == N_EVENTS + 1
    store.close()
    return N_EVENTS / append_s, (N_EVENTS + 1) / replay_s


class TimedRecorder(SessionRecorder):
    """Counts the time spent recording (the only work the store adds to a session)."""

    spent = 0.0

    def handle(self, event) -> None:
        start = time.perf_counter()
        super().handle(event)
        self.spent += time.perf_counter() - start


async def one_run(server: FakeOpenAIServer, store: Store | None) -> tuple[float, float]:
    session = llm_session(server)
    start = time.perf_counter()
    if store is None:
        events = await collect(session)
        spent = 0.0
    else:
        recorder = TimedRecorder(store, SessionSpec(env_id=session.env.id))
        async with contextlib.aclosing(record_events(store, None, session, recorder=recorder)) as stream:
            events = [e async for e in stream]
        spent = recorder.spent
    wall = time.perf_counter() - start
    assert fold(events).termination.reason == "max_turns"
    return wall, spent


async def overhead(folder: Path, runs: int = 7) -> None:
    stores = {sync: Store(folder / f"live-{sync}.db", synchronous=sync) for sync in ("NORMAL", "FULL")}
    walls: dict[str, list[float]] = {"none": [], "NORMAL": [], "FULL": []}
    spent: dict[str, list[float]] = {"NORMAL": [], "FULL": []}
    with FakeOpenAIServer(latency=0.05, responder=responder) as server:
        await one_run(server, None)  # warm-up
        for _ in range(runs):  # interleaved, so drift hits every variant alike
            walls["none"].append((await one_run(server, None))[0])
            for sync, store in stores.items():
                wall, inside = await one_run(server, store)
                walls[sync].append(wall)
                spent[sync].append(inside)
    base = statistics.median(walls["none"])
    print(f"2. session at 50 ms per call, {TURNS} turns, live judging ({runs} runs each, medians):")
    print(f"   no store: {base:.3f} s")
    for sync in ("NORMAL", "FULL"):
        wall = statistics.median(walls[sync])
        per_turn = statistics.median(spent[sync]) / TURNS * 1000
        print(f"   store, synchronous={sync:<6}: {wall:.3f} s   ratio {wall / base:.3f} (target <= 1.05)   "
              f"recording {per_turn:.2f} ms per turn")
    for store in stores.values():
        store.close()


async def main() -> None:
    litellm_module()
    events = await sample_events()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"1. {N_EVENTS} events, each its own transaction:")
        for sync in ("NORMAL", "FULL"):
            append_rate, replay_rate = append_and_replay(events, folder, sync)
            print(f"   synchronous={sync:<6}: append {append_rate:,.0f} events/s   replay (read + parse + fold) "
                  f"{replay_rate:,.0f} events/s")
        await overhead(folder)


if __name__ == "__main__":
    asyncio.run(main())
