"""The `proposals` section of a ProactiveBench run record, folded from the session's events.

`apply_proposal_event` is registered in run_record.FAMILY_REDUCERS; it only ever reads events, so
a replayed event log rebuilds the same section. Each trace event keeps every attempt (retries
after a rejection) with its verdicts; the confusion counts and metrics are those of the last
ProposalMetricsUpdated, i.e. of each event's final attempt.
"""

from __future__ import annotations

from proactive_tui.core.family import RecordPart
from proactive_tui.families.proactivebench import report as report_module
from proactive_tui.families.proactivebench.events import EVENTS, LEGACY_TYPES
from proactive_tui.families.proactivebench.resume import complete_events

from typing import TYPE_CHECKING, Any, Iterable

from pydantic import BaseModel, Field

from proactive_tui.families.proactivebench.events import ObservationShown, ProposalMade, ProposalMetricsUpdated, ProposalVerdict
from proactive_tui.families.proactivebench.metrics import Confusion, EventJudgement, Judgement, Metrics, Outcome, metrics

if TYPE_CHECKING:
    from proactive_tui.core.verdicts import Verdict
    from proactive_tui.core.run_record import RunRecord


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
    cells: list[Outcome] = Field(default_factory=list)
    """The confusion cells the event added (one per judged task, as upstream counts)."""
    format_error: str = ""
    """An agent format error that left the event uncounted (`ProposalMetricsUpdated.format_error`)."""

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


def new_section(record: RunRecord) -> ProactiveBenchSection:
    """The empty section of a new record: the trace's upstream file name and its splits."""
    env = record.environment or {}
    return ProactiveBenchSection(trace=str(record.env_id).rsplit("/", 1)[-1], splits=list(env.get("splits") or []))


def apply_proposal_event(record: RunRecord, event: Any) -> None:
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
            ev.cells = list(event.cells)
            ev.format_error = event.format_error
        section.confusion = event.confusion
        section.metrics = event.metrics


def trace_name(record: RunRecord) -> str:
    """The trace's file stem (`code_11`), under which upstream's splits and our export name it."""
    section = record.section
    return (getattr(section, "trace", "") or str(record.env_id).rsplit("/", 1)[-1])


class TraceRuns(BaseModel):
    """The runs of one trace among some records: the one that counts, and the others."""

    model_config = {"arbitrary_types_allowed": True}

    trace: str
    chosen: Any
    others: list[Any] = Field(default_factory=list)


def runs_by_trace(records: Iterable[Any]) -> dict[str, TraceRuns]:
    """ProactiveBench records grouped by trace; the latest (by start time, then id) counts.

    Each trace counts once wherever several are scored (upstream's metric script reads one file
    per trace name), so which run counts must be one rule: the latest of the records given. A
    caller that lets a person pick sessions passes only those."""
    groups: dict[str, list[Any]] = {}
    for rec in records:
        if getattr(rec, "family", None) != "proactivebench" or rec.section is None:
            continue
        groups.setdefault(trace_name(rec), []).append(rec)
    out = {}
    for name, recs in groups.items():
        recs = sorted(recs, key=lambda r: (r.started_at or "", r.id))
        out[name] = TraceRuns(trace=name, chosen=recs[-1], others=recs[:-1])
    return out


class SplitScore(BaseModel):
    """One split's numbers, summed over its traces' counts as upstream's script sums its files."""

    split: str
    traces: list[str]
    sessions: list[str]
    events: int
    """Events run in those traces (upstream's "Total Events")."""
    confusion: Confusion
    metrics: Metrics
    ablations: dict[str, str] = Field(default_factory=dict)
    """trace -> how its run differs from upstream's protocol (`settings.ablation_tag`); empty
    when every trace ran upstream's protocol."""


