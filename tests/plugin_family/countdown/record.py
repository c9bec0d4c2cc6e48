"""Countdown's settings, its section of the run record (folded by `apply`), scores and report."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from proactive_tui.core.family import RecordPart, ReportPart
from proactive_tui.core.report import Facts, Line, ReportSection, Speech, pct
from proactive_tui.core.run_record import Score
from plugin_family.countdown.events import EVENTS, LEGACY_TYPES, CountdownFinished, NumberChecked


class CountdownSettings(BaseModel):
    max_turns: int | None = Field(default=None, ge=1, le=50)
    """Agent turns allowed; None counts all the way (start + 1 numbers)."""


class Check(BaseModel):
    turn: int
    said: int | None
    expected: int
    correct: bool


class Outcome(BaseModel):
    reached_zero: bool
    correct: int
    turns: int


class CountdownSection(BaseModel):
    start: int = 0
    goal: str = ""
    checks: list[Check] = Field(default_factory=list)
    outcome: Outcome | None = None


def new_section(record: Any) -> CountdownSection:
    task = (record.environment or {}).get("countdown") or {}
    return CountdownSection(start=int(task.get("start", 0)), goal=str(task.get("goal", "")))


def apply(record: Any, event: Any) -> None:
    section: CountdownSection = record.section
    if isinstance(event, NumberChecked):
        section.checks.append(Check(turn=event.turn, said=event.said, expected=event.expected, correct=event.correct))
    elif isinstance(event, CountdownFinished):
        section.outcome = Outcome(reached_zero=event.reached_zero, correct=event.correct, turns=event.turns)


def scores(record: Any) -> list[Score]:
    section: CountdownSection = record.section
    if not section.checks:
        return []
    ratio = sum(c.correct for c in section.checks) / len(section.checks)
    out = [Score(name="correct", label="Correct numbers", value=ratio, display=pct(ratio, 0), by="rule", by_kind="rule")]
    if section.outcome is not None:
        reached = section.outcome.reached_zero
        out.append(Score(name="reached_zero", label="Reached zero", value=1.0 if reached else 0.0,
                         display="yes" if reached else "no", by="rule", by_kind="rule"))
    return out


def report(record: Any) -> list[ReportSection]:
    section: CountdownSection = record.section
    checks = {c.turn: c for c in section.checks}
    blocks: list[Any] = []
    for m in sorted(record.messages, key=lambda m: (m.turn, m.role != "agent")):
        blocks.append(Speech(speaker=m.role, who=m.model, turn=m.turn, text=m.content, partial=m.partial))
        check = checks.get(m.turn)
        if m.role == "agent" and check is not None:
            blocks.append(Line(text=f"expected {check.expected}: {'✓' if check.correct else '✗'}",
                               style="good" if check.correct else "bad", indent=1))
    out = [
        ReportSection(title="Countdown task", id="countdown.task",
                      blocks=[Facts(rows=[("Start", str(section.start)), ("Goal", section.goal or "-")])]),
        ReportSection(title="Countdown checks", id="countdown.checks",
                      blocks=blocks or [Line(text="(no turns)", style="dim")]),
    ]
    o = section.outcome
    rows = [(s.label, s.display) for s in record.scores] or [("Scores", "none yet")]
    if o is not None:
        rows.append(("Turns", str(o.turns)))
    out.append(ReportSection(title="Countdown result", id="countdown.result", summary=True, blocks=[Facts(rows=rows)]))
    return out


class CountdownRecord(RecordPart):
    """The section is the checks, one per number said; the headline, how many were right."""

    section_model = CountdownSection
    events = EVENTS
    legacy_types = LEGACY_TYPES

    def new_section(self, record: Any) -> BaseModel:
        return new_section(record)

    def apply(self, record: Any, event: Any) -> None:
        apply(record, event)

    def scores(self, record: Any) -> list[Score]:
        return scores(record)

    def complete_turns(self, record: Any) -> int:
        return len(record.section.checks)


class CountdownReport(ReportPart):
    def sections(self, record: Any) -> list[ReportSection]:
        return report(record)


RECORD = CountdownRecord()
REPORT = CountdownReport()
