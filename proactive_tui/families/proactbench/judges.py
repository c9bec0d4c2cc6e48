"""What ProactBench's judging roles answer (pydantic, reasoning first), and the checks on it.

- `JudgeVerdict`: the offline judge's answer, and the score part of the User Agent's. Turned into
  upstream's `EvaluationResult` (status EVALUATED) by `to_result`.
- `planner_schema` / `user_agent_schema`: the Planner's and the User Agent's structured answers;
  built per call because what is valid depends on the dialogue's state (a seventh trigger point
  is refused, as upstream's validation refuses it; a pending trigger needs a score).
- `evidence_found`: whether the judge's "verbatim" quote is really in the reply it scored (the
  rubrics ask for one; a quote that is not there is said, never silently trusted).
- `parse_person_verdict`: a person's verdict typed as text ("PASS because ...").
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator

from proactive_tui.families.proactbench.env import (
    MAX_TRIGGERS, EvaluationResult, PlannerOutput, Rubric, Score, StateAudit, TacticalOrder,
)


class JudgeVerdict(BaseModel):
    rationale: str
    score: Score
    evidence: str = ""

    @field_validator("score", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    def to_result(self) -> EvaluationResult:
        return EvaluationResult(status="EVALUATED", score=self.score, rationale=self.rationale, evidence=self.evidence)


class _PlannerBase(BaseModel):
    state_audit: StateAudit = Field(default_factory=StateAudit)
    is_trigger_point: bool
    stop_conversation: bool
    evaluation_rubric: Rubric | None = None
    tactical_order: TacticalOrder

    def to_plan(self) -> PlannerOutput:
        return PlannerOutput.model_validate(self.model_dump())


def planner_schema(triggers_so_far: int) -> type[_PlannerBase]:
    """The Planner's answer for a turn, given how many trigger points exist: a trigger point needs
    its rubric, and none may be declared once `MAX_TRIGGERS` exist (upstream's cap)."""
    cap_reached = triggers_so_far >= MAX_TRIGGERS

    class PlannerReply(_PlannerBase):
        @model_validator(mode="after")
        def _consistent(self) -> "PlannerReply":
            if self.is_trigger_point and cap_reached:
                raise ValueError(f"{MAX_TRIGGERS} trigger points exist already: this turn cannot be one")
            if self.is_trigger_point and self.evaluation_rubric is None:
                raise ValueError("a trigger point needs its evaluation_rubric")
            return self

    return PlannerReply


class UserTurn(BaseModel):
    user_message: str = Field(min_length=1)

    @field_validator("user_message")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the user message is blank")
        return value


class UserTurnScoring(BaseModel):
    """The User Agent with a trigger pending: the score of the previous reply, then the message."""

    evaluation: JudgeVerdict
    user_message: str = Field(min_length=1)

    @field_validator("user_message")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the user message is blank")
        return value


def user_agent_schema(scoring: bool) -> type[UserTurn] | type[UserTurnScoring]:
    return UserTurnScoring if scoring else UserTurn


# -- the evidence check ----------------------------------------------------------------------------

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"',
                         "\u201e": '"', "\u2013": "-", "\u2014": "-", "\u2011": "-", "\u00a0": " "})
_ELLIPSIS = re.compile(r"\.\.\.|…|\[\.\.\.\]|\[…\]")
_MARKDOWN = re.compile(r"[*_`#>]")


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = _MARKDOWN.sub("", text)
    return " ".join(text.split()).casefold()


def evidence_found(evidence: str, reply: str) -> bool:
    """Whether `evidence` is a quote of `reply`: after evening out whitespace, case, typographic
    quotes and dashes and markdown emphasis (a judge copies what it reads, not the bytes), each
    part between elisions ("...", "…") must occur in the reply, in order. An empty quote is not
    evidence."""
    quote = evidence.strip().strip("\"'\u201c\u201d\u2018\u2019 ")
    parts = [_normal(p).strip(" \"'") for p in _ELLIPSIS.split(quote)]
    parts = [p for p in parts if p]
    if not parts:
        return False
    haystack = _normal(reply)
    at = 0
    for part in parts:
        found = haystack.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


# -- a person's verdict ----------------------------------------------------------------------------

_PERSON_SCORES: dict[str, Score] = {"pass": "PASS", "p": "PASS", "partial": "PARTIAL", "pa": "PARTIAL",
                                    "fail": "FAIL", "f": "FAIL"}
"""A person's first word, whole or abbreviated, and the score it means."""
PERSON_HINT = "PASS, PARTIAL or FAIL, then why (e.g. `PARTIAL it warns but takes no step`)"


def parse_person_verdict(text: str) -> JudgeVerdict:
    """`PASS ...`, `partial: ...`, `F because ...` or the JSON verdict: the first word is the
    score, the rest the rationale (a person's verdict needs no quote)."""
    stripped = text.strip()
    if stripped.startswith("{"):
        from proactive_tui.llm.jsonreply import extract_json

        return JudgeVerdict.model_validate(extract_json(stripped))
    match = re.match(r"^\s*([A-Za-z]+)\W*(.*)$", stripped, re.S)
    score = _PERSON_SCORES.get(match.group(1).lower()) if match else None
    if match is None or score is None:
        raise ValueError(f"not a verdict: start with {PERSON_HINT}")
    return JudgeVerdict(rationale=match.group(2).strip(), score=score)
