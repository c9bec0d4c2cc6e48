"""Re-grading a stored session (issue 18): its judges run again, with another judge model, over
the dialogue as recorded. The dialogue is never run again and the original grading never changes.

- A family that can (one with a `regrade` part) returns the judge events a new judge gives
  (`RegradePart.regrade`), in its own event types, asked with the protocol's own prompts through the
  real model path (LLMParticipant, Gateway), each call labelled and traced (`model_called`).
- `regraded_record` folds the session's events with its judge events replaced by the grading's,
  so the scores come from the family's own reducer and `scores()`: nothing here scores anything.
- `regrade_session` does one session end to end: reads it from the store, grades it, keeps the
  grading in the store's `gradings` table (never in the session's event log), and says what
  changed.

No UI imports: the CLI (`proactive-tui regrade`) and History both call `regrade_session`.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel

from proactive_tui.core.events import ErrorRaised, now_iso, parse_event
from proactive_tui.core.run_record import RunRecord, fold


class RegradeError(Exception):
    """A session that cannot be re-graded, or whose new grading failed; the message says why."""


class ScoreChange(BaseModel):
    """One headline score that the new grading gives differently (None: not given)."""

    name: str
    before: Any = None
    after: Any = None

    def text(self) -> str:
        from proactive_tui.store.queries import difference_text

        return difference_text(self.name, self.before, self.after)


class RegradeResult(BaseModel):
    """One session re-graded: the stored grading, the headline scores before (the session's own
    grading) and after (the new one), and the scores that differ."""

    session_id: str
    family: str
    grading: Any
    """The stored `store.db.GradingRow`."""
    before: dict[str, Any]
    after: dict[str, Any]
    changes: list[ScoreChange]

    def changes_text(self) -> str:
        return ", ".join(c.text() for c in self.changes) or "no headline score changed"


def regraded_record(events: list[Any], grading_events: list[Any], family: Any) -> RunRecord:
    """The session's record as the grading judges it: every recorded event except the family's
    judge events (`RegradePart.judge_event_types`), then the grading's judge events, folded by the
    engine's reducer. Usage, errors and traces of the grading are not folded in: the record's
    totals and errors stay those of the session as it ran."""
    judged = tuple(family.regrade.judge_event_types()) if family.regrade is not None else ()
    kept = [e for e in events if not isinstance(e, judged)]
    end = [e for e in kept if e.type == "session_ended"]
    body = [e for e in kept if e.type != "session_ended"]
    return fold(body + [e for e in grading_events if isinstance(e, judged)] + end)


def parse_grading_events(rows: list[dict[str, Any]]) -> list[Any]:
    """A stored grading's events, typed (an event this version cannot read is skipped)."""
    out = []
    for data in rows:
        try:
            out.append(parse_event(data))
        except ValueError:
            continue
    return out


def judge_failures(grading_events: list[Any]) -> list[str]:
    """What went wrong in a grading: the errors its protocol raised (every judge call that fails
    in the end is one). Not a traced call's own error: a server that refuses one structured mode
    fails a call that the negotiation then answers in another."""
    return [e.message for e in grading_events if isinstance(e, ErrorRaised)]


