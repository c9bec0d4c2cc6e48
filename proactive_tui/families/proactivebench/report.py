"""ProactiveBench's report sections: every event of the trace in order with the agent's reply,
each verdict and its outcome, then the confusion matrix and the six metrics.

A metric whose denominator is zero shows as n/a (undefined), never as 0%.
"""

from __future__ import annotations

from typing import Any

from proactive_tui.core.report import Line, ReportSection, Speech, Table, pct
from proactive_tui.core.run_record import Score
from proactive_tui.families.proactivebench.metrics import METRIC_LABELS
from proactive_tui.families.proactivebench.prompts import format_time

VERDICT_STYLE = {"accepted": "good", "rejected": "bad", "skipped": "warn"}


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
        who = "person" if v.by_kind == "human" else v.by
        blocks.append(Line(label=f"user ({who}){on}: {v.judgement}", text=v.thought, style=VERDICT_STYLE.get(v.judgement, ""),
                           indent=1))
    return blocks


def report(record: Any) -> list[ReportSection]:
    section = record.section
    candidates = int((record.settings or {}).get("candidates") or 1) > 1
    human_user = "user" in record.human_seats
    blocks: list[Any] = []
    for ev in section.events:
        blocks.append(Line(label=f"[event {ev.index}] {format_time(ev.time)}", text=ev.event, style="info"))
        for attempt in ev.attempts:
            blocks += _attempt_blocks(attempt, candidates, human_user)
        if ev.judgement is None:
            blocks.append(Line(text="= not judged (the session stopped here)", style="dim", indent=1))
        else:
            blocks.append(Line(text=f"= {ev.outcome or 'skipped (not counted)'}", style="judge", indent=1))
    if not section.events:
        blocks.append(Line(text="(no events were shown)", style="dim"))
    out = [ReportSection(title=f"Trace {section.trace}" if section.trace else "Trace", blocks=blocks,
                         id="proactivebench.trace")]
    cf = section.confusion
    matrix = Table(title=f"Confusion ({cf.events} events counted, {cf.skipped} skipped)",
                   columns=["proposal", "accepted", "rejected"],
                   rows=[["task", f"TP {cf.tp}", f"FP {cf.fp}"], ["null", f"TN {cf.tn}", f"FN {cf.fn}"]],
                   align=["left", "right", "right"])
    rows = [[label, pct(getattr(section.metrics, key))] for key, label in METRIC_LABELS]
    rows.append(["Tasks accepted", f"{cf.accepted_proposals}/{cf.proposals}"])
    metrics = Table(title="Metrics", columns=["measure", section.trace or "trace"], rows=rows, align=["left", "right"])
    blocks = [matrix, metrics]
    if section.splits:
        blocks.append(Line(label="Splits:", text=", ".join(section.splits), style="dim"))
    judges = sorted({v.by for ev in section.events for a in ev.attempts for v in a.verdicts if v.by})
    if judges:
        blocks.append(Line(label="Judged by:", text=", ".join(judges), style="dim"))
    out.append(ReportSection(title="Scores", blocks=blocks, summary=True, id="proactivebench.metrics"))
    return out


def scores(record: Any) -> list[Score]:
    section = record.section
    judges = sorted({v.by for ev in section.events for a in ev.attempts for v in a.verdicts if v.by})
    kinds = sorted({v.by_kind for ev in section.events for a in ev.attempts for v in a.verdicts if v.by_kind})
    by, kind = ", ".join(judges), ", ".join(kinds)
    out = [Score(name=key, label=label, value=getattr(section.metrics, key), display=pct(getattr(section.metrics, key), 1),
                 by=by, by_kind=kind, headline=key == "f1") for key, label in METRIC_LABELS]
    cf = section.confusion
    out.append(Score(name="events", label="Events counted", value=cf.events, display=str(cf.events), by=by, by_kind=kind))
    return out
