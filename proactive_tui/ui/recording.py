"""Record a playground session into the session store as it runs (any family's session screen).

    from proactive_tui.ui.recording import recorded

    async with contextlib.aclosing(recorded(self.app, self.spec, self.session)) as events:
        async for event in events:
            ...  # already committed to the store when it arrives here

`recorded` is `session.events()` with each event committed first (store.recorder.record_events).
The store is the app's one connection (`ProactiveApp.store`); when it cannot be opened, or fails
later, a person sees one notification and the session goes on unrecorded.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

from proactive_tui.textsafe import plain


def recorded(app: Any, spec: Any, session: Any) -> AsyncIterator[Any]:
    """The session's events, recorded in the app's store when it has one (else just the events)."""
    store = getattr(app, "store", None)
    if store is None:
        return session.events()
    from proactive_tui.store.recorder import record_events

    def on_error(message: str) -> None:
        app.notify(plain(message)[:400], title="Session not saved", severity="warning", timeout=12, markup=False)

    return record_events(store, spec, session, on_error=on_error)
