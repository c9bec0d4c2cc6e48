"""What every family's batch `eval` shares: choosing the environments by id or prefix, and running
many sessions `concurrency` at a time, each recorded in the session store.

The families' eval commands (`families/*/eval_cli.py`) differ in their settings grid, their rows and
their tables; the selection and the run loop were the same code twice, so a fix to either (a store
that cannot be opened, a session that needs its stream closed) now reaches every family.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

Row = TypeVar("Row")


def shared_option_problem(args: Any) -> str | None:
    """What is wrong with the options every eval command shares, found before anything runs: a
    `--concurrency` below 1 (a semaphore of 0 would wait for ever) or an `--out` that cannot be
    written (found only after the whole batch otherwise), an `--api-base` that is not an http(s)
    URL (every session of the batch would otherwise retry it as a 500)."""
    if getattr(args, "concurrency", 1) < 1:
        return "--concurrency must be at least 1"
    from proactive_tui.llm.keys import api_base_problem

    bad_base = api_base_problem(getattr(args, "api_base", None))
    if bad_base:
        return f"--api-base: {bad_base}"
    from proactive_tui.cli.outpath import unwritable_reason

    problem = unwritable_reason(getattr(args, "out", None))
    return f"--out: {problem}" if problem else None


def select_environments(environments: list[Any], family: str, wanted: list[str],
                        bare_prefix: bool = False) -> tuple[list[Any], list[str]]:
    """`family`'s environments matching any id or id prefix (all of them for none), in id order;
    and the selectors that matched nothing. A prefix matches whole id parts (`proactiveeval/persuasion`
    matches `proactiveeval/persuasion/fair/0`); `bare_prefix` also lets it end mid-part
    (`chronos/car` matches `chronos/car-purchase/positive`)."""
    own = [e for e in environments if e.family == family]
    if not wanted:
        return sorted(own, key=lambda e: e.id), []
    chosen, unmatched = {}, []
    for text in wanted:
        hits = [e for e in own if e.id == text or e.id.startswith(text.rstrip("/") + "/")
                or (bare_prefix and e.id.startswith(text))]
        if not hits:
            unmatched.append(text)
        chosen.update({e.id: e for e in hits})
    return [chosen[k] for k in sorted(chosen)], unmatched


async def run_batch(specs: list[tuple[Any, Any]], concurrency: int, store: bool, err: Any,
                    row_of: Callable[[Any], Row], describe: Callable[[Row], str],
                    build: Callable[[Any, Any, Any], Any] | None = None) -> list[Row]:
    """Run every (environment, spec), `concurrency` at a time, each recorded in the session store
    (unless `store` is off; a store that cannot be opened costs a warning, never the run). Each
    finished session's record becomes `row_of(record)`, announced on `err` as `describe(row)`.
    `build(spec, env, gateway)` replaces `core.spec.build_session` (e.g. reference seats)."""
    import asyncio
    import contextlib

    from rich.text import Text

    from proactive_tui.core.run_record import RunRecordBuilder
    from proactive_tui.core.spec import build_session
    from proactive_tui.llm.gateway import Gateway

    def warn(message: str) -> None:
        err.print(Text(f"warning: {message}", style="yellow"))

    db = None
    if store:
        from proactive_tui.store import StoreError, open_store

        try:
            db = open_store()
        except StoreError as exc:
            warn(f"{exc}; these sessions will not be saved")
    gateway = Gateway()
    gate = asyncio.Semaphore(concurrency)
    rows: list[Row | None] = [None] * len(specs)

    async def one(i: int, env: Any, spec: Any) -> None:
        async with gate:
            session = (build or build_session)(spec, env, gateway)
            builder = RunRecordBuilder()
            if db is not None:
                from proactive_tui.store import record_events

                stream = record_events(db, spec, session, on_error=warn)
            else:
                stream = session.events()
            async with contextlib.aclosing(stream) as events:
                async for event in events:
                    builder.apply(event)
            record = builder.record
            assert record is not None
            row = row_of(record)
            rows[i] = row
            err.print(Text(describe(row), style="dim"))

    try:
        await asyncio.gather(*(one(i, env, spec) for i, (env, spec) in enumerate(specs)))
    finally:
        if db is not None:
            db.close()
    return [r for r in rows if r is not None]
