"""Session events: typed, JSON-serialisable, folded by every consumer.

Each event carries `seq` (its position in the session) and `ts` (wall time, ISO 8601), set by
the session when it emits the event, so a store can append them and a replay reproduces the view.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, TypeAdapter

from proactive_tui.engine.event_base import EventBase, Seat, SeatInfo, UsageInfo, now_iso  # noqa: F401
from proactive_tui.engine.events_proposals import PROPOSAL_EVENTS
from proactive_tui.engine.events_timeline import TIMELINE_EVENTS
Termination = Literal["target_reached", "max_turns", "user_stopped", "cancelled", "error", "completed",
                      "task_completed", "task_failed", "derailed", "timeline_exhausted"]


class ChatMessage(BaseModel):
    role: str
    content: str


class MessageRecord(BaseModel):
    id: str
    role: Literal["agent", "user"]
    content: str
    turn: int
    started_at: str
    finished_at: str
    model: str
    usage: UsageInfo = Field(default_factory=UsageInfo)
    visible_context: list[ChatMessage] = Field(default_factory=list)
    """The dialogue messages this seat's model saw (its static system prompt excluded)."""
    context_turns: list[int] = Field(default_factory=list)
    partial: bool = False


class TurnCheck(BaseModel):
    turn: int
    target_reached: bool | None
    reason: str
    covered_sub_targets: list[int] = Field(default_factory=list)
    """1-based indices of the reference sub-targets the agent's message of this turn covers."""
    target_density: int = 0
    cumulative_sub_targets: list[int] = Field(default_factory=list)
    probes: list[str] = Field(default_factory=list)
    judge_model: str = ""


class GuidanceScore(BaseModel):
    reasoning: str
    effectiveness: int
    personalization: int
    tone: int
    engagement: int
    naturalness: int
    overall: int
    judge_model: str
    live: bool = False
    turn: int = 0


class Plan(BaseModel):
    target: str
    sub_targets: list[str]
    model: str
    score: int | None = None
    reasoning: str | None = None
    judge_model: str | None = None


class SessionStarted(EventBase):
    type: Literal["session_started"] = "session_started"
    session_id: str
    family: str
    env_id: str
    environment: dict[str, Any]
    mode: Literal["watch", "play"]
    seats: dict[str, SeatInfo]
    settings: dict[str, Any]
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)
    prompt_version: str
    app_version: str
    resumed_from: dict[str, Any] | None = None
    """For a resumed session: {"session_id": the interrupted session, "turns": complete turns kept}."""


class PhaseChanged(EventBase):
    type: Literal["phase_changed"] = "phase_changed"
    phase: str
    """planning | dialogue | scoring for ProactiveEval; each family names its own phases."""


class MessageStarted(EventBase):
    type: Literal["message_started"] = "message_started"
    message_id: str
    role: Literal["agent", "user"]
    turn: int
    model: str


class MessageDelta(EventBase):
    type: Literal["message_delta"] = "message_delta"
    message_id: str
    text: str


class MessageDone(EventBase):
    type: Literal["message_done"] = "message_done"
    message: MessageRecord


class MessageDiscarded(EventBase):
    """A message generated ahead (overlapping a judge call) that the dialogue no longer needs."""

    type: Literal["message_discarded"] = "message_discarded"
    message_id: str
    reason: str


class AwaitingHuman(EventBase):
    type: Literal["awaiting_human"] = "awaiting_human"
    seat: Seat
    turn: int
    hint: str = ""


class PlanProposed(EventBase):
    type: Literal["plan_proposed"] = "plan_proposed"
    plan: Plan


class PlanScored(EventBase):
    type: Literal["plan_scored"] = "plan_scored"
    score: int
    reasoning: str
    judge_model: str


class TurnChecked(EventBase):
    type: Literal["turn_checked"] = "turn_checked"
    check: TurnCheck


class GuidanceScored(EventBase):
    type: Literal["guidance_scored"] = "guidance_scored"
    score: GuidanceScore


class Retrying(EventBase):
    type: Literal["retrying"] = "retrying"
    seat: Seat
    model: str
    attempt: int
    max_attempts: int
    wait_s: float
    reason: str


class UsageRecorded(EventBase):
    """Tokens and cost of a call that is not a dialogue message (planning, judging)."""

    type: Literal["usage_recorded"] = "usage_recorded"
    seat: Seat
    model: str
    purpose: str
    usage: UsageInfo


class ErrorRaised(EventBase):
    type: Literal["error"] = "error"
    seat: Seat | None = None
    message: str
    fatal: bool = False


class SessionEnded(EventBase):
    type: Literal["session_ended"] = "session_ended"
    reason: Termination
    detail: str = ""


# Events every family uses, then each family's own. A family adds its tuple here (one line).
COMMON_EVENTS = (
    SessionStarted, PhaseChanged, MessageStarted, MessageDelta, MessageDone, MessageDiscarded, AwaitingHuman,
    Retrying, UsageRecorded, ErrorRaised, SessionEnded,
)
GUIDANCE_EVENTS = (PlanProposed, PlanScored, TurnChecked, GuidanceScored)
ALL_EVENTS = COMMON_EVENTS + GUIDANCE_EVENTS + PROPOSAL_EVENTS + TIMELINE_EVENTS

Event = Annotated[Union[ALL_EVENTS], Field(discriminator="type")]  # type: ignore[valid-type]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(data: str | bytes | dict[str, Any]) -> Event:
    if isinstance(data, (str, bytes)):
        return EVENT_ADAPTER.validate_json(data)
    return EVENT_ADAPTER.validate_python(data)
