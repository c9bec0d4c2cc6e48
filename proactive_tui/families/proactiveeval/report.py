"""ProactiveEval's report sections: the environment, the plan with its score, the dialogue with
each turn's check, and the guidance scores, for every readable view of a session.

The guidance headline is the judge's one overall score (the paper's guidance score); the five
dimensions follow it as diagnostics and are never averaged into it. The scores say what the
dialogue was judged against (the reference, or the agent's own plan), since with `--own-plan` the
sub-target numbers and the coverage count refer to the plan's steps.
"""

from __future__ import annotations

from proactive_tui.core.family import ReportPart

from typing import TYPE_CHECKING, Any

from proactive_tui.core.report import Line, ReportSection, Speech, Table
from proactive_tui.core.run_record import Score
from proactive_tui.core.writers import PERSON, speaker

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord

DIMENSIONS = ("effectiveness", "personalization", "tone", "engagement", "naturalness")


def env_item(record: RunRecord) -> dict[str, Any]:
    item = (record.environment or {}).get("item")
    return item if isinstance(item, dict) else {}


def judged_against(record: RunRecord) -> str:
    """What the judges compared the dialogue with: the recorded `judged_against` of the final
    score, else of the last turn check; a record with neither says what the session would use."""
    section = record.section
    judged = [section.guidance] if section.guidance is not None else []
    judged += list(reversed(section.turn_checks)) + list(reversed(section.live_scores))
    if judged:
        against: str = judged[0].judged_against
        return against
    own = (record.settings or {}).get("guide_with") == "own_plan" and section.planning.target is not None
    return "own_plan" if own else "reference"


def judged_plan(record: RunRecord) -> tuple[str, str, list[str]]:
    """(judged_against, target, sub-targets) the dialogue was judged against."""
    against = judged_against(record)
    p = record.section.planning
    if against == "own_plan" and p.target is not None:
        return against, p.target, list(p.sub_targets)
    item = env_item(record)
    return "reference", str(item.get("target") or ""), list(item.get("sub_target") or [])


AGAINST_TEXT = {"reference": "the reference target", "own_plan": "the agent's own plan"}


def _check_text(check: Any) -> str:
    reached = "-" if check.target_reached is None else ("yes" if check.target_reached else "no")
    covered = ", ".join(map(str, check.covered_sub_targets)) or "none"
    probes = f"; probes: {', '.join(check.probes)}" if check.probes else ""
    judge = f" ({check.judge_model})" if check.judge_model else ""
    return f"check after turn {check.turn}{judge}: target reached {reached}; sub-targets covered {covered}{probes}"


def ordered_messages(record: RunRecord) -> list[Any]:
    """The agent speaks first in every turn."""
    order = {"agent": 0, "user": 1}
    return sorted(record.messages, key=lambda m: (m.turn, order.get(m.role, 2)))


def report(record: RunRecord) -> list[ReportSection]:
    section = record.section
    out: list[ReportSection] = []
    item = env_item(record)
    env = item.get("environment") if isinstance(item.get("environment"), dict) else None
    if env:
        blocks: list[Any] = [Line(label="User information.", text=str(env.get("user_information", ""))),
                             Line(label="Trigger.", text=str(env.get("trigger_factor", "")))]
        if item.get("target"):
            blocks.append(Line(label="Reference target.", text=str(item["target"])))
            blocks += [Line(text=f"{i}. {s}", indent=1) for i, s in enumerate(item.get("sub_target") or [], 1)]
        out.append(ReportSection(title="Environment", blocks=blocks, id="proactiveeval.environment"))
    p = section.planning
    if p.target is not None:
        blocks = [Line(label="Target.", text=p.target)]
        blocks += [Line(text=f"{i}. {s}", indent=1) for i, s in enumerate(p.sub_targets, 1)]
        if p.reused_from:
            blocks.append(Line(label="Reused:", text=f"the plan of session {p.reused_from} (one plan per environment, "
                                                     "agent and repeat in a batch)", style="dim"))
        if p.score is not None:
            reused = f" (reused from session {p.score_reused_from})" if p.score_reused_from else ""
            blocks.append(Line(label=f"Plan score {p.score}/10 by {p.judge_model or '-'}{reused}:", text=p.reasoning or "",
                               style="judge"))
        out.append(ReportSection(title=f"Plan ({p.model or '-'})", blocks=blocks, id="proactiveeval.plan"))
    checks = {c.turn: c for c in section.turn_checks}
    blocks = []
    turn = None
    for m in ordered_messages(record):
        if m.turn != turn and turn in checks:
            blocks.append(Line(text=_check_text(checks[turn]), style="judge", indent=1))
        turn = m.turn
        who = speaker(m.model, played=m.role in record.human_seats, you=PERSON)
        blocks.append(Speech(speaker=m.role, who=who, turn=m.turn, text=m.content, partial=m.partial))
    if turn in checks:
        blocks.append(Line(text=_check_text(checks[turn]), style="judge", indent=1))
    if not record.messages:
        blocks.append(Line(text="(no messages)", style="dim"))
    out.append(ReportSection(title="Dialogue", blocks=blocks, id="proactiveeval.dialogue"))
    out.append(_scores_section(record))
    return out


