"""Opening a demo (`services.demo`) in the family's own session screen, recording nothing.

The screen is a subclass of the family's session screen with `RECORD = False`, so a demo adds no
row to the History, and so does its restart (the subclass survives `type(self)(...)`). Its
session factory builds a new `RecordedSession` each time it is called: the screen's a/s/p keys
pause, step and resume it as they do a live session.
"""

from __future__ import annotations

from typing import Any

from proactive_tui.services.demo import DemoPlan, RecordedSession, describe

_classes: dict[type, type] = {}


class DemoScreen:
    """Mixed in before a family's session screen: records nothing, and keeps the demo's header
    when the recording's start names a branch or a re-run (which the screen puts in the header)."""

    RECORD = False

    def _say_branch(self, event: Any) -> None:
        app: Any = self.app  # type: ignore[attr-defined]
        before = app.sub_title
        super()._say_branch(event)  # type: ignore[misc]
        header = getattr(self.session_factory, "demo_header", "")  # type: ignore[attr-defined]
        if header and app.sub_title != before:
            app.sub_title = self._header = f"{header} · {app.sub_title}"  # type: ignore[attr-defined]


def demo_class(screen_class: type) -> type:
    """The family's session screen, recording nothing (one subclass per screen class)."""
    if screen_class not in _classes:
        _classes[screen_class] = type(f"Demo{screen_class.__name__}", (DemoScreen, screen_class),
                                      {"__doc__": "A demo: " + (screen_class.__doc__ or "")})
    return _classes[screen_class]


def demo_screen(app: Any, plan: DemoPlan, speed: float = 1.0, step: bool = False) -> Any:
    """The session screen that plays `plan` at `speed` (paused when `step`)."""
    from proactive_tui.core import registry

    header = describe(plan.session_id, speed, step)

    async def factory(spec: Any, env: Any, **_: Any) -> tuple[Any, dict[str, Any]]:
        app.sub_title = header  # after the screen's own on_mount header
        return RecordedSession(plan.events, speed=speed, step=step), {}

    factory.demo_header = header  # type: ignore[attr-defined]  # read by DemoScreen, kept by a restart
    screen_class = demo_class(registry.get(plan.family).screen("session_screen"))
    return screen_class(plan.env, plan.spec, factory)


def open_demo(app: Any, session_id: str, speed: float = 1.0, step: bool = False) -> bool:
    """Push the demo of a stored session; False (with a notification saying why) if it cannot play."""
    from proactive_tui.services.demo import DemoError, demo_plan
    from proactive_tui.textsafe import plain

    try:
        plan = demo_plan(app.store, session_id)
    except DemoError as exc:
        app.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
        return False
    app.push_screen(demo_screen(app, plan, speed, step))
    return True
