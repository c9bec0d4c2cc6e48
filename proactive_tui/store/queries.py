"""Reading the session database: history listings, event logs, run records, resume and delete.

Everything a view of past sessions needs (the TUI history screen, `proactive-tui sessions`,
export) goes through these functions, so they agree: a run record is always folded from the
event log by the engine's own reducer (`run_record.fold`), never stored separately.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from proactive_tui.core.events import parse_event
from proactive_tui.core.run_record import RunRecord, fold
from proactive_tui.store.db import SessionRow, Store, StoreError

if TYPE_CHECKING:
    from proactive_tui.core.spec import SeatKind
    from proactive_tui.llm.settings import Role

STATUSES = ("running", "finished", "stopped", "error", "interrupted")
"""A session's status, one word for one state wherever it is shown (the session screen, History,
`sessions list` and `show`, the fork tree, the markdown export's "Ended"): a session a person
stopped is `stopped` (scored or not), never "cancelled" in one place and "stopped" in another."""

REASON_WORDS = {"cancelled": "stopped"}
"""Engine reason codes (SessionEnded.reason, kept as they are in run records and events) that a
person reads as another word: the status word above."""


def status_for(reason: str) -> str:
    """The sessions-table status for a SessionEnded reason."""
    return {"cancelled": "stopped", "error": "error"}.get(reason, "finished")


def reason_word(reason: str) -> str:
    """A SessionEnded reason as the exports and compare name it (`cancelled` -> `stopped`)."""
    return REASON_WORDS.get(reason, reason)


def ended_word(reason: str, family: str = "") -> str:
    """How History's row says a session ended: `reason_word`, and `max_turns` as the limit in the
    family's unit (`exchange limit`), not a "turns" of its own beside the row's exchange count."""
    if reason == "max_turns":
        return f"{turn_unit(family).name} limit"
    return reason_word(reason)


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def effective_status(row: SessionRow) -> str:
    """`running` only while the recording process lives; a session whose process died is `interrupted`."""
    if row.status == "running" and not _alive(row.pid):
        return "interrupted"
    if row.status == "cancelled":  # stored so before the one status word
        return "stopped"
    return row.status


# -- headline scores ------------------------------------------------------------------------------


def _family(record: RunRecord) -> Any:
    from proactive_tui.core import registry

    return registry.find(record.family)


def complete_turns(record: RunRecord) -> int:
    """Turns (ProactiveEval turns, ProactiveBench events judged, Chronos agent turns) that a
    resume keeps and a history row counts."""
    family = _family(record)
    if family is None:
        return len([m for m in record.messages if m.role == "agent" and not m.partial])
    turns: int = family.record.complete_turns(record)
    return turns


def turn_unit(family_name: str) -> Any:
    """The family's `TurnUnit` (what `turns` in a headline counts, and its name); a family that
    is not installed counts turns."""
    from proactive_tui.core.family import DEFAULT_TURN_UNIT

    found = registry_find(family_name)
    return DEFAULT_TURN_UNIT if found is None else found.turn_unit


def registry_find(family_name: str) -> Any:
    from proactive_tui.core import registry

    return registry.find(family_name)


def units_done(record: RunRecord) -> int:
    """The family's units (`Family.turn_unit`: ProactiveEval turns, ProactiveBench events,
    Chronos exchanges) the session completed."""
    family = _family(record)
    if family is None:
        return complete_turns(record)
    units: int = family.record.units_done(record)
    return units


def turns_text(family_name: str, headline_values: dict[str, Any]) -> str:
    """A headline's count in its family's unit, named: `exchanges 6`, `events 4`, `turns 3`."""
    count = headline_values.get("turns", headline_values.get("messages"))
    return "" if count is None else f"{turn_unit(family_name).plural} {count}"


def headline(record: RunRecord) -> dict[str, Any]:
    """The few values a history row shows: how many of its family's units it completed (`turns`,
    named by `turns_text`), the family's headline scores, how it ended."""
    values: dict[str, Any] = {"turns": units_done(record)}
    values.update({s.name: s.display for s in record.scores if s.headline and s.value is not None})
    values["ended"] = record.termination.reason if record.termination else None
    return values


