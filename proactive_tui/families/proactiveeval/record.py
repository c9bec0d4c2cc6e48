"""The ProactiveEval section of a run record: the plan and its score, the per-turn checks, the
live and final guidance scores, folded from the session's events (a pure reducer)."""

from __future__ import annotations

from proactive_tui.core.family import RecordPart, RerunPart, ResumePart
from proactive_tui.families.proactiveeval import report as report_module
from proactive_tui.families.proactiveeval.events import EVENTS, LEGACY_TYPES

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from proactive_tui.families.proactiveeval.events import GuidanceScore, GuidanceScored, PlanProposed, PlanScored, TurnCheck, TurnChecked

if TYPE_CHECKING:
    from proactive_tui.core.verdicts import Verdict
    from proactive_tui.core.run_record import RunRecord
    from proactive_tui.core.spec import SessionSpec


class PlanningRecord(BaseModel):
    target: str | None = None
    sub_targets: list[str] = Field(default_factory=list)
    model: str | None = None
    score: int | None = None
    reasoning: str | None = None
    judge_model: str | None = None
    reused_from: str | None = None
    """The batch session that made this plan, when this one reused it (`shared_plan`)."""
    score_reused_from: str | None = None
    """The batch session whose judge scored this plan, when reused: not a judgement of this session."""


class ProactiveEvalSection(BaseModel):
    planning: PlanningRecord = Field(default_factory=PlanningRecord)
    turn_checks: list[TurnCheck] = Field(default_factory=list)
    guidance: GuidanceScore | None = None
    live_scores: list[GuidanceScore] = Field(default_factory=list)


def apply_event(record: RunRecord, event: Any) -> None:
    section: ProactiveEvalSection = record.section
    if isinstance(event, PlanProposed):
        section.planning.target = event.plan.target
        section.planning.sub_targets = event.plan.sub_targets
        section.planning.model = event.plan.model
        section.planning.reused_from = event.reused_from
    elif isinstance(event, PlanScored):
        section.planning.score = event.score
        section.planning.reasoning = event.reasoning
        section.planning.judge_model = event.judge_model
        section.planning.score_reused_from = event.reused_from
    elif isinstance(event, TurnChecked):
        section.turn_checks.append(event.check)
    elif isinstance(event, GuidanceScored):
        if event.score.live:
            section.live_scores.append(event.score)
        else:
            section.guidance = event.score


def upgrade_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Version-1 records kept these four fields at the top level."""
    data["section"] = {key: data[key] for key in ("planning", "turn_checks", "guidance", "live_scores") if key in data}
    return data


def complete_turns(record: RunRecord) -> int:
    """Turns 1..k where both the agent's and the user's message finished (the ones a resume keeps)."""
    done = {(m.role, m.turn) for m in record.messages if not m.partial}
    k = 0
    while ("agent", k + 1) in done and ("user", k + 1) in done:
        k += 1
    return k


DIMENSIONS = ("overall", "effectiveness", "personalization", "tone", "engagement", "naturalness")


def verdicts(record: RunRecord) -> list[Verdict]:
    """The judge's verdicts a person can label (`services.labels`): the plan's score, each turn's
    check (target reached?), and the final guidance score's dimensions."""
    from proactive_tui.core.verdicts import Verdict

    section: ProactiveEvalSection = record.section
    out: list[Verdict] = []
    planning = section.planning
    if planning.score is not None and planning.score_reused_from is None:  # a reused score is labelled where it was judged
        out.append(Verdict(key="plan_score", kind="plan score", judge=planning.judge_model or "-", value=planning.score,
                           label="plan score (1-10)", detail=planning.reasoning or ""))
    for check in section.turn_checks:
        out.append(Verdict(key=f"turn_check:{check.turn}", kind="turn check", judge=check.judge_model or "-",
                           value=check.target_reached, label=f"turn {check.turn}: target reached?", detail=check.reason))
    guidance = section.guidance
    if guidance is not None:
        for dim in DIMENSIONS:
            out.append(Verdict(key=f"dimension:{dim}", kind="dimension score", judge=guidance.judge_model or "-",
                               value=getattr(guidance, dim), label=f"guidance {dim} (1-10)", detail=guidance.reasoning))
    return out


class ProactiveEvalRecord(RecordPart):
    """The plan, its score, the turn checks and the guidance score; a turn is a turn."""

    section_model = ProactiveEvalSection
    events = EVENTS
    legacy_types = LEGACY_TYPES

    apply = staticmethod(apply_event)
    scores = staticmethod(report_module.scores)
    verdicts = staticmethod(verdicts)
    upgrade_record = staticmethod(upgrade_v1)
    complete_turns = staticmethod(complete_turns)

    def turn_scores(self, record: RunRecord) -> Any:
        """The live guidance overall per turn (with `--live`), and the final overall."""
        from proactive_tui.core.scores import TurnScores

        section = record.section
        final = section.guidance.overall if section.guidance is not None else None
        return TurnScores(label="guidance overall (live)", per_turn=[float(s.overall) for s in section.live_scores],
                          final_label="overall", final=None if final is None else float(final))


class ProactiveEvalResume(ResumePart):
    def session(self, spec: SessionSpec, env: Any, seats: dict[str, Any], record: RunRecord, session_id: str | None = None) -> Any:
        """The session with `record`'s plan and complete turns restored, then live."""
        from proactive_tui.families.proactiveeval.protocol import build_proactiveeval_session

        return build_proactiveeval_session(spec, env, seats, session_id=session_id, resume_from=record)


class ProactiveEvalRerun(RerunPart):
    def user_turns(self, record: RunRecord) -> list[Any]:
        return sorted((m for m in record.messages if m.role == "user" and not m.partial), key=lambda m: m.turn)


RECORD = ProactiveEvalRecord()
RESUME = ProactiveEvalResume()
RERUN = ProactiveEvalRerun()
