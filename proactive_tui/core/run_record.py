"""The run record: one JSON document per session, folded from its events by a pure reducer.

`RunRecordBuilder.apply(event)` is the reducer the UI, the store's replay, export and the
headless command all share, so every view of a session agrees with its event log.

Format version 2 (this one) holds what every family has (messages, seats, settings, usage,
termination), generic `scores` (each naming who gave it), and the family's own `section`
(a pydantic model the family defines). Version 1 (proactive-tui 0.1) kept ProactiveEval's fields
at the top level and the other families' sections under `proposals` / `timeline`; `RunRecord`
still reads it: `upgrade_v1` moves those fields into `section` and recomputes the scores.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Literal

from pydantic import BaseModel, Field, model_serializer, model_validator

from proactive_tui.core.events import (
    ErrorRaised, MessageDiscarded, MessageDone, MessageRecord, ModelCalled, Retrying, SeatInfo, SessionEnded, SessionStarted,
    UsageInfo, UsageRecorded,
)

FORMAT_VERSION = 2


class SeatUsage(BaseModel):
    """One seat's share of the tokens, counted as ProactBench's upstream counts its `token_usage`
    blocks: a call adds to `calls` only when it reported tokens (a person's turn, or a provider
    that reports no usage, is not a call here)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0


class Totals(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None
    wall_time_s: float | None = None
    retries: int = 0
    by_seat: dict[str, SeatUsage] = Field(default_factory=dict, exclude_if=lambda value: not value)
    """Per seat (`agent`, `user`, `judge`): what the seat's calls that reported tokens used. Why
    kept: a benchmark that reports usage per role (ProactBench's planner / user agent / assistant /
    judge) can be exported from the record. Records written before it have none; left out of the
    JSON when empty, so a record with no reported usage reads as before."""


class Termination(BaseModel):
    reason: str
    detail: str = ""


class Score(BaseModel):
    """One headline number of a session, the same shape for every family (history rows, batch
    tables). `by_kind` says whether a model, a person, a rule (the Chronos oracle, the confusion
    counts) or nobody produced it."""

    name: str
    label: str
    value: float | None
    """None when undefined (a zero denominator) or not produced."""
    display: str
    by: str = ""
    by_kind: str = ""
    headline: bool = True
    """Shown in the history's one-line summary."""


class ErrorDetail(BaseModel):
    """Who failed, for one entry of `RunRecord.errors`: what the `ErrorRaised` event said of the
    seat and the purpose of the failed call, so a batch's failures can be told apart (a judge
    that failed to score from an agent that failed to reply)."""

    seat: str | None = None
    """None: the event did not say (shown as "unknown seat")."""
    purpose: str = ""
    judgement: bool | None = None
    """As `ErrorRaised.judgement`: True a judging call, False a dialogue seat's reply, None unknown."""
    fatal: bool = False


class RunRecord(BaseModel):
    format_version: int = FORMAT_VERSION
    id: str
    family: str
    env_id: str
    environment: dict[str, Any]
    mode: str
    human_seats: list[str]
    seats: dict[str, SeatInfo]
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)
    settings: dict[str, Any]
    messages: list[MessageRecord] = Field(default_factory=list)
    scores: list[Score] = Field(default_factory=list)
    section: Any = None
    """The family's own section (its `section_model`): plans and judges, proposals and verdicts,
    the timeline and the oracle's checks."""
    errors: list[str] = Field(default_factory=list)
    error_details: list[ErrorDetail] = Field(default_factory=list)
    """One per entry of `errors`, in the same order (`error_detail(i)`). Records written before
    it was kept have none: their errors read as an unknown seat."""
    termination: Termination | None = None
    totals: Totals = Field(default_factory=Totals)
    versions: dict[str, str] = Field(default_factory=dict)
    started_at: str = ""
    ended_at: str | None = None
    resumed_from: dict[str, Any] | None = None
    forked_from: dict[str, Any] | None = None
    """For a branch: the parent session, fork point and change (`core.fork.ForkedFrom`)."""
    rerun_of: dict[str, Any] | None = None
    """For a re-run against a new agent: the original and how its user turns were given (`core.rerun`)."""
    comparisons: list[dict[str, Any]] = Field(default_factory=list, exclude_if=lambda value: not value)
    """The side-by-side comparisons (`services.compare`) this session was a side of, with their vote
    and reason: not from the event log (a vote comes after the session ended) but attached by the
    store's reader (`store.queries.load_record`), so an export of the session carries the vote.
    Left out of the JSON when empty (a record of a session never compared reads as before)."""
    human_labels: list[dict[str, Any]] = Field(default_factory=list)
    """People's labels on the session's verdicts (`store.db.LabelRow` dicts, `services.labels`): never
    folded from events (they live beside the session in the store); filled by the paths that load
    a record with a store for an export, and kept by a run-record file read back."""

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        if isinstance(data, dict) and "format_version" not in data:
            data = upgrade_v1(data)
        return data

    @model_validator(mode="after")
    def _typed_section(self) -> "RunRecord":
        from proactive_tui.core import registry

        family = registry.find(self.family)
        if family is None:
            return self
        if self.section is None:
            self.section = family.record.new_section(self)
        elif isinstance(self.section, dict):
            self.section = family.record.section_model.model_validate(self.section)
        if not self.scores:  # derived from the section: a version-1 record gets them here
            self.scores = family.record.scores(self)
        return self

    @model_serializer(mode="wrap")
    def _without_empty_labels(self, handler: Any) -> Any:
        """`human_labels` is written only when there are labels, so records without any (every
        record before labels existed, every record not exported from a store) read as before."""
        data = handler(self)
        if isinstance(data, dict) and not data.get("human_labels"):
            data.pop("human_labels", None)
        return data

    def score(self, name: str) -> Score | None:
        return next((s for s in self.scores if s.name == name), None)

    def error_detail(self, index: int) -> ErrorDetail:
        """Who failed for `errors[index]`; an unknown seat when the record does not say."""
        return self.error_details[index] if 0 <= index < len(self.error_details) else ErrorDetail()