def headline_text(headline: dict[str, Any]) -> str:
    """The headline scores of a history row in one line (`overall 7/10 · plan 6/10`)."""
    parts = []
    for key, value in headline.items():
        if key in ("ended", "turns", "messages") or value is None:
            continue
        parts.append(f"{key} {value}/10" if key in ("overall", "plan") and isinstance(value, int) else f"{key} {value}")
    return " · ".join(parts) or "-"


def score_differences(parent: Any, branch: Any) -> list[tuple[str, Any, Any]]:
    """(score, parent's value, branch's value) for the headline values that differ."""
    out = []
    for key in sorted(set(parent) | set(branch)):
        if key in ("turns", "messages"):
            continue
        if parent.get(key) != branch.get(key):
            out.append((key, parent.get(key), branch.get(key)))
    return out


def difference_text(name: str, before: Any, after: Any) -> str:
    """One changed score as every view says it: `overall 7/10 → 4/10` (`-`: not given)."""
    return f"{name} {'-' if before is None else before} → {'-' if after is None else after}"


def differences_text(diffs: list[tuple[str, Any, Any]]) -> str:
    """`score_differences` in words, comma-separated (empty when nothing differs)."""
    return ", ".join(difference_text(*diff) for diff in diffs)


# -- listing ------------------------------------------------------------------------------------


class SessionSummary(BaseModel):
    """One history row: enough to list, filter and pick a session without reading its events."""

    id: str
    env_id: str
    family: str
    title: str
    status: str
    created_at: str
    updated_at: str
    models: dict[str, str]
    """seat -> model (or "person")."""
    writers: dict[str, list[str]] = Field(default_factory=dict)
    """seat -> who wrote its replies, as the record says (`core.writers.seat_writers`): the model,
    and a person who played it or edited one of its replies (`person (edited)`). Empty for a seat
    of a session finished before this was kept."""
    human_seats: list[str]
    headline: dict[str, Any]
    resumed_from: str | None = None
    forked_from: str | None = None
    """A branch's parent session (`core.fork`)."""
    fork_turn: int | None = None
    fork_seat: str | None = None


def models_with_writers(record: RunRecord) -> dict[str, dict[str, Any]]:
    """The record's seat -> model settings, each with `writers`: who wrote that seat's replies
    (`core.writers.seat_writers`). What a finished session's row keeps in its `models`, so History
    names a person who wrote replies without reading the session's events."""
    from proactive_tui.core.writers import seat_writers

    writers = seat_writers(record)
    return {seat: {**info, "writers": writers.get(seat, [])} for seat, info in record.models.items()}


def summarise(store: Store, row: SessionRow) -> SessionSummary:
    summary = row.summary
    updated = row.updated_at
    models = row.models
    if summary is None:  # still running, or the process died: fold what was committed
        try:
            record = load_record(store, row.id)
            summary, models = headline(record), models_with_writers(record)
        except StoreError:
            summary = {}
        updated = store.last_event_ts(row.id) or updated
    return SessionSummary(
        id=row.id, env_id=row.env_id, family=row.family, title=row.title, status=effective_status(row),
        created_at=row.created_at, updated_at=updated,
        models={seat: str(info.get("model", "")) for seat, info in row.models.items() if isinstance(info, dict)},
        writers={seat: [str(w) for w in info.get("writers") or []] for seat, info in models.items()
                 if isinstance(info, dict)},
        human_seats=[seat for seat, info in row.seats.items() if isinstance(info, dict) and info.get("kind") == "human"],
        headline=summary, resumed_from=row.resumed_from, forked_from=row.forked_from,
        fork_turn=row.fork_turn, fork_seat=row.fork_seat,
    )


def list_sessions(store: Store, env_id: str | None = None, family: str | None = None,
                  limit: int | None = None) -> list[SessionSummary]:
    """Newest first, with headline scores."""
    return [summarise(store, row) for row in store.sessions(env_id=env_id, family=family, limit=limit)]


