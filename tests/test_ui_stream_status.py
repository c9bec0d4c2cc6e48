"""While a message streams the status line's tokens count up, and a fatal error leaves no
"typing…" behind, on every family's session screen that streams messages.

The fatal-error screens are fed by a stand-in session (the events a real one emits, in order),
so the window between a fatal error and `session_ended`, and a stream that ends or breaks
without `session_ended`, can be held still and looked at; the token count uses the real engine
with a scripted agent that streams seven words and then waits.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from ui_helpers import PE_ENV, fake_spec, scripted_factory, screen_lines, settle, wait_for
from proactive_tui.core.events import ErrorRaised, MessageDelta, MessageStarted
from proactive_tui.core.spec import SessionSpec
from proactive_tui.families.chronos.ui.session import ChronosSessionScreen
from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.widgets.message_view import MessageView

CHRONOS = "chronos"
"""Any Chronos environment will do (the first listed): sample ids change as the samples grow."""


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def line(screen) -> str:
    return screen.status.render().plain


def tokens_shown(screen) -> str:
    found = re.search(r"~?\d+ tokens", line(screen))
    assert found, line(screen)
    return found.group(0)


async def test_tokens_count_up_while_a_message_streams() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(140, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=4, planning=False, live_judging=False)
        app.push_screen(ProactiveEvalSessionScreen(env, spec, scripted_factory(hold_agent_at=1)))
        screen = app.screen
        # The held agent streams "Have you thought about walking to the" (7 chunks), then waits.
        await wait_for(pilot, lambda: any(v.state == "streaming" and v.body.endswith("the")
                                          for v in screen.query(MessageView)))
        assert tokens_shown(screen) == "~7 tokens"
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle(pilot)
        assert not tokens_shown(screen).startswith("~")  # the estimate is gone with the stream


class StandInSession:
    """Emits `events`, then (`then`) hangs, ends the stream, or raises, as a broken session might."""

    def __init__(self, events: list, then: str) -> None:
        self._events = events
        self.then = then
        self.paused = False
        self.auto = True
        self.holding = False
        self.stopped = asyncio.Event()

    def stop(self) -> None:
        self.stopped.set()

    def play(self) -> None: ...
    def pause(self) -> None: ...
    def step(self) -> None: ...

    async def events(self):
        for event in self._events:
            yield event
            await asyncio.sleep(0)
        if self.then == "hang":
            await self.stopped.wait()
        elif self.then == "raise":
            raise RuntimeError("the event stream broke")


def stand_in_factory(role: str, then: str):
    events = [
        MessageStarted(message_id=f"{role}-1", role=role, turn=1, model="stand-in"),
        MessageDelta(message_id=f"{role}-1", text="I was about to"),
        MessageDelta(message_id=f"{role}-1", text=" say"),
        ErrorRaised(seat=None, message="the server went away", fatal=True),
    ]

    async def factory(spec, env, resume_from=None):
        return StandInSession(events, then), {}

    return factory


SCREENS = [
    pytest.param(ProactiveEvalSessionScreen, PE_ENV, "agent", id="proactiveeval"),
    pytest.param(ChronosSessionScreen, CHRONOS, "user", id="chronos"),
]


@pytest.mark.parametrize(("screen_class", "env_id", "role"), SCREENS)
@pytest.mark.parametrize("then", ["hang", "end", "raise"])
async def test_no_typing_after_a_fatal_error(screen_class, env_id: str, role: str, then: str) -> None:
    class Unrecorded(screen_class):
        RECORD = False

    app = ProactiveApp()
    async with app.run_test(size=(140, 40)) as pilot:
        env = app.environments.get(env_id) or next(e for e in app.environments.environments if e.family == env_id)
        spec = SessionSpec(env_id=env.id, settings={"max_turns": 4})
        app.push_screen(Unrecorded(env, spec, stand_in_factory(role, then)))
        screen = app.screen
        await wait_for(pilot, lambda: "the server went away" in screen.errors)
        if then != "hang":
            await wait_for(pilot, lambda: not any(w.is_running for w in app.workers if w.group == "session"))
        # A hanging session keeps its worker busy: then settle on the screen alone.
        await settle(pilot, waiting_for_person=then == "hang")
        text = "\n".join(screen_lines(app))
        assert "typing…" not in text and "typing" not in line(screen)
        assert "stopped by an error" in line(screen) and "~" not in tokens_shown(screen)
        headers = [v.header().plain for v in screen.query(MessageView)]
        assert any("cut off" in h for h in headers), headers  # the half-written message, kept as cut off
        if then == "raise":
            assert any("the event stream broke" in e for e in screen.errors)


@pytest.mark.parametrize("family", ["proactiveeval", "proactivebench", "chronos"])
async def test_waiting_on_a_silent_server_does_not_say_loading_the_model_layer(family: str) -> None:
    """The model layer is loaded by the time a request is out: the status says who is being waited
    for, not "loading the model layer…", however long the server stays silent."""
    from proactive_tui.families.proactivebench.ui.session import ProactiveBenchSessionScreen
    from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply

    screens = {"proactiveeval": ProactiveEvalSessionScreen, "proactivebench": ProactiveBenchSessionScreen,
               "chronos": ChronosSessionScreen}
    settings = {"proactiveeval": dict(max_turns=2, planning=False, live_judging=False)}.get(family, {})
    with FakeOpenAIServer(responder=lambda body: Reply(fault="hang", delay=60)) as server:
        app = ProactiveApp()
        async with app.run_test(size=(140, 40)) as pilot:
            env = app.environments.get(PE_ENV) if family == "proactiveeval" else next(
                e for e in app.environments.environments if e.family == family)
            spec = fake_spec(env.id, server.base_url, **settings)
            app.push_screen(screens[family](env, spec))
            screen = app.screen
            await wait_for(pilot, lambda: len(server.chat_requests()) >= 1)
            await settle(pilot, waiting_for_person=True)
            status = line(screen)
            assert "loading the model layer" not in status and "agent" in status, status
            await pilot.press("x")
            await wait_for(pilot, lambda: screen.ended is not None)