def _scores_section(record: RunRecord) -> ReportSection:
    section = record.section
    rows: list[list[str]] = []
    p, g = section.planning, section.guidance
    against, target, steps = judged_plan(record)
    if g is not None:
        rows.append(["Guidance (overall)", f"{g.overall}/10", g.judge_model])
    if p.score is not None:
        rows.append(["Plan", f"{p.score}/10", p.judge_model or "-"])
    if section.turn_checks:
        covered = len(section.turn_checks[-1].cumulative_sub_targets)
        judged = [c for c in section.turn_checks if c.target_reached is not None]
        label = "Sub-targets covered" + (" (own plan)" if against == "own_plan" else "")
        rows.append([label, f"{covered}/{len(steps)}", judged[-1].judge_model if judged else "-"])
    if g is not None:
        rows += [[f"{d.capitalize()} (diagnostic)", f"{getattr(g, d)}/10", g.judge_model] for d in DIMENSIONS]
    if not rows:
        return ReportSection(title="Scores", blocks=[Line(text="Not scored.", style="dim")], summary=True,
                             id="proactiveeval.scores")
    blocks: list[Any] = [Table(columns=["measure", "score", "by"], rows=rows, align=["left", "right", "left"])]
    if (record.settings or {}).get("without_target"):
        blocks.insert(0, Line(label="Protocol:", text="the paper's 'without target' ablation: the agent guided with no "
                                                     "target or steps", style="warn"))
    if g is not None or section.turn_checks:
        blocks.append(Line(label="Judged against:", text=f"{AGAINST_TEXT[against]}: {target}", style="dim"))
    if g is not None:
        blocks.append(Line(label=f"Judged by {g.judge_model}:", text=g.reasoning, style="judge"))
    if section.live_scores:
        blocks.append(Line(text="Live overall scores: " + ", ".join(f"turn {s.turn}: {s.overall}" for s in section.live_scores),
                           style="dim"))
    return ReportSection(title="Scores", blocks=blocks, summary=True, id="proactiveeval.scores")


def scores(record: RunRecord) -> list[Score]:
    """The guidance overall (the headline, as the judge gave it), the plan score, then the five
    dimensions as diagnostics (not headlines)."""
    section = record.section
    out: list[Score] = []
    p, g = section.planning, section.guidance
    judge = record.seats.get("judge")
    judge_kind = judge.kind if judge is not None else "llm"
    if g is not None:
        out.append(Score(name="overall", label="Guidance (overall)", value=g.overall, display=f"{g.overall}/10",
                         by=g.judge_model, by_kind=judge_kind))
    if p.score is not None:
        out.append(Score(name="plan", label="Plan", value=p.score, display=f"{p.score}/10", by=p.judge_model or "",
                         by_kind=judge_kind))
    if g is not None:
        out += [Score(name=d, label=f"{d.capitalize()} (diagnostic)", value=getattr(g, d), display=f"{getattr(g, d)}/10",
                      by=g.judge_model, by_kind=judge_kind, headline=False) for d in DIMENSIONS]
    return out


class ProactiveEvalReport(ReportPart):
    def sections(self, record: RunRecord) -> list[ReportSection]:
        return report(record)


REPORT = ProactiveEvalReport()
