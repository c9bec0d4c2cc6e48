"""Shared pieces for the playground's pilot and snapshot tests."""

from __future__ import annotations

import asyncio
from typing import Any

from engine_helpers import scripted_agent, scripted_judge, scripted_user
from proactive_tui.core.spec import SessionSpec, build_session
from proactive_tui.core.participants import HumanParticipant, ScriptedParticipant
from proactive_tui.llm.settings import ModelSettings, RoleSettings

PE_ENV = "proactiveeval/persuasion/fair/0"


def fake_spec(env_id: str, base_url: str, **settings: Any) -> SessionSpec:
    ms = ModelSettings(model="openai/fake", api_base=base_url)
    return SessionSpec(env_id=env_id, roles=RoleSettings(agent=ms, user=ms, judge=ms), settings=settings)


def scripted_factory(reach_at: int | None = None, human: str | None = None, hold_agent_at: int | None = None,
                     delay: float = 0.0):
    """A session_factory seating scripted participants (deterministic screens)."""

    async def factory(spec: SessionSpec, env: Any, resume_from: Any = None):
        agent = scripted_agent(delay=delay)
        if hold_agent_at is not None:
            agent = HoldingParticipant(hold_agent_at)
        seats = {"agent": agent, "user": scripted_user(delay=delay), "judge": scripted_judge(reach_at)}
        if human:
            seats[human] = HumanParticipant()
        return build_session(spec, env, gateway=None, seats=seats, resume_from=resume_from), seats

    return factory


class HoldingParticipant(ScriptedParticipant):
    """Streams a few words at turn `hold_at`, then waits forever: a frozen mid-stream screen."""

    def __init__(self, hold_at: int) -> None:
        super().__init__(lambda r: f"agent says turn {r.turn}", label="scripted-agent")
        self.hold_at = hold_at
        self.structured = lambda req, schema: __import__("engine_helpers").scripted_agent().structured(req, schema)

    async def reply(self, request):
        if request.turn != self.hold_at:
            return await super().reply(request)
        for k, word in enumerate("Have you thought about walking to the".split()):
            request.on_delta(word if k == 0 else " " + word)
        await asyncio.Event().wait()


async def wait_for(pilot, predicate, timeout: float = 300.0) -> None:
    """Pause until `predicate()` holds. `timeout` (in pauses of 0.05 s, so it stretches with a
    loaded machine) is only a hang guard, far above what any scripted screen needs: no timing
    assertion."""
    waited = 0.0
    while not predicate():
        await pilot.pause(0.05)
        waited += 0.05
        if waited > timeout:
            raise AssertionError("condition never reached (hang guard)")


def _scroll_state(screen) -> tuple:
    """Scroll offsets, maxima and virtual/region sizes of every scrollable widget on `screen`."""
    widgets = [screen, *screen.query("*")]
    return tuple(
        (id(w), w.scroll_x, w.scroll_y, w.max_scroll_x, w.max_scroll_y, tuple(w.virtual_size), tuple(w.size))
        for w in widgets if w.is_scrollable
    )


def _busy_workers(screen) -> list:
    """The screen's workers (the session's among them) that are pending or running."""
    return [w for w in screen.app.workers
            if not w.is_finished and (w.node is screen or screen in getattr(w.node, "ancestors", ()))]


async def settle(pilot, screen=None, stable_rounds: int = 3, max_rounds: int = 3000,
                 waiting_for_person: bool = False) -> None:
    """Wait until `screen` (default: the active one) has settled, before a snapshot is taken.

    Settled: the screen's workers (the session's) have finished, scheduled animations are done,
    and the scroll position, maximum scroll and virtual size of every scrollable widget are
    unchanged across `stable_rounds` consecutive `pilot.pause()` rounds (layout and the
    `call_after_refresh` scrolls land a refresh or two after the content changed; on a loaded
    machine, later). `waiting_for_person`: the session waits for a person, so its worker stays
    busy; settle on the screen alone. `max_rounds` only guards against a hang (each round is at least one idle
    wait, so the bound grows with the machine's slowness); it is no timing assertion.
    """
    screen = screen or pilot.app.screen
    previous = None
    stable = 0
    for _ in range(max_rounds):
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        state = _scroll_state(screen)
        if (waiting_for_person or not _busy_workers(screen)) and state == previous:
            stable += 1
            if stable >= stable_rounds:
                return
        else:
            stable = 0
        previous = state
    raise AssertionError(f"the screen never settled (still busy: {_busy_workers(screen)})")


async def settle_playing(pilot, stable_rounds: int = 3, max_rounds: int = 3000) -> None:
    """`settle` for a screen whose session waits for a person (its worker never finishes)."""
    await settle(pilot, stable_rounds=stable_rounds, max_rounds=max_rounds, waiting_for_person=True)


def screen_lines(app) -> list[str]:
    """The whole screen as drawn now (modal backgrounds included), one string per row, each as wide
    as the screen: the render `App.export_screenshot` turns into SVG, exported as plain text, so a
    test reads what a person would see."""
    import io

    from rich.console import Console

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    lines = console.export_text(styles=False).split("\n")
    return [line.ljust(width) for line in lines[:height]]


async def history_screen(app, pilot):
    """History pushed over the current screen, its table filled and a row highlighted."""
    from proactive_tui.ui.screens.history import HistoryScreen

    app.push_screen(HistoryScreen())
    await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.current is not None)
    await settle(pilot, app.screen)
    return app.screen


# -- keys that arrive together (a loaded machine) ---------------------------------------------

def key_burst(app, *keys: str) -> None:
    """Post every key before the app handles any: what a terminal delivers when the app was busy
    (a loaded machine) while a person typed. Pilot's `press` waits for each key to be handled,
    which hides the bug: the app routed each key by the focus of the moment, and `/` (or Enter in
    the filter) moved the focus only after the keys behind it had gone to the old widget."""
    from textual import events

    chars = {"slash": "/", "enter": "\r", "down": None, "escape": "\x1b"}
    for key in keys:
        app.post_message(events.Key(key, chars.get(key, key)))


async def burst_then_settle(pilot, *keys: str) -> None:
    key_burst(pilot.app, *keys)
    await settle(pilot, pilot.app.screen_stack[0])