def resolve_id(store: Store, text: str) -> str:
    """A full session id, from the id or a unique prefix of it (as `git` does with hashes)."""
    text = text.strip()
    if not text:
        raise StoreError("no session id given")
    if store.session(text) is not None:
        return text
    matches = store.ids_with_prefix(text)
    if not matches:
        raise StoreError(f"no session with id {text!r} (see `proactive-tui sessions list`)")
    if len(matches) > 1:
        raise StoreError(f"{text!r} matches {len(matches)} sessions ({', '.join(matches[:5])}...); give more of the id")
    return matches[0]


def session_row(store: Store, session_id: str) -> SessionRow:
    row = store.session(session_id)
    if row is None:
        raise StoreError(f"no session with id {session_id!r} (see `proactive-tui sessions list`)")
    return row


# -- events and records -------------------------------------------------------------------------


def _own_events(store: Store, session_id: str) -> list[Any]:
    """The events stored for this session, each copy of a streamed reply put back (`replies`)."""
    from proactive_tui.store.replies import ReplyReader

    events = []
    replies = ReplyReader()
    for _seq, type_, payload, _ts in store.event_rows(session_id):
        try:
            event = parse_event(replies.read(type_, payload))
        except (ValidationError, ValueError):
            continue
        if type_ == "message_delta":
            replies.streamed(event.message_id, event.text)
        events.append(event)
    return events


def load_events(store: Store, session_id: str, _seen: frozenset[str] = frozenset()) -> list[Any]:
    """The session's events in order. An event this version cannot read (a family added later) is
    skipped. A branch's (`core.fork`) are its start, its parent's events before the fork point
    (read from the parent, never stored twice) and its own, numbered as the branch saw them."""
    events = _own_events(store, session_id)
    start = events[0] if events and getattr(events[0], "type", "") == "session_started" else None
    forked = getattr(start, "forked_from", None) if start is not None else None
    if not forked:
        return events
    assert start is not None  # `forked` came from it
    from proactive_tui.core import registry
    from proactive_tui.core.fork import ForkedFrom, ForkPoint, prefix_events

    info = ForkedFrom.model_validate(forked)
    if info.session_id in _seen or store.session(info.session_id) is None:
        raise StoreError(f"session {session_id} is a branch of {info.session_id}, which is no longer in the "
                         "store: its turns before the fork point cannot be read")
    family = registry.find(start.family)
    fork = family.fork if family is not None else None
    if fork is None:
        raise StoreError(f"session {session_id} is a {start.family} branch; that family is not installed "
                         "or cannot fork")
    parent = load_events(store, info.session_id, _seen | {session_id})
    prefix = prefix_events(parent, fork.sides(ForkPoint(turn=info.turn, seat=info.seat)))
    stitched = [start] + [e.model_copy(update={"seq": i}) for i, e in enumerate(prefix, start=2)]
    own = events[1:]
    if len(prefix) != info.prefix_events:  # an older reading of the parent: keep the order, renumber
        own = [e.model_copy(update={"seq": i}) for i, e in enumerate(own, start=len(stitched) + 1)]
    return stitched + own


def load_record(store: Store, session_id: str) -> RunRecord:
    """The run record folded from the committed events (partial for a session that did not end)."""
    try:
        record = fold(load_events(store, session_id))
    except ValueError:
        raise StoreError(f"session {session_id} has no recorded start: nothing to show") from None
    record.comparisons = comparison_facts(store, session_id)
    return record


def comparison_facts(store: Store, session_id: str) -> list[dict[str, Any]]:
    """The comparisons a session is a side of, as its record and exports carry them: the
    comparison, this session's letter, the other sides, whether it was blind, the vote (`won`,
    `lost`, `tie` for this side) and its reason."""
    out = []
    for row in store.comparisons(session_id):
        index = row.sessions.index(session_id)
        if row.vote is None:
            verdict = None
        elif row.vote == "tie":
            verdict = "tie"
        else:
            verdict = "won" if row.vote == session_id else "lost"
        out.append({"id": row.id, "side": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[index] if index < 26 else str(index + 1),
                    "sessions": list(row.sessions), "blind": row.blind, "vote": row.vote, "verdict": verdict,
                    "reason": row.reason, "voted_at": row.voted_at})
    return out


