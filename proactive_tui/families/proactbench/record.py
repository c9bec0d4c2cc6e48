"""The ProactBench section of a run record, folded from the session's events (a pure reducer).

`triggers` is the heart of it: one row per trigger point with its rubric, the reply the agent
gave, the reply the curation model gave (offline), and the verdict. `stats()` tallies them the way
upstream's `trigger_stats` does.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from proactive_tui.families.proactbench.env import EvaluationResult, PlannerOutput, Rubric
from proactive_tui.families.proactbench.events import JudgedBy, Planned, RecordedTurn, TriggerJudged, TriggerOpened


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


def apply_event(record: Any, event: Any) -> None:
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
