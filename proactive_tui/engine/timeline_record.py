"""The `timeline` section of a Chronos run record, folded from the session's events.

`apply_timeline_event` is registered in run_record.FAMILY_REDUCERS. It only reads events, so a
replayed event log rebuilds the same section; it holds what the dialogue messages alone cannot
say: the observations the agent read, the oracle's verdict on every turn, the reminders, the
user's briefs, the shift, the clock, and the session's verdict with its accuracies.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from proactive_tui.engine.events_timeline import (
    AgentTurnJudged, IntentionShifted, Reminder, RemindersChanged, SessionOutcome, TimelineAdvanced, TimelineFinished,
    TimelineObservation, TimelineView, TurnOutcome, UserBrief, UserBriefed, UserPresenceChanged,
)


class ObservationRecord(BaseModel):
    turn: int
    source: Literal["tool_call", "internal_trigger"]
    clock: str
    state_index: int
    content: str


class ShiftRecord(BaseModel):
    turn: int
    utterance: str
    intention: str
    constraints: dict[str, str]


class TimelineRecord(BaseModel):
    scenario: str = ""
    branch: str = ""
    tier: str = ""
    view: TimelineView | None = None
    """The timeline as it last stood: the clock, the current state, past and upcoming states."""
    user_dormant: bool = False
    observations: list[ObservationRecord] = Field(default_factory=list)
    briefs: list[UserBrief] = Field(default_factory=list)
    reminders: list[Reminder] = Field(default_factory=list)
    shift: ShiftRecord | None = None
    turns: list[TurnOutcome] = Field(default_factory=list)
    outcome: SessionOutcome | None = None


def apply_timeline_event(record: Any, event: Any) -> None:
    """Fold one Chronos event into `record.timeline` (created on first use)."""
    if record.timeline is None:
        scenario = (record.environment or {}).get("scenario") or {}
        record.timeline = TimelineRecord(scenario=str(scenario.get("scenario", "")), branch=str(scenario.get("branch", "")),
                                         tier=str(scenario.get("tier", "")))
    section: TimelineRecord = record.timeline
    if isinstance(event, TimelineAdvanced):
        section.view = event.view
    elif isinstance(event, TimelineObservation):
        section.observations.append(ObservationRecord(turn=event.turn, source=event.source, clock=event.clock,
                                                      state_index=event.state_index, content=event.content))
    elif isinstance(event, UserBriefed):
        section.briefs.append(event.brief)
    elif isinstance(event, RemindersChanged):
        section.reminders = list(event.reminders)
    elif isinstance(event, UserPresenceChanged):
        section.user_dormant = event.dormant
    elif isinstance(event, AgentTurnJudged):
        section.turns.append(event.outcome)
    elif isinstance(event, IntentionShifted):
        section.shift = ShiftRecord(turn=event.turn, utterance=event.utterance, intention=event.intention,
                                    constraints=dict(event.constraints))
    elif isinstance(event, TimelineFinished):
        section.outcome = event.outcome


def timeline_headline(record: Any) -> dict[str, Any]:
    """The few values a history row shows for a Chronos session (for the store's HEADLINES)."""
    section = record.timeline
    outcome = section.outcome if section else None

    def pct(value: float | None) -> str | None:
        return None if value is None else f"{100 * value:.0f}%"

    return {
        "turns": len(section.turns) if section else 0,
        "success": None if outcome is None or outcome.success is None else ("yes" if outcome.success else "no"),
        "action": pct(outcome.action_accuracy) if outcome else None,
        "status": pct(outcome.status_accuracy) if outcome else None,
    }
