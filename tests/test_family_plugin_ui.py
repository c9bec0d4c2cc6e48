"""The playground with a plug-in family installed (the test-only `countdown`, through the entry
point group): the picker lists it, Enter opens its setup, ctrl+s starts its session screen, the
turns and the result show, the session is recorded under its family, and History replays it.

Only the model-backed seats are replaced (`ui.session_view.start_session`, which the session
screen's worker calls): everything else is the app's own path.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import DataTable

from plugin_helpers import countdown_plugin  # noqa: F401  (a fixture)
from ui_helpers import wait_for
from proactive_tui.core.spec import build_session
from proactive_tui.store import list_sessions, load_record
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.widgets.message_view import MessageView

ENV = "countdown/three"


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


@pytest.fixture
def scripted_seats(monkeypatch: pytest.MonkeyPatch, countdown_plugin) -> list[Any]:
    """Seat a counting agent (wrong on turn 2) and a scripted user behind the app's session path."""
    from plugin_family.countdown.protocol import counting_agent, replying_user

    started: list[Any] = []

    async def start_session(spec, env, resume_from=None):
        started.append(spec)
        seats = {"agent": counting_agent(env.countdown.start, wrong_at=(2,)), "user": replying_user()}
        return build_session(spec, env, None, seats=seats), seats

    monkeypatch.setattr("proactive_tui.ui.session_view.start_session", start_session)
    return started


def shown_messages(screen) -> list[tuple[str, int, str]]:
    return [(v.role, v.turn, v.body) for v in screen.query(MessageView) if v.state == "done"]


async def test_a_plugin_family_plays_in_the_playground(scripted_seats, countdown_plugin) -> None:
    from plugin_family.countdown.ui.session import CountdownSessionScreen
    from plugin_family.countdown.ui.setup import CountdownSetupScreen
    from proactive_tui.ui.screens.history import HistoryScreen

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        leaves = [node.data.id for node in app.screen.tree.leaves()]
        assert ENV in leaves and "countdown/five" in leaves
        families = [str(node.label) for node in app.screen.tree.root.children]
        assert families[-1].startswith("countdown (")

        await pilot.press("slash", *ENV, "enter")
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CountdownSetupScreen))
        setup = app.screen
        assert setup.query("#model-agent") and setup.query("#model-user") and not setup.query("#model-judge")
        assert setup.query("#max-turns")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, CountdownSessionScreen))
        (spec,) = scripted_seats
        assert spec.env_id == ENV and spec.seats == {"agent": "model", "user": "model"}
        assert spec.settings == {"max_turns": None}

        live = app.screen
        await wait_for(pilot, lambda: live.ended is not None)
        await wait_for(pilot, lambda: not live.workers)  # the recorder closed
        assert live.ended == "reached_zero" and live.errors == []
        messages = shown_messages(live)
        assert [(role, turn) for role, turn, _ in messages] == [
            ("agent", 1), ("user", 1), ("agent", 2), ("user", 2), ("agent", 3), ("user", 3), ("agent", 4)]
        assert [body for role, _, body in messages if role == "agent"] == ["3", "9", "1", "0"]
        assert live.checks_text().splitlines() == [
            "turn 1: expected 3 ✓", "turn 2: expected 2 ✗ said 9", "turn 3: expected 1 ✓", "turn 4: expected 0 ✓"]
        result = live.result_text()
        assert "Correct numbers: 75%" in result and "Reached zero: yes" in result
        assert "Session ended: the agent reached zero" in "\n".join(
            str(w.render()) for w in live.query(".note-end"))

        # recorded in the store under its own family
        (summary,) = list_sessions(app.store)
        assert summary.family == "countdown" and summary.env_id == ENV and summary.status == "finished"
        assert summary.id == live.builder.record.id
        assert summary.headline["turns"] == 4 and summary.headline["correct"] == "75%"
        assert summary.headline["ended"] == "reached_zero"
        assert list_sessions(app.store, family="countdown") == [summary]
        stored = load_record(app.store, summary.id)
        assert stored.section == live.builder.record.section

        # History replays it in the family's own screen
        while type(app.screen).__name__ != "PickerScreen":
            app.pop_screen()
            await pilot.pause()
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        assert app.screen.query_one(DataTable).row_count == 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CountdownSessionScreen))
        replay = app.screen
        await pilot.pause()
        assert replay.replaying and replay.session is None
        assert shown_messages(replay) == messages
        assert replay.checks_text() == live.checks_text() and replay.result_text() == result
        assert replay.ended == "reached_zero" and replay.errors == []
        assert len(list_sessions(app.store)) == 1  # a replay records nothing
