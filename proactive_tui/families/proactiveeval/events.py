"""Events of a ProactiveEval session: the plan, its score, the per-turn checks and guidance scores.

Dialogue text uses the common message events; these carry what the judges decided. Every type
starts with `proactiveeval.` (the family's one name); `LEGACY_TYPES` maps the names earlier
versions wrote, so old session stores still read.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from proactive_tui.core.events import EventBase


JudgedAgainst = Literal["reference", "own_plan"]
"""Which target and sub-targets a judge compared the dialogue with: the environment's reference,
or the agent's own plan when it guided with it (the paper judges the dialogue against the target
it used). Records written before this field existed were all judged against the reference."""


class TurnCheck(BaseModel):
    turn: int
    target_reached: bool | None
    reason: str
    covered_sub_targets: list[int] = Field(default_factory=list)
    """1-based indices of the judged sub-targets (see `judged_against`) this turn's agent message covers."""
    target_density: int = 0
    cumulative_sub_targets: list[int] = Field(default_factory=list)
    probes: list[str] = Field(default_factory=list)
    judge_model: str = ""
    judged_against: JudgedAgainst = "reference"


class GuidanceScore(BaseModel):
    """`overall` is the headline (the paper's one guidance score); the five dimensions are the
    judge's diagnostics, shown beside it and never averaged into it."""

    reasoning: str
    overall: int
    effectiveness: int
    personalization: int
    tone: int
    engagement: int
    naturalness: int
    judge_model: str
    live: bool = False
    turn: int = 0
    judged_against: JudgedAgainst = "reference"


class Plan(BaseModel):
    target: str
    sub_targets: list[str]
    model: str
    score: int | None = None
    reasoning: str | None = None
    judge_model: str | None = None


class PlanProposed(EventBase):
    type: Literal["proactiveeval.plan_proposed"] = "proactiveeval.plan_proposed"
    plan: Plan
    reused_from: str | None = None
    """In a batch, the session whose plan this is, when this session reused it (one plan per
    environment, agent and repeat, as the paper: `shared_plan`); None when this session planned."""


class PlanScored(EventBase):
    type: Literal["proactiveeval.plan_scored"] = "proactiveeval.plan_scored"
    score: int
    reasoning: str
    judge_model: str
    reused_from: str | None = None
    """The session whose judge call gave this score, when reused; None when judged here."""


class TurnChecked(EventBase):
    type: Literal["proactiveeval.turn_checked"] = "proactiveeval.turn_checked"
    check: TurnCheck


class GuidanceScored(EventBase):
    type: Literal["proactiveeval.guidance_scored"] = "proactiveeval.guidance_scored"
    score: GuidanceScore



EVENTS = (PlanProposed, PlanScored, TurnChecked, GuidanceScored)
LEGACY_TYPES = {cls.model_fields["type"].default.split(".", 1)[1]: cls.model_fields["type"].default for cls in EVENTS}
