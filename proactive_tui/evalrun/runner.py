"""Running planned sessions: the one seam between the batch command and how sessions are run.

`run_planned` runs a list of planned sessions `concurrency` at a time and reports each one through
`on_done` as it ends (finished or failed; one cut off by a stop is not reported), in this process
or on worker processes (`evalrun.workers`). It writes no folder, report or display: each end
comes to `on_done` with its folder file already rendered (`folder.EndedSession`, made where the
session ran), the batch command writes it, and hands in the gateway, which carries the per-model
limits (`llm.limits`) and the per-model counters a progress display reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, ConfigDict

from proactive_tui.core.spec import SessionSpec
from proactive_tui.evalrun.plan import SessionKey
from proactive_tui.evalrun.spacing import StartSpacing


class PlannedSession(BaseModel):
    """A key with what it takes to run it: the environment, the session spec, the seed."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    key: SessionKey
    seed: int
    env: Any
    """The environment (each family's own model)."""
    spec: SessionSpec
    """Its roles carry the seed to every model seat."""


Build = Callable[[Any, Any, Any], Any]
"""(spec, env, gateway) -> session; `core.spec.build_session` unless replaced (scripted seats)."""


async def run_one(item: PlannedSession, build: Build | None, gateway: Any, shares: dict[str, Any] | None,
                  db: Any, say: Callable[[str], None]) -> Any:
    """Run one planned session to its end and return it as the folder keeps it
    (`folder.EndedSession`, its file rendered here). An exception in the session is its outcome;
    cancelling it raises. `db`: the store its events go to (None: not stored); in a worker
    process, the parent's store seen through the pipe (`workers.ForwardStore`). Shared by the
    in-process runner and the worker processes, so both run a session the same way."""
    from proactive_tui.core.run_record import RunRecordBuilder
    from proactive_tui.core.spec import build_session
    from proactive_tui.evalrun.folder import render_ended

    builder = RunRecordBuilder()
    error = None
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
        error = f"{type(exc).__name__}: {exc}"
    return render_ended(item.key, item.seed, builder.record, error)


async def run_planned(planned: list[PlannedSession], concurrency: int, on_done: Callable[[Any], Any],
                      store: bool = True, warn: Callable[[str], None] | None = None,
                      build: Build | None = None, gateway: Any = None,
                      shares: dict[str, Any] | None = None, pool: Any = None) -> None:
    """Run every planned session, at most `concurrency` at once, each recorded in the session store
    unless `store` is off (a store that cannot be opened costs a warning, never the run), and
    report each one's end to `on_done` as a `folder.EndedSession`. An exception in one session is
    that session's outcome, not the batch's. Cancelling (Ctrl-C, SIGTERM) stops the sessions
    running; those never reach `on_done`. `gateway` is shared by every session (one limiter and
    one set of counters per model across the batch); a plain one when not given. `shares`: family
    name -> what that family's sessions of this batch share (`BatchPart.share`), attached to
    each of its sessions before it runs. `pool`: a started `workers.WorkerPool` (made with these
    same sessions, build and shares) runs the sessions in its processes instead; this process then
    only writes the store and the folder, and `gateway` only holds the counters the workers report
    and the limits they ask it for."""
    from proactive_tui.llm.gateway import Gateway

    say = warn or (lambda message: None)
    # What exists now (litellm, the planned sessions) outlives the batch: out of the collector's
    # reach while it runs, a full collection scans only what the sessions make. Left in, one such
    # collection walked litellm's whole heap and stalled every session (or, with workers, the
    # writer that forwards their limiter slots) for 0.3-0.45 s. Unfrozen after, unless something
    # (the app) had frozen before.
    frozen_before = gc.get_freeze_count() > 0
    gc.freeze()
    db = None
    try:
        if store:
            from proactive_tui.store import StoreError, open_store

            try:
                db = open_store()
            except StoreError as exc:
                say(f"{exc}; these sessions will not be saved")
        gateway = gateway or Gateway()
        if pool is not None:
            await pool.run(on_done, db=db, warn=say, gateway=gateway)
            return
        gate = asyncio.Semaphore(concurrency)
        spacing = StartSpacing()

        async def one(item: PlannedSession) -> None:
            async with gate:
                await spacing.wait_turn()  # sessions that start together start apart (evalrun.spacing)
                ended = await run_one(item, build, gateway, shares, db, say)
                result = on_done(ended)
                if isinstance(result, Awaitable):
                    await result

        await asyncio.gather(*(one(item) for item in planned))
    finally:
        if not frozen_before:
            gc.unfreeze()
        if db is not None:
            db.close()
