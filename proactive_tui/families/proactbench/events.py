"""Events of a ProactBench session: the recorded turns shown as context, each trigger point as it
opens, the Planner's plan of each online turn, and each verdict on a trigger reply.

The live dialogue text (the agent's replies; online, the user's messages) uses the common message
events; recorded text from the dialogue file is in these events, so no recorded reply is ever
taken for one the session's models wrote. Every type starts with `proactbench.`.
"""

from __future__ import annotations

from typing import Literal

from proactive_tui.core.events import EventBase
from proactive_tui.families.proactbench.env import EvaluationResult, PlannerOutput, Rubric

JudgedBy = Literal["judge", "user_agent", "person"]
"""Who gave a verdict: the offline judge (neutral mode, no persona, no style), the online User
Agent (stepping out of persona with the user's next message, as upstream), or a person."""


class RecordedTurn(EventBase):
    """Offline: a turn before a trigger, as the dialogue file recorded it (the curation model's
    reply, not the model under test's): the context every trigger reply is written in."""

    type: Literal["proactbench.recorded_turn"] = "proactbench.recorded_turn"
    turn: int
    user_message: str
    assistant_response: str
    model: str = ""
    """The model that wrote the recorded reply (the dialogue's `evaluated_model`)."""


class TriggerOpened(EventBase):
    """A trigger point begins: its rubric is fixed before the agent answers.

    Offline it carries the recorded user message of the trigger turn and the reply the curation
    model gave there (`original_response`, kept for the export and shown beside the new reply).
    Online the user message is the turn's common message, and there is no original."""

    type: Literal["proactbench.trigger_opened"] = "proactbench.trigger_opened"
    index: int
    """1-based, in the order the dialogue meets its trigger points."""
    turn: int
    rubric: Rubric
    user_message: str | None = None
    original_response: str | None = None


class Planned(EventBase):
    """Online: the Planner's structured plan of one turn (its tactical order is what the user seat,
    a model or a person, is asked to do)."""

    type: Literal["proactbench.planned"] = "proactbench.planned"
    turn: int
    plan: PlannerOutput
    model: str


class TriggerJudged(EventBase):
    """The verdict on the agent's reply at a trigger turn. `result` None: the judging call failed
    (or gave nothing usable) and the trigger counts as SKIPPED, never as a score."""

    type: Literal["proactbench.trigger_judged"] = "proactbench.trigger_judged"
    index: int
    turn: int
    response: str
    """The reply judged, as the agent wrote it."""
    result: EvaluationResult | None = None
    judge: str
    """The judge's model string, or `person`."""
    judged_by: JudgedBy = "judge"
    problem: str = ""
    """Why there is no result, in one line, when there is none."""
    evidence_in_reply: bool | None = None
    """Whether the verdict's evidence quote is really in `response` (`judges.evidence_found`):
    the rubrics ask for a verbatim quote, and a quote that is not there is said, not trusted.
    None: no result, or a person's verdict given without a quote."""


EVENT_TYPES = (RecordedTurn, TriggerOpened, Planned, TriggerJudged)
