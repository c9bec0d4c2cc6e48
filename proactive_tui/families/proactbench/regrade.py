"""Re-grading a ProactBench session (`services.regrade`): every trigger reply judged again by a new
judge, with the very prompts the offline protocol uses (`ProactBenchSession._verdict` with the
neutral judge's system prompt and `prompts.judge_message` over the recorded context).

Offline sessions only. An online session's verdicts come from its User Agent in the same call
that writes the user's next message, and the Planner that wrote each rubric saw the dialogue as
it went: judging again with another model would need those calls again, which would change the
dialogue itself, so it would no longer be a re-grade of the same session.

What is judged: every trigger that was judged in the session and has a reply. A trigger whose
agent gave no reply stays SKIPPED with its problem, as recorded (the grading must hold a verdict
event for every trigger: its events replace the session's). A trigger cut off before its verdict
is left out, as it was.
"""

from __future__ import annotations

from proactive_tui.core.family import RegradePart

from typing import TYPE_CHECKING, Any

from proactive_tui.core.session import drain
from proactive_tui.llm import trace

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord

ONLINE_REASON = ("online sessions are judged by their user agent in the same call that writes the user's next "
                 "message, so another judge would change the dialogue itself; only offline sessions can be re-graded")


async def regrade(record: RunRecord, env: Any, judge: Any) -> list[Any]:
    from proactive_tui.core.family import UnsupportedFamily
    from proactive_tui.families.proactbench import prompts
    from proactive_tui.families.proactbench.protocol import ProactBenchSeats, ProactBenchSession
    from proactive_tui.families.proactbench.settings import ProactBenchSettings

    settings = ProactBenchSettings(**record.settings)
    if settings.protocol != "offline":
        raise UnsupportedFamily(ONLINE_REASON)
    session = ProactBenchSession(env, ProactBenchSeats(agent=None, judge=judge), settings, session_id=record.id)
    with trace.listening(session._on_call):
        for trigger in sorted(record.section.triggers, key=lambda t: t.index):
            if not trigger.judged:
                continue
            if not (trigger.response or "").strip():
                session._judged(trigger.index, trigger.turn, "", None, trigger.judge or "", trigger.judged_by or "judge",
                                trigger.problem or "the agent gave no reply to score")
                continue
            user_message = trigger.user_message or ""
            await session._verdict("judge", trigger.index, trigger.turn, prompts.JUDGE_SYSTEM,
                                   prompts.judge_message(trigger.rubric, session._context(trigger.turn), user_message,
                                                         trigger.response or ""), trigger.response or "", "judge")
    return drain(session)


class ProactBenchRegrade(RegradePart):
    """Offline sessions only: online, the user agent judges in the call that writes the user's
    next message (`regrade` raises UnsupportedFamily with ONLINE_REASON)."""

    def judge_event_types(self) -> tuple[type, ...]:
        from proactive_tui.families.proactbench.events import TriggerJudged

        return (TriggerJudged,)

    async def regrade(self, record: RunRecord, env: Any, judge: Any) -> list[Any]:
        return await regrade(record, env, judge)


REGRADE = ProactBenchRegrade()
