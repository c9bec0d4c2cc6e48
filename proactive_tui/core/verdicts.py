"""What a judge said in a session, as a person can label it: the verdict model, the value type
each verdict kind takes, and the parsing of a person's corrected value.

Part of the engine (no store, no UI): a family lists its record's verdicts (`RecordPart.verdicts`)
with these types, and `services.labels` keeps people's labels on them in the store.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel


ValueType = Literal["bool", "score", "proposal", "reading", "grade"]

ORACLE = "oracle (rules)"
"""The judge named for Chronos's rule-based checks (the oracle, not a model)."""

KIND_TYPES: dict[str, ValueType] = {
    "turn check": "bool",
    "plan score": "score",
    "dimension score": "score",
    "proposal verdict": "proposal",
    "action check": "bool",
    "status check": "bool",
    "reply reading": "reading",
    "trigger verdict": "grade",
}
"""The value type each verdict kind takes: what a person's corrected value must be."""

PROPOSAL_VALUES = ("accepted", "rejected")
READING_VALUES = ("confirm", "refuse", "shift", "reply")
"""How Chronos's judge reads a user's reply to an offer (`TurnOutcome.user_read_as`)."""
GRADE_VALUES = ("PASS", "PARTIAL", "FAIL")
"""A rubric grade (ProactBench's verdict on a trigger reply), best first. SKIPPED is no grade: a
verdict that was skipped has the value None, and a person's correction is always a grade."""


class LabelError(ValueError):
    """A label that cannot be kept: an unknown session or verdict, or a value of the wrong type."""


class Verdict(BaseModel):
    """One verdict a judge (or the Chronos oracle) gave in a session, that a person can label."""

    key: str
    """Stable within the session: "turn_check:2", "plan_score", "dimension:tone",
    "proposal:3:0:0" (trace event : attempt : candidate), "action_check:4"."""
    kind: str
    """One of `KIND_TYPES` ("turn check", "dimension score", ...)."""
    judge: str
    """The judge's model string, or `ORACLE` for a rule check."""
    value: Any = None
    """What the judge said: a bool, an int score, "accepted"/"rejected" (None: no usable verdict)."""
    label: str
    """A short description for a person ("turn 2: target reached?")."""
    detail: str = ""
    """The judge's reasoning or the text judged, when the record has it (shown literally)."""
    imported_from: str = ""
    """Where a verdict imported into the store comes from (a published study: "ProactBench human
    study"); empty for a verdict this tool's own judge gave. Said wherever the verdict is shown,
    so an imported verdict is never taken for one this tool produced."""

    @property
    def value_type(self) -> ValueType:
        return KIND_TYPES.get(self.kind, "bool")


def value_text(value: Any) -> str:
    """A verdict value as a person reads it: yes/no, a score, a word; "-" for none."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def parse_value(kind: str, value: Any, *, where: str = "") -> Any:
    """`value` (a string from a form or the command line, or already typed) as the kind's type:
    a bool for a check, an int 1-10 for a score, "accepted"/"rejected" for a proposal verdict,
    confirm/refuse/shift/reply for Chronos's reading of a reply, PASS/PARTIAL/FAIL (any case)
    for a rubric grade.
    LabelError, naming `where` and the field, when it is not one."""
    vtype = KIND_TYPES.get(kind, "bool")
    prefix = f"{where}: " if where else ""
    if vtype == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "y", "1", "reached", "correct"):
            return True
        if text in ("false", "no", "n", "0", "not reached", "wrong", "incorrect"):
            return False
        raise LabelError(f"{prefix}value {value!r} is not a yes/no for a {kind} (use yes or no)")
    if vtype == "score":
        if isinstance(value, bool):
            raise LabelError(f"{prefix}value {value!r} is not a score 1-10 for a {kind}")
        try:
            number = int(str(value).strip()) if not isinstance(value, int) else value
        except ValueError:
            raise LabelError(f"{prefix}value {value!r} is not a score 1-10 for a {kind}") from None
        if not 1 <= number <= 10:
            raise LabelError(f"{prefix}value {number} is out of range for a {kind} (1-10)")
        return number
    if vtype == "grade":
        grade = str(value).strip().upper()
        if grade not in GRADE_VALUES:
            raise LabelError(f"{prefix}value {value!r} is not one of PASS, PARTIAL, FAIL for a {kind}")
        return grade
    text = str(value).strip().lower()
    if vtype == "reading":
        if text not in READING_VALUES:
            raise LabelError(f"{prefix}value {value!r} is not one of {', '.join(READING_VALUES)} for a {kind}")
        return text
    if text not in PROPOSAL_VALUES:
        raise LabelError(f"{prefix}value {value!r} is not accepted or rejected for a {kind}")
    return text


def verdicts_of(record: Any) -> list[Verdict]:
    """The verdicts of a run record, as its family lists them (none for an unknown family)."""
    from proactive_tui.core import registry

    family = registry.find(record.family)
    return family.record.verdicts(record) if family is not None else []
