"""The run record: one JSON document per session, folded from its events by a pure reducer.

`RunRecordBuilder.apply(event)` is the reducer the UI, the store's replay, export and the
headless command all share, so every view of a session agrees with its event log.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Iterable

from pydantic import BaseModel, Field

from proactive_tui.engine.proposals_record import ProposalsRecord, apply_proposal_event
from proactive_tui.engine.timeline_record import TimelineRecord, apply_timeline_event
from proactive_tui.engine.events import (
    ErrorRaised, GuidanceScore, GuidanceScored, MessageDiscarded, MessageDone, MessageRecord, PlanProposed,
    PlanScored, Retrying, SeatInfo, SessionEnded, SessionStarted, TurnCheck, TurnChecked, UsageInfo, UsageRecorded,
)


class PlanningRecord(BaseModel):
    target: str | None = None
    sub_targets: list[str] = Field(default_factory=list)
    model: str | None = None
    score: int | None = None
    reasoning: str | None = None
    judge_model: str | None = None


class Totals(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None
    wall_time_s: float | None = None
    retries: int = 0


class Termination(BaseModel):
    reason: str
    detail: str = ""


class RunRecord(BaseModel):
    id: str
    family: str
    env_id: str
    environment: dict[str, Any]
    mode: str
    human_seats: list[str]
    seats: dict[str, SeatInfo]
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)
    settings: dict[str, Any]
    planning: PlanningRecord = Field(default_factory=PlanningRecord)
    messages: list[MessageRecord] = Field(default_factory=list)
    turn_checks: list[TurnCheck] = Field(default_factory=list)
    guidance: GuidanceScore | None = None
    live_scores: list[GuidanceScore] = Field(default_factory=list)
    proposals: ProposalsRecord | None = None
    """ProactiveBench: every event's attempts and verdicts, confusion counts and the six metrics."""
    timeline: TimelineRecord | None = None
    """Chronos: observations, reminders, the oracle's verdict per turn, the session's verdict and accuracies."""
    errors: list[str] = Field(default_factory=list)
    termination: Termination | None = None
    totals: Totals = Field(default_factory=Totals)
    versions: dict[str, str] = Field(default_factory=dict)
    started_at: str = ""
    ended_at: str | None = None
    resumed_from: dict[str, Any] | None = None


# Family-specific reducers: family -> apply(record, event), called for events the common fold
# does not handle. Each family's protocol registers one here (one line).
FAMILY_REDUCERS: dict[str, Callable[["RunRecord", Any], None]] = {}
FAMILY_REDUCERS["proactivebench"] = apply_proposal_event
FAMILY_REDUCERS["chronos"] = apply_timeline_event


class RunRecordBuilder:
    """Fold events into a RunRecord, one at a time."""

    def __init__(self) -> None:
        self.record: RunRecord | None = None

    def _add_usage(self, usage: UsageInfo) -> None:
        totals = self.record.totals  # type: ignore[union-attr]
        totals.prompt_tokens += usage.prompt_tokens
        totals.completion_tokens += usage.completion_tokens
        totals.total_tokens += usage.total_tokens
        if usage.cost is not None:
            totals.cost = (totals.cost or 0.0) + usage.cost

    def apply(self, event: Any) -> RunRecord | None:
        if isinstance(event, SessionStarted):
            self.record = RunRecord(
                id=event.session_id, family=event.family, env_id=event.env_id, environment=event.environment,
                mode=event.mode, human_seats=[s for s, info in event.seats.items() if info.kind == "human"],
                seats=event.seats, models=event.models, settings=event.settings,
                versions={"app": event.app_version, "prompts": event.prompt_version}, started_at=event.ts,
                resumed_from=event.resumed_from,
            )
            return self.record
        rec = self.record
        if rec is None:
            return None
        if isinstance(event, MessageDone):
            rec.messages = [m for m in rec.messages if m.id != event.message.id] + [event.message]
            self._add_usage(event.message.usage)
        elif isinstance(event, MessageDiscarded):
            rec.messages = [m for m in rec.messages if m.id != event.message_id]
        elif isinstance(event, PlanProposed):
            rec.planning.target = event.plan.target
            rec.planning.sub_targets = event.plan.sub_targets
            rec.planning.model = event.plan.model
        elif isinstance(event, PlanScored):
            rec.planning.score = event.score
            rec.planning.reasoning = event.reasoning
            rec.planning.judge_model = event.judge_model
        elif isinstance(event, TurnChecked):
            rec.turn_checks.append(event.check)
        elif isinstance(event, GuidanceScored):
            if event.score.live:
                rec.live_scores.append(event.score)
            else:
                rec.guidance = event.score
        elif isinstance(event, UsageRecorded):
            self._add_usage(event.usage)
        elif isinstance(event, Retrying):
            rec.totals.retries += 1
        elif isinstance(event, ErrorRaised):
            rec.errors.append(event.message)
        elif isinstance(event, SessionEnded):
            rec.termination = Termination(reason=event.reason, detail=event.detail)
            rec.ended_at = event.ts
            try:
                rec.totals.wall_time_s = round(
                    (datetime.fromisoformat(event.ts) - datetime.fromisoformat(rec.started_at)).total_seconds(), 3
                )
            except ValueError:
                pass
        elif rec.family in FAMILY_REDUCERS:
            FAMILY_REDUCERS[rec.family](rec, event)
        return rec


def fold(events: Iterable[Any]) -> RunRecord:
    builder = RunRecordBuilder()
    for event in events:
        builder.apply(event)
    if builder.record is None:
        raise ValueError("no session_started event: not a session log")
    return builder.record
