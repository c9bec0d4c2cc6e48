"""The Chronos agent's structured reply (docs/protocols.md#chronos) and how a person can type one.

Every agent turn is one JSON object of this shape. It is validated by pydantic at the boundary:
an LLM seat that writes something else is re-asked by the gateway (up to twice), a person in the
agent seat is asked again. Validation is lenient where a model's spelling varies harmlessly
(`"null"` for null, lower-case action names) and strict where the protocol needs a value
(SET_REMINDER must say what to watch for).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from proactive_tui.llm.jsonreply import NoJSON, extract_json

Action = Literal["INFO_RETRIEVAL", "SET_REMINDER", "FOLLOW_UP", "KEEP_SILENT", "COMPLETE_TASK", "FAILED_TASK", "NO_ACTION"]
Status = Literal["PENDING", "IN_PROGRESS", "COMPLETED", "FAILED"]
ACTIONS: tuple[str, ...] = ("INFO_RETRIEVAL", "SET_REMINDER", "FOLLOW_UP", "KEEP_SILENT", "COMPLETE_TASK", "FAILED_TASK", "NO_ACTION")
STATUSES: tuple[str, ...] = ("PENDING", "IN_PROGRESS", "COMPLETED", "FAILED")


def _nullish(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in ("", "null", "none", "n/a"):
        return None
    return value


def _token(value: Any) -> Any:
    """`set reminder`, `set-reminder`, `Set_Reminder` -> `SET_REMINDER`."""
    if isinstance(value, str):
        return re.sub(r"[\s\-]+", "_", value.strip()).upper()
    return value


class TriggerCondition(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: Literal["TIME", "EVENT"] | None = None
    value: str | None = None

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> Any:
        return _token(_nullish(value))

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, value: Any) -> Any:
        return _nullish(value)


class TaskDescription(BaseModel):
    model_config = ConfigDict(extra="ignore")

    intention: str | None = None
    constraints: dict[str, Any] | None = None
    status: Status

    @field_validator("intention", mode="before")
    @classmethod
    def _intention(cls, value: Any) -> Any:
        return _nullish(value)

    @field_validator("constraints", mode="before")
    @classmethod
    def _constraints(cls, value: Any) -> Any:
        return _nullish(value)

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, value: Any) -> Any:
        return _token(value)


class AgentReply(BaseModel):
    """One agent turn: what the user reads, what the system should do, and the task as the agent tracks it."""

    model_config = ConfigDict(extra="ignore")

    response_text: str = ""
    proactive_action: Action
    trigger_condition: TriggerCondition = Field(default_factory=TriggerCondition)
    task_description: TaskDescription

    @field_validator("proactive_action", mode="before")
    @classmethod
    def _action(cls, value: Any) -> Any:
        return _token(value)

    @field_validator("trigger_condition", mode="before")
    @classmethod
    def _trigger(cls, value: Any) -> Any:
        return _nullish(value) or {}

    @field_validator("response_text", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return "" if value is None else value

    @model_validator(mode="after")
    def _reminder_needs_a_condition(self) -> "AgentReply":
        if self.proactive_action == "SET_REMINDER" and not (self.trigger_condition.value or "").strip():
            raise ValueError("SET_REMINDER needs trigger_condition.value (what the monitor should watch for)")
        return self

    @property
    def action(self) -> str:
        return self.proactive_action

    @property
    def status(self) -> str:
        return self.task_description.status


# -- a person in the agent seat ------------------------------------------------------------------

AGENT_FORM_HINT = (
    "your reply as the agent: the JSON object, or one line `ACTION [STATUS]: text [@EVENT|@TIME condition]`, "
    "e.g. `SET_REMINDER IN_PROGRESS: I'll watch for it @EVENT a 7-seat car under £14k`. "
    f"Actions: {', '.join(ACTIONS)}. Status, intention and constraints carry over from your last reply when left out."
)

class _Line(NamedTuple):
    """The one-line reply, split (`_split_line`); nothing checked yet."""

    action: str
    status: str | None
    status_form: Literal["brackets", "parentheses", "slash", "word"] | None
    text: str
    trigger_type: str | None
    trigger_value: str | None


_NAME = re.compile(r"[A-Za-z][A-Za-z_ \-]*")
_TRIGGER = re.compile(r"(?:^|(?<=\s))@(TIME|EVENT)\b:?", re.IGNORECASE)
_TRIGGER_WORD = re.compile(r"(?:^|(?<=\s))@(?:TIME|EVENT)\b")
_ACTION_SHAPE = re.compile(r"[A-Z]+(?:_[A-Z]+)+")
"""An upper-case name with underscores, the way every action is spelt: `KEEP_SILNET:` is a
misspelt action, where `Note:` is just text."""


def _split_line(text: str) -> _Line | None:
    """`ACTION [STATUS]: text @EVENT condition` split into its parts, or None when the text is not
    in that shape. The status may be written as the hint prints it (`[IN_PROGRESS]`), in
    parentheses, after a slash or after a space (then only a known status counts: `set reminder in
    progress`); in brackets or parentheses it is taken whatever it says, so a misspelt one is
    refused by name rather than read as part of the action. The condition starts at `@EVENT` or
    `@TIME` after a space or right after the colon. Split by hand, not by one regular expression:
    one that let the action, the status and the spaces between them overlap took cubic time on a
    long run of spaces, and the person's Enter waits for it."""
    head, colon, rest = text.strip().partition(":")
    if not colon:
        return None
    head = head.strip()
    status: str | None = None
    form: Any = None
    for opening, closing, kind in (("[", "]", "brackets"), ("(", ")", "parentheses")):
        if head.endswith(closing) and opening in head:
            head, _, inside = head[:-1].rpartition(opening)
            status, form = inside.strip(), kind
            break
    else:
        if "/" in head:
            head, _, status = head.rpartition("/")
            status, form = status.strip(), "slash"
        else:
            words = head.split()
            for n in (2, 1):  # `IN PROGRESS` is two words
                if len(words) > n and _token(" ".join(words[-n:])) in STATUSES:
                    head, status, form = " ".join(words[:-n]), " ".join(words[-n:]), "word"
                    break
    head = head.strip()
    if not _NAME.fullmatch(head):
        return None
    trigger = _TRIGGER.search(rest)
    said = rest[:trigger.start()] if trigger else rest
    return _Line(action=head, status=status, status_form=form, text=said.strip(),
                 trigger_type=trigger.group(1).upper() if trigger else None,
                 trigger_value=rest[trigger.end():].strip() if trigger else None)


