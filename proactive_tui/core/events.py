"""Session events: typed, JSON-serialisable, folded by every consumer.

Each event carries `seq` (its position in the session) and `ts` (wall time, ISO 8601), set by
the session when it emits the event, so a store can append them and a replay reproduces the view.

This module holds the event base and the events every family uses. A family's own events live in
its folder, with `type` literals prefixed by the family's name (`proactivebench.proposal_made`);
`parse_event` reads the union of all installed families' events, built on first use from the
registry, and maps event names written by earlier versions to today's.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, TypeAdapter

from proactive_tui.llm.trace import CallTrace

Seat = Literal["agent", "user", "judge"]


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class UsageInfo(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None


class SeatInfo(BaseModel):
    kind: Literal["llm", "human", "scripted"]
    label: str
    """The model string for a model, "person" for a human, the script name for a scripted seat."""


class EventBase(BaseModel):
    """Every event: `seq` and `ts` are stamped by the session when it emits the event."""

    seq: int = 0
    ts: str = ""


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
    rerun_of: dict[str, Any] | None = None
    """For a re-run against a new agent (`core.rerun`): the original session, whether the user's
    turns were frozen or simulated, and how many recorded ones were given."""
    forked_from: dict[str, Any] | None = None
    """For a branch: where it forks from (`core.fork.ForkedFrom` as a dict). Its events up to the
    fork point are the parent's (stitched in by the store, not copied)."""


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


class ModelCalled(EventBase):
    """One model call of the session as it happened: what the model was sent and what came back
    (`llm.trace`), and what it was for. Emitted when the call finishes, before the message or
    verdict it produced; what the inspector opens behind any message, verdict or proposal."""

    type: Literal["model_called"] = "model_called"
    seat: str
    purpose: str
    turn: int | None = None
    message_id: str | None = None
    """The dialogue message this call produced, when it produced one."""
    call: CallTrace


class ErrorRaised(EventBase):
    type: Literal["error"] = "error"
    seat: Seat | None = None
    """The seat whose call failed; None when the protocol does not know (an error that ended the
    session, caught where no seat is in view)."""
    message: str
    fatal: bool = False
    purpose: str = ""
    """What the failed call was for, as the protocol names it ("plan score", "guidance score",
    "event verdict", "reply reading", "agent reply"...); empty in logs written before it was kept."""
    judgement: bool | None = None
    """True when the failed call was a judgement (a score, a verdict, a reading of a reply), False
    when it was a dialogue seat's own reply; None when not said (old logs, fatal errors). Why not
    read it off `seat`: ProactiveBench's judge is its `user` seat."""


class SessionEnded(EventBase):
    type: Literal["session_ended"] = "session_ended"
    reason: str
    """Why it ended: target_reached, max_turns, user_stopped, cancelled, error, completed, or a
    family's own reason (task_completed, derailed, ...)."""
    detail: str = ""


COMMON_EVENTS = (
    SessionStarted, PhaseChanged, MessageStarted, MessageDelta, MessageDone, MessageDiscarded, AwaitingHuman,
    Retrying, UsageRecorded, ModelCalled, ErrorRaised, SessionEnded,
)

_adapter: TypeAdapter[Any] | None = None
_legacy: dict[str, str] = {}


def reset_adapter() -> None:
    global _adapter
    _adapter = None


def event_adapter() -> TypeAdapter[Any]:
    """The discriminated union of the common events and every installed family's."""
    global _adapter
    if _adapter is None:
        from proactive_tui.core import registry

        classes: list[type] = list(COMMON_EVENTS)
        _legacy.clear()
        for family in registry.families().values():
            classes.extend(family.record.events)
            _legacy.update(family.record.legacy_types)
        _adapter = TypeAdapter(Annotated[Union[tuple(classes)], Field(discriminator="type")])  # type: ignore[arg-type]  # a Union built at run time
    return _adapter


def parse_event(data: str | bytes | dict[str, Any]) -> Any:
    """One event from its JSON (or dict); event names of earlier versions are read as today's."""
    import json

    adapter = event_adapter()
    obj: Any = json.loads(data) if isinstance(data, (str, bytes)) else data
    kind = obj.get("type") if isinstance(obj, dict) else None
    if kind in _legacy:
        obj = {**obj, "type": _legacy[kind]}
    return adapter.validate_python(obj)
