"""The ProactBench section of a run record, folded from the session's events (a pure reducer).

`triggers` is the heart of it: one row per trigger point with its rubric, the reply the agent
gave, the reply the curation model gave (offline), and the verdict. `stats()` tallies them the way
upstream's `trigger_stats` does.
"""

from __future__ import annotations

from proactive_tui.core.family import RecordPart
from proactive_tui.families.proactbench import labels, report as report_module
from proactive_tui.families.proactbench.events import EVENT_TYPES

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from proactive_tui.families.proactbench.env import EvaluationResult, PlannerOutput, Rubric
from proactive_tui.families.proactbench.events import JudgedBy, Planned, RecordedTurn, TriggerJudged, TriggerOpened

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord


class RecordedTurnRecord(BaseModel):
    turn: int
    user_message: str
    assistant_response: str
    model: str = ""


class PlanRecord(BaseModel):
    turn: int
    plan: PlannerOutput
    model: str


class TriggerRecord(BaseModel):
    index: int
    turn: int
    rubric: Rubric
    user_message: str | None = None
    original_response: str | None = None
    response: str | None = None
    """The reply judged (set with the verdict)."""
    result: EvaluationResult | None = None
    judge: str | None = None
    judged_by: JudgedBy | None = None
    problem: str = ""
    evidence_in_reply: bool | None = None
    judged: bool = False
    """A verdict event came (with a result or not): False while the trigger waits for one."""

    @property
    def type(self) -> str:
        return self.rubric.type

    @property
    def counted(self) -> str:
        """PASS, PARTIAL, FAIL or SKIPPED, as upstream tallies it."""
        return self.result.counted if self.result is not None else "SKIPPED"


class ProactBenchSection(BaseModel):
    recorded: list[RecordedTurnRecord] = Field(default_factory=list)
    plans: list[PlanRecord] = Field(default_factory=list)
    triggers: list[TriggerRecord] = Field(default_factory=list)

    def trigger(self, index: int) -> TriggerRecord | None:
        return next((t for t in self.triggers if t.index == index), None)

    def stats(self) -> dict[str, dict[str, int]]:
        """Per-type tallies of the judged triggers (upstream's `trigger_stats` shape); a trigger
        still waiting for its verdict is not counted yet."""
        from proactive_tui.families.proactbench.metrics import trigger_stats

        return trigger_stats((t.type, t.result) for t in self.triggers if t.judged)


def apply_event(record: RunRecord, event: Any) -> None:
    section: ProactBenchSection = record.section
    if isinstance(event, RecordedTurn):
        section.recorded = [r for r in section.recorded if r.turn != event.turn] + [RecordedTurnRecord(
            turn=event.turn, user_message=event.user_message, assistant_response=event.assistant_response, model=event.model)]
    elif isinstance(event, Planned):
        section.plans = [p for p in section.plans if p.turn != event.turn] + [
            PlanRecord(turn=event.turn, plan=event.plan, model=event.model)]
    elif isinstance(event, TriggerOpened):
        section.triggers = [t for t in section.triggers if t.index != event.index] + [TriggerRecord(
            index=event.index, turn=event.turn, rubric=event.rubric, user_message=event.user_message,
            original_response=event.original_response)]
    elif isinstance(event, TriggerJudged):
        trigger = section.trigger(event.index)
        if trigger is None:
            return
        trigger.response = event.response
        trigger.result = event.result
        trigger.judge = event.judge
        trigger.judged_by = event.judged_by
        trigger.problem = event.problem
        trigger.evidence_in_reply = event.evidence_in_reply
        trigger.judged = True


class ProactBenchRecord(RecordPart):
    """The triggers section: each planted trigger point, its rubric and its verdict."""

    section_model = ProactBenchSection
    events = EVENT_TYPES

    apply = staticmethod(apply_event)
    scores = staticmethod(report_module.scores)
    verdicts = staticmethod(labels.verdicts)

    def complete_turns(self, record: RunRecord) -> int:
        """Offline: the trigger points judged (each one user message and the agent's reply to it);
        online: the turns whose agent reply finished."""
        if (record.settings or {}).get("protocol") == "online":
            return len({m.turn for m in record.messages if m.role == "agent" and not m.partial})
        return sum(1 for t in record.section.triggers if t.judged)

    def reply_writers(self, record: RunRecord) -> list[tuple[str, str]]:
        """The dialogue's messages, then who gave each verdict (offline the judge seat's, online
        the user seat's: the User Agent or the person playing the user)."""
        from proactive_tui.core.writers import message_writers

        seat = "user" if (record.settings or {}).get("protocol") == "online" else "judge"
        return message_writers(record) + [(seat, t.judge) for t in record.section.triggers if t.result is not None and t.judge]

    def turn_scores(self, record: RunRecord) -> Any:
        """Per dialogue turn, the verdict's value at a trigger turn (PASS 1, PARTIAL 0.5, FAIL 0;
        None at other turns and for SKIPPED), so two agents on the same dialogue line up trigger by
        trigger; at the end the overall weighted score."""
        from proactive_tui.core.scores import TurnScores
        from proactive_tui.families.proactbench.env import SCORE_VALUE

        triggers = {t.turn: t for t in record.section.triggers if t.judged}
        last = max(triggers, default=0)
        per_turn = [SCORE_VALUE.get(triggers[n].counted) if n in triggers else None for n in range(1, last + 1)]
        overall = record.score("overall_weighted")
        return TurnScores(label="trigger verdict (1 / 0.5 / 0)", per_turn=per_turn, final_label="weighted score",
                          final=overall.value if overall is not None else None)


RECORD = ProactBenchRecord()
