"""Re-grading a ProactiveBench session (`services.regrade`): every recorded proposal judged again by a
new judge in the user seat (the reward judge), and the confusion counts and metrics recomputed
from the new verdicts.

Why through the protocol's own session object: its `_judge` asks each candidate (or the null
proposal) with upstream's reward-model input byte for byte (`judge_messages`) and emits the
ProposalVerdict events, and its `_finish_event` counts an event and emits ProposalMetricsUpdated,
so the numbers are the ones a live session with this judge would give for these proposals.

The dialogue is frozen. In a session with `retries`, the attempts a rejection by the original
judge caused are judged as recorded, each by the new judge, and the event is counted on its last
recorded attempt, as the session counted it; a new judge that accepts the first attempt does not
remove the retry, and one that rejects the last does not add one. With `feedback` on, the
agent's later replies were shaped by the original verdicts: they are judged as they are. An
event the session could not count (no usable agent reply) stays uncounted (skipped); an event cut
off before its count is left out.
"""

from __future__ import annotations

from proactive_tui.core.family import RegradePart

from typing import TYPE_CHECKING, Any

from proactive_tui.core.session import drain
from proactive_tui.llm import trace

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord


async def regrade(record: RunRecord, env: Any, judge: Any) -> list[Any]:
    from proactive_tui.families.proactivebench.metrics import EventJudgement
    from proactive_tui.families.proactivebench.protocol import ProactiveBenchSeats, ProactiveBenchSession
    from proactive_tui.families.proactivebench.settings import ProactiveBenchSettings

    session = ProactiveBenchSession(env, ProactiveBenchSeats(agent=None, user=judge),
                                    ProactiveBenchSettings(**record.settings), session_id=record.id)
    with trace.listening(session._on_call):
        for event in record.section.events:
            if event.judgement is None:  # cut off before it was counted
                continue
            if not event.attempts:  # no usable agent reply: the session counted it as skipped
                session._finish_event(event.index, EventJudgement(), attempts=1)
                continue
            outcome = EventJudgement()
            for attempt in event.attempts:
                judged = await session._judge(event.index, attempt.attempt, attempt.tasks)
                outcome = EventJudgement(tasks=attempt.tasks, verdicts=[j.verdict for j in judged])
            session._finish_event(event.index, outcome, attempts=len(event.attempts))
    return drain(session)


class ProactiveBenchRegrade(RegradePart):
    """The reward judge sits in the user seat, so a re-grade replaces the user seat's model."""

    seat = "user"

    def judge_event_types(self) -> tuple[type, ...]:
        from proactive_tui.families.proactivebench.events import ProposalMetricsUpdated, ProposalVerdict

        return (ProposalVerdict, ProposalMetricsUpdated)

    async def regrade(self, record: RunRecord, env: Any, judge: Any) -> list[Any]:
        return await regrade(record, env, judge)


REGRADE = ProactiveBenchRegrade()
