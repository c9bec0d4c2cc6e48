"""The status line says what is happening now: paused only while the session holds between turns,
a running step as running, end reasons in words, and nothing stale once the session stopped."""

from __future__ import annotations

import pytest

from ui_helpers import PE_ENV, fake_spec, scripted_factory, settle, wait_for
from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.widgets.message_view import MessageView


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def paused_from_the_start(factory):
    """The session starts held at its first turn gate (as if p was pressed at once), so the test
    does not race the scripted seats."""

    async def start(spec, env, **kwargs):
        session, seats = await factory(spec, env, **kwargs)
        session.pause()
        return session, seats

    return start


def line(screen) -> str:
    return screen.status.render().plain


async def test_pause_step_stop_read_truthfully() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=6, planning=False)
        app.push_screen(ProactiveEvalSessionScreen(env, spec, paused_from_the_start(scripted_factory(hold_agent_at=2))))
        screen = app.screen
        await wait_for(pilot, lambda: screen.session is not None and screen.session.holding)
        screen.status.refresh_line()
        assert "paused before turn 1" in line(screen)
        await pilot.press("s")  # turn 1 runs, then the session holds before turn 2
        await wait_for(pilot, lambda: screen.session.holding and screen.status.turn >= 1)
        await pilot.press("s")  # turn 2: the agent streams, then hangs mid-message
        await wait_for(pilot, lambda: any(v.state == "streaming" and v.turn == 2 and v.body
                                          for v in screen.query(MessageView)))
        screen.status.refresh_line()
        text = line(screen)
        assert "paused" not in text.replace("pauses after turn 2", "")
        assert "pauses after turn 2" in text
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle(pilot)
        text = line(screen)
        assert "finished: stopped" in text and "typing" not in text
        headers = [v.header().plain for v in screen.query(MessageView)]
        assert not any("typing…" in h or "waiting for you" in h for h in headers)
        assert any("cut off" in h for h in headers)  # the half-written message, as the record has it


async def test_end_reason_in_words() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=6)
        app.push_screen(ProactiveEvalSessionScreen(env, spec, scripted_factory(reach_at=2)))
        screen = app.screen
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "target_reached"
        text = line(screen)
        assert "finished: the target was reached" in text and "target_reached" not in text