def delete_session(store: Store, session_id: str) -> None:
    row = session_row(store, session_id)
    if effective_status(row) == "running" and row.pid != os.getpid():
        raise StoreError(f"session {session_id} is still running (process {row.pid}); stop it first")
    branches = store.branches(session_id)
    if branches:
        raise StoreError(f"session {session_id} has {len(branches)} branch(es) that read their first turns from it "
                         f"({', '.join(b.id for b in branches[:5])}); delete those first")
    store.delete_session(session_id)


# -- resume -------------------------------------------------------------------------------------


class ResumePlan(BaseModel):
    """What resuming a session needs: its settings, its environment and what was recorded."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    session_id: str
    spec: Any
    """proactive_tui.core.spec.SessionSpec: the original seats, models and protocol settings."""
    env: Any
    record: RunRecord
    turns: int
    """Complete turns that the resumed session keeps."""
    branch: Any = None
    """For an interrupted branch: a `core.fork.BranchStart`, so the resumed session is a branch of
    the same parent at the same point (its prefix read from the parent, not copied)."""


def spec_from_record(record: RunRecord) -> Any:
    """A SessionSpec rebuilt from a run record, for sessions recorded without one."""
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.llm.settings import ROLES, ModelSettings, RoleSettings

    roles = {}
    for role in ROLES:
        info = record.models.get(role) or {}
        values = {k: info[k] for k in ("model", "api_base", "temperature", "max_tokens") if info.get(k) is not None}
        if values.get("model") == "person":
            values.pop("model")
        roles[role] = ModelSettings(**values)
    seats: dict[str, SeatKind] = {seat: ("human" if info.kind == "human" else "model") for seat, info in record.seats.items()}
    return SessionSpec(env_id=record.env_id, roles=RoleSettings(**roles), seats=seats, settings=record.settings)


def session_environment(record: RunRecord) -> Any:
    """The environment as the session saw it (stored in its start event), else the one on disk today."""
    family = _family(record)
    try:
        if family is None:
            raise StoreError(f"session {record.id} is a {record.family} session; that family is not installed")
        return family.environments.validate_env(record.environment)
    except ValidationError:
        from proactive_tui.envs import load_default

        recorded = record.environment.get("source") if isinstance(record.environment, dict) else None
        env = load_default().get(record.env_id, source=recorded if isinstance(recorded, str) else None)
        if env is None:
            raise StoreError(f"the environment {record.env_id} of this session can no longer be read") from None
        return env


def resume_spec(store: Store, session_id: str) -> ResumePlan:
    """How to continue a session that did not finish: same seats, models and settings."""
    from proactive_tui.core.spec import SessionSpec

    row = session_row(store, session_id)
    status = effective_status(row)
    if status == "finished":
        raise StoreError(f"session {session_id} finished ({(row.summary or {}).get('ended') or 'complete'}): nothing to resume")
    if status == "running":
        raise StoreError(f"session {session_id} is still running (process {row.pid})")
    record = load_record(store, session_id)
    family = _family(record)
    if family is None or family.parts.resume is None:
        raise StoreError(f"session {session_id}: {record.family} sessions cannot be resumed yet")
    try:
        spec = SessionSpec.model_validate(row.spec) if row.spec else spec_from_record(record)
    except ValidationError as exc:
        raise StoreError(f"session {session_id}: its stored settings cannot be read by this version ({exc.error_count()} problems)") from None
    return ResumePlan(session_id=session_id, spec=spec, env=session_environment(record), record=record,
                      turns=complete_turns(record), branch=_branch_start(store, record, family))


def _branch_start(store: Store, record: RunRecord, family: Any) -> Any:
    if not record.forked_from:
        return None
    from proactive_tui.core.fork import BranchStart, ForkedFrom, ForkPoint, fork_part, prefix_events

    forked = ForkedFrom.model_validate(record.forked_from)
    parent = load_events(store, forked.session_id)
    prefix = prefix_events(parent, fork_part(family).sides(ForkPoint(turn=forked.turn, seat=forked.seat)))
    return BranchStart(forked_from=forked, prefix=prefix, resumed=True)


# -- forks --------------------------------------------------------------------------------------


def fork_plan(store: Store, session_id: str, point: Any, change: Any, spec: Any = None,
              changed_seats: dict[str, str] | None = None) -> Any:
    """What forking a stored session at `point` with `change` needs (`core.fork.ForkPlan`). `spec`
    replaces the parent's SessionSpec (another model for a seat); a running session cannot be
    forked (its prefix is still being written)."""
    from proactive_tui.core.fork import ForkPlan
    from proactive_tui.core.spec import SessionSpec

    row = session_row(store, session_id)
    if effective_status(row) == "running" and row.pid != os.getpid():
        raise StoreError(f"session {session_id} is still running (process {row.pid}); fork it once it ended")
    events = load_events(store, session_id)
    try:
        record = fold(events)
    except ValueError:
        raise StoreError(f"session {session_id} has no recorded start: nothing to fork") from None
    family = _family(record)
    if family is None or family.parts.fork is None:
        raise StoreError(f"session {session_id}: {record.family} sessions cannot be forked")
    if spec is None:
        try:
            spec = SessionSpec.model_validate(row.spec) if row.spec else spec_from_record(record)
        except ValidationError as exc:
            raise StoreError(f"session {session_id}: its stored settings cannot be read by this version "
                             f"({exc.error_count()} problems)") from None
    return ForkPlan(parent_id=session_id, parent=record, parent_events=events, spec=spec, env=session_environment(record),
                    point=point, change=change, changed_seats=changed_seats or {})


def stored_spec(store: Store, session_id: str) -> Any:
    """The SessionSpec a session ran with (rebuilt from its record when none was stored). Each
    model seat's temperature is the one the session recorded running it at (`models`): sessions
    stored before the spec kept the family's decided temperatures held the model settings' 0.0
    there, which a fork would otherwise have run at."""
    from proactive_tui.core.spec import SessionSpec

    row = session_row(store, session_id)
    if row.spec:
        try:
            spec = SessionSpec.model_validate(row.spec)
        except ValidationError:
            pass
        else:
            updates = {}
            for seat, info in (row.models or {}).items():
                ran_at = info.get("temperature") if isinstance(info, dict) else None
                if spec.seats.get(seat) == "model" and ran_at is not None and seat in spec.roles.model_fields:
                    updates[seat] = spec.roles.for_role(cast("Role", seat)).model_copy(update={"temperature": float(ran_at)})
            return spec.model_copy(update={"roles": spec.roles.model_copy(update=updates)}) if updates else spec
    return spec_from_record(load_record(store, session_id))


def session_tree(store: Store, session_id: str) -> Any:
    """The fork tree a session belongs to (`core.fork.BranchNode`), from its root down."""
    from proactive_tui.core.fork import BranchNode, ForkedFrom

    row = session_row(store, session_id)
    seen = {row.id}
    while row.forked_from and row.forked_from not in seen:
        parent = store.session(row.forked_from)
        if parent is None:
            break
        seen.add(parent.id)
        row = parent

    def node(r: SessionRow) -> BranchNode:
        forked = None
        if r.forked_from:
            try:
                start = _own_events(store, r.id)[0]
                forked = ForkedFrom.model_validate(start.forked_from)
            except (IndexError, ValidationError, AttributeError, TypeError):
                forked = None
        return BranchNode(id=r.id, forked_from=forked, summary=summarise(store, r),
                          children=[node(c) for c in store.branches(r.id)])

    return node(row)
