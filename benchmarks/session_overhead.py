"""Engine overhead of a ProactiveEval session, and how well judging overlaps with generation.

Run: .venv/bin/python benchmarks/session_overhead.py

1. Engine time per turn: a 6-turn session with planning and live judging where every seat is a
   scripted participant answering instantly, so all time measured is the engine's own (events,
   context windows, probes, task scheduling). Target < 5 ms per turn.
2. The same session through the real litellm path against the fake server at zero latency:
   total time per turn, for reference (this includes litellm's per-call cost).
3. At 50 ms fake latency per call: session wall time vs the critical path, the sum of the agent
   and user call durations alone. Judge calls (turn checks, live scores, plan score, final score)
   overlap with generation, so the ratio should stay <= 1.10.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from engine_helpers import collect, make_session, sample_env  # noqa: E402
from proactive_tui.core.participants import LLMParticipant  # noqa: E402
from proactive_tui.families.proactiveeval.protocol import ProactiveEvalSession, ProactiveEvalSettings, ProactiveEvalSeats  # noqa: E402
from proactive_tui.core.run_record import fold  # noqa: E402
from proactive_tui.llm.gateway import Gateway, litellm_module  # noqa: E402
from proactive_tui.llm.settings import ModelSettings  # noqa: E402
from proactive_tui.testing.fake_openai import FakeOpenAIServer  # noqa: E402

TURNS = 6


def responder(body: dict) -> str:
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if name == "TurnVerdict":
        return json.dumps({"reasoning": "not yet", "target_reached": False, "covered_steps": [1]})
    if name == "GuidanceJudgement":
        return json.dumps({"reasoning": "ok", "effectiveness": 6, "personalization": 6, "tone": 6, "engagement": 6,
                           "naturalness": 6, "overall": 6})
    if name == "PlanDraft":
        return json.dumps({"target": "t", "sub_targets": ["a", "b", "c"]})
    if name == "PlanJudgement":
        return json.dumps({"reasoning": "fine", "score": 5})
    return "Here is a short line of dialogue for this turn, about twenty words long, as a model might write it."


async def scripted_overhead(runs: int = 30) -> float:
    per_turn = []
    for _ in range(runs):
        session = make_session(max_turns=TURNS, planning=True, live_judging=True)
        start = time.perf_counter()
        record = fold(await collect(session))
        per_turn.append((time.perf_counter() - start) / TURNS)
        assert record.termination.reason == "max_turns"
    return statistics.median(per_turn) * 1000


def llm_session(server: FakeOpenAIServer) -> ProactiveEvalSession:
    gateway = Gateway()
    settings = ModelSettings(model="openai/bench", api_base=server.base_url)
    seats = ProactiveEvalSeats(agent=LLMParticipant(gateway, settings), user=LLMParticipant(gateway, settings),
                  judge=LLMParticipant(gateway, settings))
    return ProactiveEvalSession(sample_env(), seats, ProactiveEvalSettings(max_turns=TURNS, live_judging=True))


def seconds(a: str, b: str) -> float:
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()


async def fake_server_runs(latency: float, runs: int) -> tuple[float, float]:
    """Median wall time per session and median critical path (agent + user call durations)."""
    walls, paths = [], []
    with FakeOpenAIServer(latency=latency, responder=responder) as server:
        await collect(llm_session(server))  # warm-up
        for _ in range(runs):
            session = llm_session(server)
            start = time.perf_counter()
            events = await collect(session)
            walls.append(time.perf_counter() - start)
            record = fold(events)
            assert record.termination.reason == "max_turns" and len(record.section.live_scores) == TURNS - 1
            plan_call = [e for e in events if e.type in ("phase_changed", "proactiveeval.plan_proposed")]
            plan_s = seconds(plan_call[0].ts, plan_call[1].ts)  # the agent's planning call
            paths.append(plan_s + sum(seconds(m.started_at, m.finished_at) for m in record.messages))
    return statistics.median(walls), statistics.median(paths)


async def main() -> None:
    litellm_module()
    engine_ms = await scripted_overhead()
    print(f"1. engine time per turn (scripted seats, 6 turns, planning + live judging): {engine_ms:.2f} ms   (target < 5 ms)")
    wall0, _ = await fake_server_runs(0.0, runs=5)
    print(f"2. fake server, zero latency: {wall0 / TURNS * 1000:.1f} ms per turn including litellm "
          f"({4} model calls per turn: agent, user, turn check, live score)")
    wall, path = await fake_server_runs(0.05, runs=5)
    print(f"3. fake server, 50 ms per call: session wall {wall:.3f} s, critical path (agent + user calls) {path:.3f} s")
    print(f"   ratio wall / critical path: {wall / path:.3f}   (target <= 1.10)")


if __name__ == "__main__":
    asyncio.run(main())