class Failure(BaseModel):
    """One reason a session counts as failing, with who failed as far as its files say.

    `kind` is "judge" for a judging call that failed (a score, a verdict, a reading of a reply:
    the event said so, or the seat is the one named `judge`, which only judges), "seat" for a
    dialogue seat's own reply (the event said so, or the seat is the agent's, which never
    judges), "unknown" when the record does not say (records written before
    `RunRecord.error_details`, a failure kept in failed/ with no record, an error that ended the
    session away from any call; or a `user` seat in an event log from before `judgement` was
    kept: ProactiveBench's user seat judges, the other families' does not)."""

    kind: Literal["judge", "seat", "unknown"]
    seat: str | None = None
    purpose: str = ""
    model: str = ""
    """The seat's model (or person, or script) as the record's seats name it."""
    message: str

    @property
    def who(self) -> str:
        """Who failed, in words true to the record: `guidance score · judge seat gpt-x`."""
        if self.seat is None:
            return "unknown seat"
        seat = f"{self.seat} seat" + (f" {self.model}" if self.model else "")
        if self.kind == "unknown":
            seat += " (judging or not: not recorded)"
        return f"{self.purpose} · {seat}" if self.purpose else seat


def failures_of(record: Any, reason: str = "") -> list[Failure]:
    """Every failure a session's files hold: `reason` (the failure kept in failed/, or an error
    ending no error event names) when no error of the record says it, then one per error the
    record holds."""
    out: list[Failure] = []
    errors = list(record.errors) if record is not None else []
    if reason and reason not in errors:
        out.append(Failure(kind="unknown", message=reason))
    for index, message in enumerate(errors):
        detail = record.error_detail(index)
        judging = detail.judgement if detail.judgement is not None else {"judge": True, "agent": False}.get(
            detail.seat or "")
        kind: Literal["judge", "seat", "unknown"] = "unknown" if judging is None else ("judge" if judging else "seat")
        seat_info = record.seats.get(detail.seat) if detail.seat else None
        out.append(Failure(kind=kind, seat=detail.seat, purpose=detail.purpose,
                           model=seat_info.label if seat_info is not None else "", message=message))
    return out


