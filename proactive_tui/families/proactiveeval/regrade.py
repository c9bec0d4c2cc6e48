"""Re-grading a ProactiveEval session (`services.regrade`): the plan score, every turn check and the
final guidance score (and the live scores, when the session had them) asked of a new judge.

Why through the protocol's own session object: its `_score_plan`, `_check_turn` and
`_score_guidance` build the prompts (the same windows, targets and transcripts) and emit the
events, so a re-grade cannot drift from what a live session asks. The session is given the
recorded messages and plan and never runs its dialogue; only its judge seat is filled.

What is judged: the plan when one was proposed; every complete turn (agent message and user
reply both finished), in order, so the covered sub-targets accumulate as in a session; the final
guidance when the session was scored (or its guidance call failed); the live scores at the turns
the session had them. The dialogue is frozen: a new turn check that says the target was reached
earlier does not shorten it, and one that says it never was does not lengthen it.
"""

from __future__ import annotations

from proactive_tui.core.family import RegradePart

from typing import TYPE_CHECKING, Any

from proactive_tui.core.session import drain
from proactive_tui.llm import trace

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord


async def regrade(record: RunRecord, env: Any, judge: Any) -> list[Any]:
    from proactive_tui.families.proactiveeval.judges import PlanDraft
    from proactive_tui.families.proactiveeval.protocol import ProactiveEvalSeats, ProactiveEvalSession
    from proactive_tui.families.proactiveeval.record import complete_turns
    from proactive_tui.families.proactiveeval.settings import ProactiveEvalSettings

    section = record.section
    session = ProactiveEvalSession(env, ProactiveEvalSeats(agent=None, user=None, judge=judge),
                                   ProactiveEvalSettings(**record.settings), session_id=record.id)
    done = {(m.role, m.turn): m for m in record.messages if not m.partial}
    for (role, turn), message in done.items():
        (session.agent_msgs if role == "agent" else session.user_msgs)[turn] = message
    plan = section.planning
    if plan.target is not None:
        session.plan = PlanDraft(target=plan.target, sub_targets=plan.sub_targets or ["-"])
    guidance_tried = section.guidance is not None or any(
        d.purpose == "guidance score" for d in record.error_details)
    with trace.listening(session._on_call):
        if session.plan is not None:
            await session._score_plan(session.plan)
        kept = complete_turns(record)
        for turn in range(1, kept + 1):
            await session._check_turn(turn)
        for live in sorted({s.turn for s in section.live_scores}):
            await session._score_guidance(live=True, turn=live)
        if guidance_tried and session.agent_msgs:
            last = max(session.user_msgs) if session.user_msgs else max(session.agent_msgs)
            await session._score_guidance(live=False, turn=section.guidance.turn if section.guidance else last)
    return drain(session)


class ProactiveEvalRegrade(RegradePart):
    def judge_event_types(self) -> tuple[type, ...]:
        from proactive_tui.families.proactiveeval.events import GuidanceScored, PlanScored, TurnChecked

        return (PlanScored, TurnChecked, GuidanceScored)

    async def regrade(self, record: RunRecord, env: Any, judge: Any) -> list[Any]:
        return await regrade(record, env, judge)


REGRADE = ProactiveEvalRegrade()
