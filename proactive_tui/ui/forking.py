"""Forking from the playground: a ForkRequest (what a person picked in the fork modal) as a checked
`core.fork.ForkPlan` read from the app's store, the same way `sessions fork` makes one."""

from __future__ import annotations

from typing import Any

from proactive_tui.core.fork import ForkChange, ForkPoint, branch_spec, check_fork


def request_plan(store: Any, session_id: str, request: Any) -> Any:
    """The plan for `request` (a `ui.screens.fork_modal.ForkRequest`); ForkError or StoreError
    with the reason when it cannot be made (a running session, a bad edit, no store)."""
    from proactive_tui.store import StoreError
    from proactive_tui.store.queries import fork_plan, stored_spec

    if store is None:
        raise StoreError("the session history is not available, and a branch reads its first turns from there")
    models = {request.seat: request.model} if request.model else {}
    spec, changed = branch_spec(stored_spec(store, session_id), models, request.temperature, request.seat)
    change = ForkChange(text=request.text, instruction=request.instruction, temperature=request.temperature)
    plan = fork_plan(store, session_id, ForkPoint(turn=request.turn, seat=request.seat), change, spec=spec,
                     changed_seats=changed)
    check_fork(plan)
    return plan
