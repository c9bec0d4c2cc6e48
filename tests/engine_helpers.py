"""Scripted seats and a sample environment for engine tests and benchmarks."""

from __future__ import annotations

from typing import Any

from conftest import SAMPLE_DIRS
from proactive_tui.families.proactiveeval.judges import GuidanceJudgement, PlanDraft, PlanJudgement, TurnVerdict
from proactive_tui.core.participants import ScriptedParticipant
from proactive_tui.families.proactiveeval.protocol import ProactiveEvalSession, ProactiveEvalSettings, ProactiveEvalSeats
from proactive_tui.envs import load_paths

ENV_ID = "proactiveeval/recommendation/fair/0"


def sample_env(env_id: str = ENV_ID):
    return load_paths([SAMPLE_DIRS["proactiveeval"]]).get(env_id)


def scripted_judge(reach_at: int | None = None, covered: dict[int, list[int]] | None = None) -> ScriptedParticipant:
    """A judge whose turn checks say 'reached' at `reach_at` (by counting transcript turns)."""

    def structured(request, schema):
        prompt = request.messages[0]["content"]
        if schema is PlanJudgement:
            return PlanJudgement(reasoning="plan is close to the reference", score=7)
        if schema is TurnVerdict:
            turn = prompt.count("Assistant: ")
            return TurnVerdict(reasoning=f"turn {turn} checked", target_reached=reach_at is not None and turn >= reach_at,
                               covered_steps=(covered or {}).get(turn, [turn]))
        if schema is GuidanceJudgement:
            turns = prompt.count("Assistant: ")
            return GuidanceJudgement(reasoning=f"scored {turns} turns", effectiveness=8, personalization=7, tone=9,
                                     engagement=6, naturalness=8, overall=min(10, 5 + turns))
        raise AssertionError(schema)

    return ScriptedParticipant([], structured=structured, label="scripted-judge")


def scripted_agent(delay: float = 0.0) -> ScriptedParticipant:
    return ScriptedParticipant(
        lambda req: f"agent says turn {req.turn}",
        structured=lambda req, schema: PlanDraft(target="help pick a thing", sub_targets=["ask", "compare", "suggest"]),
        label="scripted-agent", delay=delay,
    )


def scripted_user(delay: float = 0.0) -> ScriptedParticipant:
    return ScriptedParticipant(lambda req: f"user answers turn {req.turn}", label="scripted-user", delay=delay)


def make_session(reach_at: int | None = None, agent=None, user=None, judge=None, **settings: Any) -> ProactiveEvalSession:
    seats = ProactiveEvalSeats(agent=agent or scripted_agent(), user=user or scripted_user(), judge=judge or scripted_judge(reach_at))
    return ProactiveEvalSession(sample_env(), seats, ProactiveEvalSettings(**settings))


async def collect(session) -> list:
    return [event async for event in session.events()]
