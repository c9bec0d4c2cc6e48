"""Events of a Chronos session: everything a viewer needs to draw the timeline and score it.

The simulated clock and the states (past / current / upcoming, each with `meets_needs`) come in
TimelineAdvanced; the reminders in RemindersChanged (the whole list each time); whether the user is
dormant in UserPresenceChanged; what the simulated user was told to do in UserBriefed; every
observation injected in place of a user message in TimelineObservation; each agent turn, with its
structured reply (the task_description included) and the oracle's expected action and status, in
AgentTurnJudged; the intention shift in IntentionShifted; the verdict and metrics in
TimelineFinished (just before SessionEnded). Dialogue text itself uses the common message events.

One agent turn, in order: [UserBriefed -> message user] or TimelineObservation (the turn's input)
-> message agent (content: the reply as JSON) -> AgentTurnJudged -> then whatever the action caused
(RemindersChanged, UserPresenceChanged, TimelineAdvanced, ...).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from proactive_tui.core.events import EventBase
from proactive_tui.families.chronos.reply import AgentReply

InputKind = Literal["user", "tool_call", "internal_trigger"]
Situation = Literal["details", "waiting", "offer_meets", "offer_fails", "shift", "confirmed"]


class StateView(BaseModel):
    index: int
    """Position in the whole timeline: the initial states, then the states after the shift."""
    phase: Literal["initial", "shifted"]
    time: str
    listings: list[str]
    meets_needs: bool
    """Against the needs of its phase (the initial ones, or the ones after the shift)."""
    note: str = ""
    position: Literal["past", "current", "upcoming", "skipped"]


class TimelineView(BaseModel):
    clock: str
    """The simulated time now (ISO 8601)."""
    current: int
    phase: Literal["initial", "shifted"]
    states: list[StateView] = Field(default_factory=list)


class Reminder(BaseModel):
    id: int
    turn: int
    type: str | None = None
    value: str | None = None
    set_at: str
    """The simulated time it was set."""
    intention: str | None = None
    status: Literal["active", "superseded", "done", "cancelled"] = "active"


class RevealedConstraint(BaseModel):
    key: str
    value: str


class UserBrief(BaseModel):
    """What the simulated user (or a person playing it, as a hint) is told before one reply."""

    turn: int
    """The agent turn this reply will be the input of."""
    situation: Situation
    reveal: list[RevealedConstraint] = Field(default_factory=list)
    offer_meets_needs: bool | None = None
    """Whether the option just brought to the user fits; None when no offer is on the table."""
    instruction: str


class TurnOutcome(BaseModel):
    """One agent turn: what it answered, what the oracle expected, and whether it derailed the task."""

    turn: int
    input_kind: InputKind
    clock: str
    state_index: int
    monitoring: bool
    """The user was dormant (the monitor, not the user, produced the input)."""
    reply: AgentReply | None = None
    """None when the reply never validated (a format failure)."""
    raw: str = ""
    asks: int = 1
    """Replies the model needed (1 = valid at once; each re-ask adds one)."""
    format_failure: bool = False
    expected_action: str
    acceptable_actions: list[str]
    expected_status: str
    why: str = ""
    action_correct: bool
    status_correct: bool
    critical: str | None = None
    """Failure rule this turn broke (premature_silence, unconfirmed_completion, ...), if any."""
    delivered: bool = False
    """The response_text reached the user."""
    model: str = ""
    user_read_as: str | None = None
    """How the user's message this turn answers was read (confirm, refuse, shift), when it was
    read at all (only replies to an offer, and the shift point, are)."""
    user_read_by: Literal["command", "judge", "keywords", "brief"] | None = None
    """What produced that reading: the person's command (/confirm, /refuse, /shift), the judge
    seat's model (`ChronosSettings.confirmation_reader` "judge", the default), the keyword check on
    the reply's words (`oracle.classify_reply`: the offline fallback, and what reads a reply the
    judge gave no usable reading of), or the brief (a model user told to shift is taken to have
    shifted)."""
    user_read_model: str | None = None
    """The judge's model, when the judge read it."""
    user_read_note: str = ""
    """The judge's reasoning; or why the keyword check read it instead of the judge."""
    task_reset: bool | None = None
    """On COMPLETE_TASK: whether the reply nulled `intention` and `constraints`, as the paper's
    action rules ask (None on other actions). A reply that did not is a status error on that turn:
    the task it describes is not the finished one."""

    @property
    def action(self) -> str | None:
        return self.reply.proactive_action if self.reply else None

    @property
    def status(self) -> str | None:
        return self.reply.task_description.status if self.reply else None


class SessionOutcome(BaseModel):
    branch: Literal["positive", "negative"]
    tier: Literal["simple", "complex"]
    success: bool | None
    """None when the session was not played to a verdict (cancelled, stopped, error)."""
    reason: str
    detail: str = ""
    turns: int = 0
    action_accuracy: float | None = None
    status_accuracy: float | None = None
    task: dict[str, Any] | None = None
    """The task as it stood when the session ended (intention and constraints, as the agent last
    wrote them). Null after COMPLETE_TASK, whatever the reply held: a completed task has no open
    intention (the paper's action rule); a reply that kept them is marked by `TurnOutcome.task_reset`."""


class TimelineAdvanced(EventBase):
    type: Literal["chronos.timeline_advanced"] = "chronos.timeline_advanced"
    view: TimelineView
    cause: Literal["start", "monitor", "fast_forward", "shift"]


class TimelineObservation(EventBase):
    type: Literal["chronos.timeline_observation"] = "chronos.timeline_observation"
    turn: int
    """The agent turn this observation is the input of."""
    source: Literal["tool_call", "internal_trigger"]
    clock: str
    state_index: int
    content: str
    """Exactly what the agent's model is sent (as a user-role message)."""


class RemindersChanged(EventBase):
    type: Literal["chronos.timeline_reminders"] = "chronos.timeline_reminders"
    reminders: list[Reminder]


class UserPresenceChanged(EventBase):
    type: Literal["chronos.timeline_presence"] = "chronos.timeline_presence"
    dormant: bool
    reason: str
    clock: str


class UserBriefed(EventBase):
    type: Literal["chronos.timeline_user_brief"] = "chronos.timeline_user_brief"
    brief: UserBrief


class AgentTurnJudged(EventBase):
    type: Literal["chronos.timeline_turn"] = "chronos.timeline_turn"
    outcome: TurnOutcome


class IntentionShifted(EventBase):
    type: Literal["chronos.timeline_shift"] = "chronos.timeline_shift"
    turn: int
    utterance: str
    intention: str
    constraints: dict[str, str]


class TimelineFinished(EventBase):
    type: Literal["chronos.timeline_outcome"] = "chronos.timeline_outcome"
    outcome: SessionOutcome


EVENTS = (
    TimelineAdvanced, TimelineObservation, RemindersChanged, UserPresenceChanged, UserBriefed, AgentTurnJudged,
    IntentionShifted, TimelineFinished,
)

LEGACY_TYPES = {cls.model_fields["type"].default.split(".", 1)[1]: cls.model_fields["type"].default for cls in EVENTS}
"""Event names written before the family prefix (proactive-tui 0.1 stores)."""
