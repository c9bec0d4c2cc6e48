"""The Chronos agent's structured reply (docs/protocols.md#chronos) and how a person can type one.

Every agent turn is one JSON object of this shape. It is validated by pydantic at the boundary:
an LLM seat that writes something else is re-asked by the gateway (up to twice), a person in the
agent seat is asked again. Validation is lenient where a model's spelling varies harmlessly
(`"null"` for null, lower-case action names) and strict where the protocol needs a value
(SET_REMINDER must say what to watch for).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Literal

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

_LINE = re.compile(
    r"^\s*(?P<action>[A-Za-z][A-Za-z_ \-]*?)"
    r"(?:\s*\[\s*(?P<bracketed>[^\]]*?)\s*\]|\s*\(\s*(?P<parenthesized>[^)]*?)\s*\)"
    r"|\s*[/ ]\s*(?P<status>PENDING|IN[_ ]PROGRESS|COMPLETED|FAILED))?"
    r"\s*:\s*(?P<text>.*?)"
    r"(?:\s*(?<=[\s:])@(?P<ttype>TIME|EVENT)\b:?\s*(?P<tvalue>.*))?\s*$",
    re.IGNORECASE | re.DOTALL,
)
"""The one-line reply. The status may be written as the hint prints it (`[IN_PROGRESS]`), in
parentheses, after a slash or after a space; a bracketed or parenthesized status is taken whatever
it says, so a misspelt one is refused by name rather than read as part of the action. The
condition starts at `@EVENT`/`@TIME` after a space or right after the colon (no text)."""

_TRIGGER_WORD = re.compile(r"(?:^|\s)@(?:TIME|EVENT)\b")
_ACTION_SHAPE = re.compile(r"^[A-Z]+(?:_[A-Z]+)+$")
"""An upper-case name with underscores, the way every action is spelt: `KEEP_SILNET:` is a
misspelt action, where `Note:` is just text."""


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
    match = _LINE.match(stripped)
    if not match:
        raise ValueError("write `ACTION [STATUS]: text`, e.g. `INFO_RETRIEVAL: Let me check.` (or a JSON object)")
    action = _token(match.group("action"))
    if action not in ACTIONS:
        raise ValueError(f"unknown action {match.group('action')!r}; one of {', '.join(ACTIONS)}")
    written = next((g for g in (match.group("bracketed"), match.group("parenthesized"), match.group("status"))
                    if g is not None), None)
    prev_task = previous.task_description if previous else None
    if written is None:
        status = prev_task.status if prev_task else "PENDING"
    else:
        status = _token(written)
        if status not in STATUSES:
            raise ValueError(f"unknown status {written!r}; one of {', '.join(STATUSES)}")
    trigger = {"type": match.group("ttype").upper(), "value": match.group("tvalue")} if match.group("ttype") else {}
    return AgentReply.model_validate({
        "response_text": match.group("text").strip(),
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
    match = _LINE.match(stripped)
    if not match:
        return False
    head = match.group("action").strip()
    status = match.group("parenthesized") or match.group("status")
    return (_token(head) in ACTIONS or bool(_ACTION_SHAPE.match(head)) or match.group("bracketed") is not None
            or (status is not None and _token(status) in STATUSES))


def agent_text_parser(previous: Callable[[], AgentReply | None]) -> Callable[[str], AgentReply]:
    """`parse_agent_text` bound to the agent's latest reply (for carrying status and task over)."""
    return lambda text: parse_agent_text(text, previous())