async def regrade_session(store: Any, session_id: str, judge_settings: Any, gateway: Any) -> RegradeResult:
    """Re-grade one stored session with the judge `judge_settings` (an `llm.settings.ModelSettings`)
    and keep the grading. Raises RegradeError (nothing stored) when the session cannot be
    re-graded or the judge failed on any of its calls: a stored grading is always a whole one,
    comparable with the original."""
    from proactive_tui.core import registry
    from proactive_tui.core.participants import LLMParticipant
    from proactive_tui.llm.errors import ModelError
    from proactive_tui.store.db import GradingRow, StoreError
    from proactive_tui.store.queries import session_environment, effective_status, headline, load_events, score_differences
    from proactive_tui.store.queries import session_row

    try:
        row = session_row(store, session_id)
        events = load_events(store, session_id)
        record = fold(events)
    except (StoreError, ValueError) as exc:
        raise RegradeError(str(exc) if isinstance(exc, StoreError) else
                           f"session {session_id} has no recorded start: nothing to re-grade") from None
    family = registry.find(record.family)
    if family is None:
        raise RegradeError(f"session {session_id} is a {record.family} session; that family is not installed")
    part = family.regrade
    if part is None:
        raise RegradeError(f"session {session_id}: {family.title} sessions cannot be re-graded: "
                           f"{family.not_regradable_reason}")
    if effective_status(row) == "running" and row.pid is not None:
        raise RegradeError(f"session {session_id} is still running (process {row.pid}); re-grade it once it ended")
    try:
        env = session_environment(record)
    except StoreError as exc:
        raise RegradeError(str(exc)) from None
    judge = LLMParticipant(gateway, judge_settings)
    try:
        grading_events = await part.regrade(record, env, judge)
    except ModelError as exc:
        raise RegradeError(f"session {session_id}: the judge {judge_settings.model} failed: {exc.message}") from None
    except Exception as exc:  # noqa: BLE001 - one session that cannot be read this way must not stop the others
        raise RegradeError(f"session {session_id} could not be re-graded: {type(exc).__name__}: {exc}") from None
    failures = judge_failures(grading_events)
    if failures:
        raise RegradeError(f"session {session_id}: the judge {judge_settings.model} failed "
                           f"({len(failures)} problem(s)); nothing was stored: {failures[0]}")
    before = row.summary if row.summary is not None else headline(record)
    after = headline(regraded_record(events, grading_events, family))
    import json

    from proactive_tui.store.db import event_json

    grading = GradingRow(id=uuid.uuid4().hex[:12], session_id=session_id, judge=judge_settings.model,
                         created_at=now_iso(), events=[json.loads(event_json(e)) for e in grading_events],
                         summary=after)
    store.add_grading(grading)
    changes = [ScoreChange(name=k, before=a, after=b) for k, a, b in score_differences(before, after) if k != "ended"]
    return RegradeResult(session_id=session_id, family=record.family, grading=grading, before=before, after=after,
                         changes=changes)


def grading_record(store: Any, grading: Any) -> RunRecord:
    """The session's record as a stored grading judges it (what `sessions show` could print)."""
    from proactive_tui.core import registry
    from proactive_tui.store.queries import load_events

    events = load_events(store, grading.session_id)
    family = registry.get(fold(events).family)
    return regraded_record(events, parse_grading_events(grading.events), family)


def judge_settings(role: str, model: str, api_base: str | None = None) -> Any:
    """The new judge's ModelSettings: `model` (and `api_base`) over the settings the config file
    and environment give the family's judging role (`RegradePart.seat`), resolved as `run
    --judge MODEL` resolves them. Raises RegradeError for a bad config or an empty model."""
    from pydantic import ValidationError

    from proactive_tui.config import ConfigError, load_config
    from proactive_tui.llm.settings import resolve_roles

    if not model.strip():
        raise RegradeError("no judge model given")
    try:
        config = load_config()
        roles = resolve_roles(config.roles, cli={role: {"model": model.strip(), "api_base": api_base}})  # type: ignore[dict-item]
    except (ConfigError, ValidationError) as exc:
        raise RegradeError(f"judge settings: {exc}") from None
    return roles.for_role(role)  # type: ignore[arg-type]


def recorded_judge(record: RunRecord) -> str:
    """The model that judged the session (its family's judging seat), for a prefilled choice."""
    from proactive_tui.core import registry

    family = registry.find(record.family)
    seat = record.seats.get(family.regrade.seat if family is not None and family.regrade is not None else "judge")
    return seat.label if seat is not None and seat.kind == "llm" else ""


async def regrade_many(store: Any, session_ids: list[str], model: str, api_base: str | None = None,
                       gateway: Any = None) -> list[RegradeResult | RegradeError]:
    """Each session re-graded in turn with judge `model`; a session that fails gives its
    RegradeError in its place and the others still run."""
    from proactive_tui.core import registry
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.store.db import StoreError
    from proactive_tui.store.queries import resolve_id, session_row

    gateway = gateway or Gateway()
    out: list[RegradeResult | RegradeError] = []
    for given in session_ids:
        try:
            try:
                session_id = resolve_id(store, given)
                family = registry.find(session_row(store, session_id).family)
            except StoreError as exc:
                raise RegradeError(str(exc)) from None
            role = family.regrade.seat if family is not None and family.regrade is not None else "judge"
            out.append(await regrade_session(store, session_id, judge_settings(role, model, api_base), gateway))
        except RegradeError as exc:
            out.append(exc)
    return out
