"""Running planned sessions: the one seam between the batch command and how sessions are run.

`run_planned` runs a list of planned sessions `concurrency` at a time and reports each one through
`on_done` as it ends (finished, failed, or cut off). It knows nothing of folders, reports or
displays: the batch command writes records from `on_done` and hands in the gateway, which
carries the per-model limits (`llm.limits`) and the per-model counters a progress display reads.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, ConfigDict

from proactive_tui.core.run_record import RunRecord
from proactive_tui.core.spec import SessionSpec
from proactive_tui.evalrun.plan import SessionKey


class PlannedSession(BaseModel):
    """A key with what it takes to run it: the environment, the session spec, the seed."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    key: SessionKey
    seed: int
    env: Any
    """The environment (each family's own model)."""
    spec: SessionSpec
    """Its roles carry the seed to every model seat."""


class SessionOutcome(BaseModel):
    """How one planned session ended: its record (None when it never started), or the error."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    planned: PlannedSession
    record: RunRecord | None = None
    error: str | None = None


Build = Callable[[Any, Any, Any], Any]
"""(spec, env, gateway) -> session; `core.spec.build_session` unless replaced (scripted seats)."""


async def run_planned(planned: list[PlannedSession], concurrency: int, on_done: Callable[[SessionOutcome], Any],
                      store: bool = True, warn: Callable[[str], None] | None = None,
                      build: Build | None = None, gateway: Any = None,
                      shares: dict[str, Any] | None = None) -> None:
    """Run every planned session, at most `concurrency` at once, each recorded in the session store
    unless `store` is off (a store that cannot be opened costs a warning, never the run). An
    exception in one session is that session's outcome, not the batch's. Cancelling (Ctrl-C,
    SIGTERM) stops the sessions running; those never reach `on_done`. `gateway` is shared by every
    session (one limiter and one set of counters per model across the batch); a plain one when
    not given. `shares`: family name -> what that family's sessions of this batch share
    (`Family.batch_share`), attached to each of its sessions before it runs."""
    from proactive_tui.core.run_record import RunRecordBuilder
    from proactive_tui.core.spec import build_session
    from proactive_tui.llm.gateway import Gateway

    say = warn or (lambda message: None)
    db = None
    if store:
        from proactive_tui.store import StoreError, open_store

        try:
            db = open_store()
        except StoreError as exc:
            say(f"{exc}; these sessions will not be saved")
    gateway = gateway or Gateway()
    gate = asyncio.Semaphore(concurrency)

    async def one(item: PlannedSession) -> None:
        async with gate:
            builder = RunRecordBuilder()
            try:
                session = (build or build_session)(item.spec, item.env, gateway)
                share = (shares or {}).get(item.key.family)
                if share is not None:
                    share.attach(session, item.key)
                if db is not None:
                    from proactive_tui.store import record_events

                    stream = record_events(db, item.spec, session, on_error=say)
                else:
                    stream = session.events()
                async with contextlib.aclosing(stream) as events:
                    async for event in events:
                        builder.apply(event)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # one session's failure, recorded as its outcome
                outcome = SessionOutcome(planned=item, record=builder.record, error=f"{type(exc).__name__}: {exc}")
            else:
                outcome = SessionOutcome(planned=item, record=builder.record)
            result = on_done(outcome)
            if isinstance(result, Awaitable):
                await result

    try:
        await asyncio.gather(*(one(item) for item in planned))
    finally:
        if db is not None:
            db.close()