def metrics_by_split(records: Iterable[Any]) -> dict[str, SplitScore]:
    """Sum the confusion of ProactiveBench run records over each split their trace belongs to
    (the split names come from the splits.json the trace was loaded with: upstream's
    `real_average`, `real_coding`, `real_writing` for the shipped traces).

    Every trace counts once per split (the latest record wins, `runs_by_trace`), and the six
    metrics are recomputed from the summed counts, as upstream does per split.
    """
    from proactive_tui.families.proactivebench.settings import ablation_tag

    totals: dict[str, SplitScore] = {}
    for name, runs in sorted(runs_by_trace(records).items()):
        rec = runs.chosen
        tag = ablation_tag(rec.settings)
        for split in rec.section.splits:
            score = totals.setdefault(split, SplitScore(split=split, traces=[], sessions=[], events=0,
                                                        confusion=Confusion(), metrics=Metrics()))
            score.traces.append(name)
            score.sessions.append(rec.id)
            score.events += len(rec.section.events)
            score.confusion = score.confusion + rec.section.confusion
            if tag:
                score.ablations[name] = tag
    for score in totals.values():
        score.metrics = metrics(score.confusion)
    return dict(sorted(totals.items()))


def verdicts(record: RunRecord) -> list[Verdict]:
    """The reward judge's verdicts a person can label (`services.labels`): one per judged candidate
    of every attempt ("proposal:<event>:<attempt>:<candidate>"). A verdict a person gave (a
    human user seat, or an edit in a branch) is theirs already, not a judge's: not listed."""
    from proactive_tui.core.verdicts import Verdict

    section: ProactiveBenchSection = record.section
    out: list[Verdict] = []
    for ev in section.events:
        for attempt in ev.attempts:
            for n, verdict in enumerate(attempt.verdicts):
                if verdict.by_kind == "human":
                    continue
                candidate = verdict.candidate if verdict.candidate is not None else n
                task = verdict.task if verdict.task is not None else "(no proposal)"
                value = verdict.judgement if verdict.judgement in ("accepted", "rejected") else None
                out.append(Verdict(
                    key=f"proposal:{ev.index}:{attempt.attempt}:{candidate}", kind="proposal verdict",
                    judge=verdict.by or "-", value=value,
                    label=f"event {ev.index}, attempt {attempt.attempt}, candidate {candidate}: {task}",
                    detail=verdict.thought,
                ))
    return out


class ProactiveBenchRecord(RecordPart):
    """The proposals section: one entry per trace event, its attempts and their verdicts."""

    section_model = ProactiveBenchSection
    events = EVENTS
    legacy_types = LEGACY_TYPES

    new_section = staticmethod(new_section)
    apply = staticmethod(apply_proposal_event)
    scores = staticmethod(report_module.scores)
    verdicts = staticmethod(verdicts)

    def upgrade_record(self, data: dict[str, Any]) -> dict[str, Any]:
        data["section"] = data.get("proposals")
        return data

    complete_turns = staticmethod(complete_events)

    def reply_writers(self, record: RunRecord) -> list[tuple[str, str]]:
        """The agent's proposals and the user-judge's verdicts (a ProactiveBench record has no messages)."""
        return [(seat, writer) for ev in sorted(record.section.events, key=lambda e: e.index) for a in ev.attempts
                for seat, writer in [("agent", a.model), *(("user", v.by) for v in a.verdicts)]]

    def turn_scores(self, record: RunRecord) -> Any:
        """F1 over the events judged so far, after each judged event; the session's F1 at the end."""
        from proactive_tui.core.scores import TurnScores

        confusion = Confusion()
        running: list[float | None] = []
        for event in record.section.events:
            if event.judgement is None:  # cut off before its verdict: no metrics for it
                continue
            for cell in event.cells:
                confusion = confusion.add(cell)
            running.append(metrics(confusion).f1)
        return TurnScores(label="running F1", per_turn=running, final_label="F1", final=record.section.metrics.f1)


RECORD = ProactiveBenchRecord()