def upgrade_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 run record as version 2: the family moves its fields into `section`."""
    from proactive_tui.core import registry

    data = dict(data)
    family = registry.find(str(data.get("family", "")))
    if family is not None:
        data = family.record.upgrade_record(data)
    for key in ("planning", "turn_checks", "guidance", "live_scores", "proposals", "timeline"):
        data.pop(key, None)
    data["format_version"] = FORMAT_VERSION
    return data


class RunRecordBuilder:
    """Fold events into a RunRecord, one at a time."""

    def __init__(self) -> None:
        self.record: RunRecord | None = None
        self._family: Any = None

    def _add_usage(self, usage: UsageInfo, seat: str | None = None) -> None:
        totals = self.record.totals  # type: ignore[union-attr]
        totals.prompt_tokens += usage.prompt_tokens
        totals.completion_tokens += usage.completion_tokens
        totals.total_tokens += usage.total_tokens
        if usage.cost is not None:
            totals.cost = (totals.cost or 0.0) + usage.cost
        if seat and (usage.prompt_tokens or usage.completion_tokens or usage.total_tokens):
            share = totals.by_seat.setdefault(seat, SeatUsage())
            share.prompt_tokens += usage.prompt_tokens
            share.completion_tokens += usage.completion_tokens
            share.calls += 1

    def apply(self, event: Any) -> RunRecord | None:
        if isinstance(event, SessionStarted):
            from proactive_tui.core import registry

            self._family = registry.find(event.family)
            self.record = RunRecord(
                id=event.session_id, family=event.family, env_id=event.env_id, environment=event.environment,
                mode=event.mode, human_seats=[s for s, info in event.seats.items() if info.kind == "human"],
                seats=event.seats, models=event.models, settings=event.settings,
                versions={"app": event.app_version, "prompts": event.prompt_version}, started_at=event.ts,
                resumed_from=event.resumed_from, forked_from=event.forked_from, rerun_of=event.rerun_of,
            )
            return self.record
        rec = self.record
        if rec is None:
            return None
        if isinstance(event, MessageDone):
            rec.messages = [m for m in rec.messages if m.id != event.message.id] + [event.message]
            self._add_usage(event.message.usage, event.message.role)
        elif isinstance(event, MessageDiscarded):
            rec.messages = [m for m in rec.messages if m.id != event.message_id]
        elif isinstance(event, UsageRecorded):
            self._add_usage(event.usage, event.seat)
        elif isinstance(event, Retrying):
            rec.totals.retries += 1
        elif isinstance(event, ErrorRaised):
            rec.errors.append(event.message)
            rec.error_details.append(ErrorDetail(seat=event.seat, purpose=event.purpose, judgement=event.judgement,
                                                 fatal=event.fatal))
        elif isinstance(event, ModelCalled):
            # What each model saw stays in the session's events (the store), not in the record; but
            # an agent program (llm/acp) says who it is only once started, and the record and its
            # exports name it: its reported name and version beside the protocol version.
            info = (event.call.agent or {}).get("info") if event.call.agent else None
            acp = rec.models.get(event.seat, {}).get("acp") if info else None
            if isinstance(acp, dict):  # copies: the SessionStarted event's own dict stays as it was
                assert info is not None  # `acp` is read only when `info` is
                agent = {k: info.get(k) for k in ("name", "title", "version", "protocol_version")}
                acp = {**acp, "agent": agent}
                # The agent's sessions a resume can restore (`core.acp_seat`), and how this session
                # continued its parent's (restored, or re-driven and why).
                side = event.call.agent or {}
                if side.get("restore_points"):
                    acp["restore_points"] = [*acp.get("restore_points", []), *side["restore_points"]]
                if side.get("continued"):
                    acp["continued"] = side["continued"]
                rec.models = {**rec.models, event.seat: {**rec.models[event.seat], "acp": acp}}
        elif isinstance(event, SessionEnded):
            rec.termination = Termination(reason=event.reason, detail=event.detail)
            rec.ended_at = event.ts
            try:
                rec.totals.wall_time_s = round(
                    (datetime.fromisoformat(event.ts) - datetime.fromisoformat(rec.started_at)).total_seconds(), 3
                )
            except ValueError:
                pass
        elif self._family is not None:
            self._family.record.apply(rec, event)
            rec.scores = self._family.record.scores(rec)
        return rec


def fold(events: Iterable[Any]) -> RunRecord:
    builder = RunRecordBuilder()
    for event in events:
        builder.apply(event)
    if builder.record is None:
        raise ValueError("no session_started event: not a session log")
    return builder.record


def read_record(data: str | bytes | dict[str, Any]) -> RunRecord:
    """A run record from JSON of either format version."""
    if isinstance(data, (str, bytes)):
        return RunRecord.model_validate_json(data)
    return RunRecord.model_validate(data)
