"""ProactiveBench's report sections: every event of the trace in order with the agent's reply,
each verdict and its outcome, then the confusion matrix and the six metrics.

The numbers are upstream's (`calculate_scores`): one cell per judged task, and a zero
denominator gives 0, said as such ("0.00% (no proposals)") so it never reads as a measured 0.
A run that differs from upstream's evaluation (verdict feedback on, three candidates, retries)
says so above its numbers and in its headline score, since those numbers do not compare with
upstream's.
"""

from __future__ import annotations

from proactive_tui.core.family import ReportPart

from typing import TYPE_CHECKING, Any

from proactive_tui.core.report import Line, ReportSection, Speech, Style, Table
from proactive_tui.core.run_record import Score
from proactive_tui.core.writers import PERSON, speaker
from proactive_tui.families.proactivebench.metrics import METRIC_LABELS, show
from proactive_tui.families.proactivebench.prompts import format_time
from proactive_tui.families.proactivebench.settings import ablation_label, ablation_tag

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord

VERDICT_STYLE: dict[str, Style] = {"accepted": "good", "rejected": "bad", "skipped": "warn"}


def _attempt_blocks(attempt: Any, candidates: bool, human_user: bool) -> list[Any]:
    retry = f" (retry {attempt.attempt})" if attempt.attempt else ""
    if not attempt.tasks:
        text = "stays quiet (null)"
    elif len(attempt.tasks) == 1:
        text = f"proposes: {attempt.tasks[0]}"
    else:
        text = "proposes:\n" + "\n".join(f"{i}. {task}" for i, task in enumerate(attempt.tasks, 1))
    blocks: list[Any] = [Speech(speaker="agent", who=attempt.model + retry, text=text)]
    for label, value in (("purpose", attempt.purpose), ("thoughts", attempt.thoughts), ("response", attempt.response)):
        if value:
            blocks.append(Line(label=f"{label}:", text=value, style="dim", indent=1))
    for v in attempt.verdicts:
        on = f" on {v.candidate + 1}" if candidates and v.candidate is not None else ""
        who = speaker(v.by, played=v.by_kind == "human", you=PERSON)
        blocks.append(Line(label=f"user ({who}){on}: {v.judgement}", text=v.thought, style=VERDICT_STYLE.get(v.judgement, ""),
                           indent=1))
    return blocks


def _outcome_text(ev: Any) -> str:
    format_error: str = getattr(ev, "format_error", "")
    if ev.outcome is None and format_error:
        return f"skipped (not counted): {ev.format_error}"
    if ev.outcome is None:
        return "skipped (not counted)"
    if len(ev.cells) > 1:  # three candidates: each judged task is a cell of its own
        return f"{', '.join(ev.cells)} ({ev.judgement})"
    outcome: str = ev.outcome
    return outcome


def report(record: RunRecord) -> list[ReportSection]:
    section = record.section
    settings = record.settings or {}
    candidates = int(settings.get("candidates") or 1) > 1
    human_user = "user" in record.human_seats
    blocks: list[Any] = []
    for ev in section.events:
        blocks.append(Line(label=f"[event {ev.index}] {format_time(ev.time)}", text=ev.event, style="info"))
        for attempt in ev.attempts:
            blocks += _attempt_blocks(attempt, candidates, human_user)
        if ev.judgement is None:
            blocks.append(Line(text="= not judged (the session stopped here)", style="dim", indent=1))
        else:
            blocks.append(Line(text=f"= {_outcome_text(ev)}", style="judge", indent=1))
    if not section.events:
        blocks.append(Line(text="(no events were shown)", style="dim"))
    out = [ReportSection(title=f"Trace {section.trace}" if section.trace else "Trace", blocks=blocks,
                         id="proactivebench.trace")]
    cf = section.confusion
    counted = f"{cf.judged} tasks judged" if candidates else f"{cf.judged} events counted"
    matrix = Table(title=f"Confusion ({counted}, {cf.skipped} {'event' if cf.skipped == 1 else 'events'} skipped)",
                   columns=["proposal", "accepted", "rejected"],
                   rows=[["task", f"TP {cf.tp}", f"FP {cf.fp}"], ["null", f"TN {cf.tn}", f"FN {cf.fn}"]],
                   align=["left", "right", "right"])
    rows = [[label, show(section.metrics, key)] for key, label in METRIC_LABELS]
    rows.append(["Tasks accepted", f"{cf.accepted_proposals}/{cf.proposals}"])
    metrics = Table(title="Metrics", columns=["measure", section.trace or "trace"], rows=rows, align=["left", "right"])
    label = ablation_label(settings)
    blocks = [Line(label="Protocol:", text=label or "upstream's evaluation (no verdict feedback, one candidate)",
                   style="warn" if label else "dim")]
    blocks += [matrix, metrics]
    models = record.models or {}
    if (models.get("agent") or {}).get("temperature") is not None and "agent" not in record.human_seats:
        blocks.append(Line(label="Agent temperature:", text=str(models["agent"]["temperature"]), style="dim"))
    if section.splits:
        blocks.append(Line(label="Splits:", text=", ".join(section.splits), style="dim"))
    judges = sorted({v.by for ev in section.events for a in ev.attempts for v in a.verdicts if v.by})
    if judges:
        blocks.append(Line(label="Judged by:", text=", ".join(judges), style="dim"))
    out.append(ReportSection(title="Scores", blocks=blocks, summary=True, id="proactivebench.metrics"))
    return out


def scores(record: RunRecord) -> list[Score]:
    section = record.section
    judges = sorted({v.by for ev in section.events for a in ev.attempts for v in a.verdicts if v.by})
    kinds = sorted({v.by_kind for ev in section.events for a in ev.attempts for v in a.verdicts if v.by_kind})
    by, kind = ", ".join(judges), ", ".join(kinds)
    tag = ablation_tag(record.settings)
    out = []
    for key, label in METRIC_LABELS:
        display = show(section.metrics, key, 1)
        if tag and key == "f1":  # the headline carries the protocol: it is what history rows show
            display += f" [{tag}]"
        out.append(Score(name=key, label=label, value=getattr(section.metrics, key), display=display,
                         by=by, by_kind=kind, headline=key == "f1"))
    cf = section.confusion
    many = int((record.settings or {}).get("candidates") or 1) > 1
    out.append(Score(name="events", label="Tasks judged" if many else "Events counted", value=cf.judged,
                     display=str(cf.judged), by=by, by_kind=kind))
    return out


class ProactiveBenchReport(ReportPart):
    def sections(self, record: RunRecord) -> list[ReportSection]:
        return report(record)


REPORT = ProactiveBenchReport()