def reply_problem(exc: Exception) -> str:
    """Why a reply could not be used, in one line: pydantic's errors as `field: message` (the first
    three), any other error's own words."""
    if isinstance(exc, ValidationError):
        return "; ".join(_one_problem(e) for e in exc.errors(include_url=False)[:3])
    return str(exc)


def _one_problem(error: Any) -> str:
    """`field: message`; a check of the whole reply (SET_REMINDER's condition) in its own words,
    without pydantic's `Value error, ` prefix."""
    ctx = error.get("ctx") or {}
    message = str(ctx["error"]) if error.get("type") == "value_error" and "error" in ctx else error.get("msg")
    where = ".".join(str(p) for p in error.get("loc", ()))
    return f"{where}: {message}" if where else str(message)


def parse_agent_text(text: str, previous: AgentReply | None = None) -> AgentReply:
    """A person's reply: a JSON object, or the compact `ACTION [STATUS]: text [@TYPE condition]` line.

    Raises ValueError with the reason in one line (`reply_problem`), which the protocol's hint and
    the agent form show as they are."""
    try:
        return _parse_agent_text(text, previous)
    except ValidationError as exc:
        raise ValueError(reply_problem(exc)) from None


def _parse_agent_text(text: str, previous: AgentReply | None) -> AgentReply:
    stripped = text.strip()
    if stripped.startswith("{") or stripped.startswith("```"):
        try:
            return AgentReply.model_validate(extract_json(stripped))
        except NoJSON as exc:
            raise ValueError(str(exc)) from None
    line = _split_line(stripped)
    if line is None:
        raise ValueError("write `ACTION [STATUS]: text`, e.g. `INFO_RETRIEVAL: Let me check.` (or a JSON object)")
    action = _token(line.action)
    if action not in ACTIONS:
        raise ValueError(f"unknown action {line.action!r}; one of {', '.join(ACTIONS)}")
    prev_task = previous.task_description if previous else None
    if line.status is None:
        status = prev_task.status if prev_task else "PENDING"
    else:
        status = _token(line.status)
        if status not in STATUSES:
            raise ValueError(f"unknown status {line.status!r}; one of {', '.join(STATUSES)}")
    trigger = {"type": line.trigger_type, "value": line.trigger_value} if line.trigger_type else {}
    return AgentReply.model_validate({
        "response_text": line.text,
        "proactive_action": action,
        "trigger_condition": trigger,
        "task_description": {
            "intention": prev_task.intention if prev_task else None,
            "constraints": prev_task.constraints if prev_task else None,
            "status": status,
        },
    })


def typed_reply(text: str) -> bool:
    """Whether a person's text is meant as a whole reply, not just what the user should read: a
    JSON object, a line that names a known action (`KEEP_SILENT [IN_PROGRESS]: ...`), or one
    written in the reply's shape (anything in square brackets or a known status before the colon,
    an action-like name such as `KEEP_SILNET:`, an `@EVENT`/`@TIME` condition). Plain text with
    a colon (`Note: it is red`, `I checked (twice): nothing`) is not. The agent form parses such text as the reply,
    so the action and status typed there are the ones recorded, whatever its selects say, and a
    line that does not parse is refused with the reason rather than sent as text with the selects'
    action."""
    stripped = text.strip()
    if stripped.startswith("{") or stripped.startswith("```") or _TRIGGER_WORD.search(stripped):
        return True
    line = _split_line(stripped)
    if line is None:
        return False
    return (_token(line.action) in ACTIONS or bool(_ACTION_SHAPE.fullmatch(line.action))
            or line.status_form == "brackets" or (line.status is not None and _token(line.status) in STATUSES))


def agent_text_parser(previous: Callable[[], AgentReply | None]) -> Callable[[str], AgentReply]:
    """`parse_agent_text` bound to the agent's latest reply (for carrying status and task over)."""
    return lambda text: parse_agent_text(text, previous())
