"""What the judges return (pydantic, reasoning first) and the deterministic probes.

The probes are cheap, reproducible signals from the ProactiveEval analysis: leaked metadata in
an agent message and passive openers in the first message. They need no model call.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field


class PlanDraft(BaseModel):
    target: str = Field(min_length=1)
    sub_targets: list[str] = Field(min_length=1)


class PlanJudgement(BaseModel):
    reasoning: str
    score: int = Field(ge=1, le=10)


class TurnVerdict(BaseModel):
    reasoning: str
    target_reached: bool
    covered_steps: list[int] = Field(default_factory=list)


class GuidanceJudgement(BaseModel):
    """The guidance judge's reply. `overall` is the paper's one guidance score, given from the
    standards as a whole; it is the headline everywhere. The five dimensions are diagnostics,
    asked for after it (so the judge does not arrive at the overall by averaging them) and never
    averaged into it."""

    reasoning: str
    overall: int = Field(ge=1, le=10)
    effectiveness: int = Field(ge=1, le=10)
    personalization: int = Field(ge=1, le=10)
    tone: int = Field(ge=1, le=10)
    engagement: int = Field(ge=1, le=10)
    naturalness: int = Field(ge=1, le=10)


def parse_plan_text(text: str) -> PlanDraft:
    """A person typing a plan: first line the target, each further line a step."""
    lines = [line.strip(" -*\t") for line in text.splitlines() if line.strip(" -*\t")]
    if len(lines) < 2:
        raise ValueError("write the target on the first line and at least one step on the lines after it")
    return PlanDraft(target=lines[0], sub_targets=[re.sub(r"^\d+[.)]\s*", "", s) for s in lines[1:]])


_LEAKS = [
    ("sub-target label", re.compile(r"\bsub[-_ ]?targets?\s*\d*\s*[:#]", re.I)),
    ("target label", re.compile(r"(^|\n)\s*(main\s+)?target\s*:", re.I)),
    ("step label", re.compile(r"(^|\n)\s*step\s*\d+\s*:", re.I)),
    ("JSON keys", re.compile(r"[{,]\s*\"[A-Za-z_ ]+\"\s*:")),
    ("speaker labels", re.compile(r"(^|\n)\s*(assistant|agent|user)\s*:", re.I)),
]
_TURN_LABEL = re.compile(r"\bturn\s*\d+\s*:", re.I)
_PASSIVE_OPENERS = re.compile(
    r"^\s*(it\s+)?(sounds|seems|looks)\s+like\b|^\s*i\s+(see|noticed|notice)\s+(that\s+)?you\b|^\s*it\s+appears\b", re.I
)


def probe_message(text: str, first_message: bool) -> list[str]:
    """Names of the problems found in one agent message."""
    found = [name for name, pattern in _LEAKS if pattern.search(text)]
    if len(_TURN_LABEL.findall(text)) >= 2:
        found.append("several turns in one message")
    if first_message and _PASSIVE_OPENERS.search(text):
        found.append("passive opener")
    return found
