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


def open_fork_modal(app: Any, record: Any, session_factory: Any = None, focused: tuple[int, str] | None = None) -> None:
    """The fork modal on a stored session's record (a session screen's `F`, History's `F`); the
    branch it makes runs in a new screen of the family, seated by `session_factory` if given.
    `focused`: the (turn, seat) to preselect (else the last reply)."""
    from proactive_tui.core import registry
    from proactive_tui.ui.screens.fork_modal import ForkModal

    family = registry.get(record.family)
    steps = family.fork.steps(record) if family.fork is not None else []
    if not steps:
        app.notify("This session has no complete reply to fork from", timeout=5)
        return
    selected = next((i for i, s in enumerate(steps) if (s.turn, s.seat) == focused), len(steps) - 1)
    store, session_id = app.store, record.id

    def started(plan: Any) -> None:
        if plan is not None:
            screen = family.screen("session_screen")
            app.push_screen(screen(plan.env, plan.spec, session_factory, fork=plan))

    app.push_screen(ForkModal(session_id, steps, lambda request: request_plan(store, session_id, request),
                              selected=selected, models={seat: info.label for seat, info in record.seats.items()}),
                    started)


def open_branches(app: Any, session_id: str, replay_screen: Any = None) -> None:
    """The branch switcher on a session's fork tree; the session picked opens as History opens
    one (`replay_screen`: History's hook for which screen replays a family)."""
    from proactive_tui.store import StoreError
    from proactive_tui.store.queries import session_tree
    from proactive_tui.textsafe import plain
    from proactive_tui.ui.screens.branches import BranchSwitcher

    if app.store is None:
        return
    try:
        root = session_tree(app.store, session_id)
    except StoreError as exc:
        app.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
        return

    def chosen(other: str | None) -> None:
        if other:
            from proactive_tui.ui.screens.history import open_stored

            open_stored(app, other, replay_screen=replay_screen)

    app.push_screen(BranchSwitcher(root, session_id), chosen)
