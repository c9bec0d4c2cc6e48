"""The `proposals` section of a ProactiveBench run record, folded from the session's events.

`apply_proposal_event` is registered in run_record.FAMILY_REDUCERS; it only ever reads events, so
a replayed event log rebuilds the same section. Each trace event keeps every attempt (retries
after a rejection) with its verdicts; the confusion counts and metrics are those of the last
ProposalMetricsUpdated, i.e. of each event's final attempt.
"""

from __future__ import annotations

from typing import Any, Iterable

from pydantic import BaseModel, Field

from proactive_tui.families.proactivebench.events import ObservationShown, ProposalMade, ProposalMetricsUpdated, ProposalVerdict
from proactive_tui.families.proactivebench.metrics import Confusion, EventJudgement, Judgement, Metrics, Outcome, metrics


class VerdictRecord(BaseModel):
    candidate: int | None = None
    task: str | None = None
    judgement: Judgement
    thought: str = ""
    by: str = ""
    by_kind: str = ""


class AttemptRecord(BaseModel):
    attempt: int = 0
    purpose: str = ""
    thoughts: str = ""
    tasks: list[str] = Field(default_factory=list)
    response: str | None = None
    model: str = ""
    raw: str = ""
    verdicts: list[VerdictRecord] = Field(default_factory=list)

    def judgement(self) -> EventJudgement:
        return EventJudgement(tasks=self.tasks, verdicts=[v.judgement for v in self.verdicts])


class TraceEventRecord(BaseModel):
    index: int
    time: str
    event: str
    attempts: list[AttemptRecord] = Field(default_factory=list)
    outcome: Outcome | None = None
    judgement: Judgement | None = None
    """None until the event's metrics arrived (an event cut off by a stop has none)."""

    @property
    def final(self) -> AttemptRecord | None:
        return self.attempts[-1] if self.attempts else None


class ProactiveBenchSection(BaseModel):
    trace: str = ""
    """The trace's file stem (`code_11`): upstream's split files name traces by it."""
    splits: list[str] = Field(default_factory=list)
    events: list[TraceEventRecord] = Field(default_factory=list)
    confusion: Confusion = Field(default_factory=Confusion)
    metrics: Metrics = Field(default_factory=Metrics)


def _event(section: ProactiveBenchSection, index: int) -> TraceEventRecord | None:
    for ev in reversed(section.events):
        if ev.index == index:
            return ev
    return None


def new_section(record: Any) -> ProactiveBenchSection:
    """The empty section of a new record: the trace's upstream file name and its splits."""
    env = record.environment or {}
    return ProactiveBenchSection(trace=str(record.env_id).rsplit("/", 1)[-1], splits=list(env.get("splits") or []))


def apply_proposal_event(record: Any, event: Any) -> None:
    """Fold one ProactiveBench event into `record.section`."""
    section: ProactiveBenchSection = record.section
    if isinstance(event, ObservationShown):
        section.events.append(TraceEventRecord(index=event.index, time=event.time, event=event.event))
    elif isinstance(event, ProposalMade):
        ev = _event(section, event.index)
        if ev is not None:
            ev.attempts.append(AttemptRecord(
                attempt=event.attempt, purpose=event.purpose, thoughts=event.thoughts, tasks=list(event.tasks),
                response=event.response, model=event.model, raw=event.raw,
            ))
    elif isinstance(event, ProposalVerdict):
        ev = _event(section, event.index)
        attempt = next((a for a in reversed(ev.attempts) if a.attempt == event.attempt), None) if ev else None
        if attempt is not None:
            attempt.verdicts.append(VerdictRecord(
                candidate=event.candidate, task=event.task, judgement=event.judgement, thought=event.thought,
                by=event.by, by_kind=event.by_kind,
            ))
    elif isinstance(event, ProposalMetricsUpdated):
        ev = _event(section, event.index)
        if ev is not None:
            ev.outcome = event.outcome
            ev.judgement = event.judgement
        section.confusion = event.confusion
        section.metrics = event.metrics


def metrics_by_split(records: Iterable[Any]) -> dict[str, tuple[Confusion, Metrics]]:
    """Sum the confusion of ProactiveBench run records over each split their trace belongs to.

    Every trace counts once per split (the latest record wins when a trace was run twice), and the
    six metrics are recomputed from the summed counts, as upstream does per split.
    """
    per_trace: dict[str, tuple[list[str], Confusion]] = {}
    for rec in records:
        section = rec.section if getattr(rec, "family", None) == "proactivebench" else None
        if section is None:
            continue
        per_trace[section.trace or rec.env_id] = (section.splits, section.confusion)
    totals: dict[str, Confusion] = {}
    for splits, confusion in per_trace.values():
        for name in splits:
            totals[name] = totals.get(name, Confusion()) + confusion
    return {name: (c, metrics(c)) for name, c in sorted(totals.items())}
