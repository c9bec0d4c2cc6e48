"""The Chronos session screens: setup, watching a scripted session, fast-forward, playing the user,
and snapshots of the timeline and task panels."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from chronos_helpers import chronos_env
from ui_helpers import settle, wait_for
from proactive_tui.core.spec import SessionSpec
from proactive_tui.core.participants import HumanParticipant
from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession, ChronosSettings
from proactive_tui.families.chronos.testing import OracleAgent, ScriptedPersona
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.families.chronos.ui.session import ChronosSessionScreen
from proactive_tui.families.chronos.ui.setup import ChronosSetupScreen
from proactive_tui.ui.widgets.compose_box import ComposeBox
from proactive_tui.ui.widgets.message_view import MessageView
from proactive_tui.families.chronos.ui.observation_note import ObservationNote
from proactive_tui.families.chronos.ui.task_panel import TaskPanel
from proactive_tui.families.chronos.ui.timeline_panel import TimelinePanel
from proactive_tui.families.chronos.ui.timeline_turns import TimelineTurns
from proactive_tui.families.chronos.ui.timeline_verdict import TimelineVerdict
from proactive_tui.families.chronos.ui.turn_tag import TurnTag

POSITIVE = "chronos/car-purchase-positive"
SHIFT = "chronos/car-purchase-shift-positive"


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def oracle_factory(human: str | None = None):
    """Protocol-following seats (OracleAgent, ScriptedPersona); `human` seats a person instead."""

    async def factory(spec: SessionSpec, env):
        seats = {"agent": OracleAgent(), "user": ScriptedPersona()}
        if human:
            seats[human] = HumanParticipant()
        session = ChronosSession(env, ChronosSeats(**seats), ChronosSettings(**spec.settings))
        return session, seats

    return factory


def spec(env_id: str, human: str | None = None, **settings) -> SessionSpec:
    seats = {"agent": "model", "user": "model"}
    if human:
        seats[human] = "human"
    return SessionSpec(env_id=env_id, seats=seats, settings=settings)


def shown(widget) -> str:
    return widget.render_text().plain


async def test_pick_setup_watch_to_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    app = ProactiveApp()
    started = []
    original = app.start_session

    def start(env, chosen):  # the app's own path, with scripted seats behind the screen
        started.append(chosen)
        app._remember_models(chosen)
        app.push_screen(ChronosSessionScreen(env, chosen, oracle_factory()))

    monkeypatch.setattr(app, "start_session", start)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("slash", *POSITIVE, "enter")
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChronosSetupScreen))
        setup = app.screen
        assert not setup.query("#model-judge")
        setup.query_one("#max-turns", Input).value = "12"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, ChronosSessionScreen))
        assert started[0].settings == {"max_turns": 12, "monitor_delay_s": 1.0}
        assert started[0].seats == {"agent": "model", "user": "model"}
        screen = app.screen
        # the auto monitor waits 1 s per scan; fast-forward keeps the test quick
        for _ in range(400):
            if screen.ended is not None:
                break
            if screen.session is not None and screen.session.user_dormant:
                screen.action_fast_forward()
            await pilot.pause(0.05)
        assert screen.ended == "task_completed"
        record = screen.builder.record.section
        verdict = screen.query_one(TimelineVerdict).outcome
        assert verdict == record.outcome and verdict.success and verdict.action_accuracy == 1.0
        assert "SUCCESS" in str(screen.query_one(TimelineVerdict).render())
        assert "action 100% · status 100%" in str(screen.query_one(TimelineVerdict).render())
        turns = screen.query_one(TimelineTurns)
        assert turns.row_count == len(record.turns) and turns.all_correct
        tags = list(screen.query(TurnTag))
        assert [t.outcome.action for t in tags] == [t.action for t in record.turns]
        assert all("action ✓ status ✓" in shown(t) for t in tags)
        last_task = [t for t in record.turns if t.reply][-1].reply.task_description
        assert screen.query_one(TaskPanel).current == last_task
        panel = screen.query_one(TimelinePanel)
        assert panel.view == record.view and panel.reminders == record.reminders
        current = record.view.states[record.view.current]
        assert f"▶ {current.time[5:].replace('T', ' ')} ✓ " in shown(panel)  # watching: the spoiler is shown
        assert len(screen.query(ObservationNote)) == len(record.observations)
        agent_msgs = [v for v in screen.query(MessageView) if v.role == "agent"]
        assert agent_msgs and not agent_msgs[0].body.startswith("{")  # the response_text, not the JSON


async def test_fast_forward_with_the_manual_monitor() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = chronos_env("car-purchase-negative")
        app.push_screen(ChronosSessionScreen(env, spec(env.id, monitor_delay_s=None), oracle_factory()))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: screen.session is not None and screen.session.user_dormant)
        await pilot.pause(0.2)
        panel = screen.query_one(TimelinePanel)
        assert panel.dormant and panel.view.current == 0  # manual: nothing moves on its own
        clock = panel.view.clock
        assert screen.check_action("fast_forward", ())
        await pilot.press("f")
        await wait_for(pilot, lambda: panel.view.current == 1 or screen.ended is not None)
        assert panel.view.clock != clock
        assert any(o.event.source == "internal_trigger" for o in screen.query(ObservationNote))
        for _ in range(200):
            if screen.ended is not None:
                break
            await pilot.press("f")
            await pilot.pause(0.05)
        assert screen.ended == "timeline_exhausted"
        assert screen.query_one(TimelineVerdict).outcome.success


async def test_play_as_user_dormant_and_shift_keys_reach_the_engine() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = chronos_env("car-purchase-shift-positive")
        app.push_screen(ChronosSessionScreen(env, spec(env.id, human="user", monitor_delay_s=None), oracle_factory("user")))
        await pilot.pause()
        screen = app.screen
        box = screen.query_one(ComposeBox)
        assert "You are" in screen.query_one("#context-card").plain_text()
        await wait_for(pilot, lambda: screen.query_one(TimelinePanel).view is not None)
        hidden = shown(screen.query_one(TimelinePanel))  # spoilers hidden for a player
        assert "not visible yet" in hidden and "✓" not in hidden and "is hidden" in hidden
        session = None

        async def answer(text: str) -> None:
            await wait_for(pilot, lambda: screen.awaiting == "user" or screen.ended is not None)
            box.focus()
            await pilot.press(*text, "enter")
            await pilot.pause()

        async def key(k: str) -> None:
            await wait_for(pilot, lambda: screen.awaiting == "user" or screen.ended is not None)
            screen.query_one("#transcript").focus()  # the compose box would take the letter
            await pilot.press(k)
            await pilot.pause()

        def waiting_or_dormant() -> bool:
            return screen.awaiting == "user" or (screen.session is not None and screen.session.user_dormant)

        async def until_asked() -> None:
            """Fast-forward (manual monitor) until the user is asked again."""
            for _ in range(300):
                if screen.awaiting == "user" or screen.ended is not None:
                    return
                if screen.session is not None and screen.session.user_dormant:
                    await pilot.press("f")
                await pilot.pause(0.05)

        # give the details the brief asks for, until the agent sets a reminder (the user goes dormant)
        for _ in range(6):
            await wait_for(pilot, waiting_or_dormant)
            if screen.session.user_dormant:
                break
            revealed = screen.session.current_brief.reveal
            await answer("; ".join(f"{c.key}: {c.value}" for c in revealed) or "That's all.")
        session = screen.session
        assert session.state.reminder_active
        screen.query_one("#transcript").focus()
        await until_asked()  # the offer that fits: this scenario's user now changes plans
        assert session.current_brief.situation == "shift"
        await key("v")
        await wait_for(pilot, lambda: screen.builder.record.section.shift is not None)
        assert screen.builder.record.section.shift.utterance == env.scenario.intention_shift.utterance
        assert any("intention shift" in str(n.render()) for n in screen.query(".note-shift"))
        await until_asked()  # the shifted offer that fits; stay dormant instead of confirming
        assert session.current_brief.situation == "offer_meets" and not session.user_dormant
        await key("d")
        await wait_for(pilot, lambda: session.user_dormant or screen.ended is not None)
        assert screen.builder.record.section.user_dormant
        screen.action_stop()
        await wait_for(pilot, lambda: screen.ended is not None)


async def test_play_as_agent_with_the_form() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = chronos_env("car-purchase-positive")
        app.push_screen(ChronosSessionScreen(env, spec(env.id, human="agent"), oracle_factory("agent")))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: screen.awaiting == "agent")
        form = screen.query_one("#action-form")
        form.query_one("#form-action", Select).value = "INFO_RETRIEVAL"
        form.query_one("#form-text", Input).value = "Let me look."
        form.query_one("#form-intention", Input).value = "buy a family car"
        await pilot.click("#form-send")
        await wait_for(pilot, lambda: screen.query_one(TimelineTurns).row_count == 1)
        (outcome,) = screen.builder.record.section.turns
        assert outcome.action == "INFO_RETRIEVAL" and outcome.action_correct
        assert screen.query_one(TaskPanel).current.intention == "buy a family car"
        screen.query_one("#transcript").focus()
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.ended is not None)


async def test_pause_and_step_hold_before_agent_turns() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = chronos_env("car-purchase-negative")
        app.push_screen(ChronosSessionScreen(env, spec(env.id, monitor_delay_s=None), oracle_factory()))
        screen = app.screen
        await wait_for(pilot, lambda: screen.session is not None and screen.session.user_dormant)
        turns = screen.query_one(TimelineTurns)
        held = turns.row_count
        await pilot.press("p", "f")  # pause, then let time pass: the trigger arrives, the agent turn holds
        await wait_for(pilot, lambda: screen.query_one(TimelinePanel).view.current == 1)
        await pilot.pause(0.3)
        assert turns.row_count == held and screen.session.paused
        await pilot.press("s")
        await wait_for(pilot, lambda: turns.row_count == held + 1)
        await pilot.pause(0.2)
        assert turns.row_count == held + 1 and screen.ended is None
        await pilot.press("a", "x")
        await wait_for(pilot, lambda: screen.ended is not None)


async def test_palette_lists_fast_forward_only_while_dormant() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = chronos_env("car-purchase-negative")
        app.push_screen(ChronosSessionScreen(env, spec(env.id, monitor_delay_s=None), oracle_factory()))
        await pilot.pause()
        screen = app.screen
        titles = lambda: [t for t, _, _ in screen.palette_commands()]  # noqa: E731
        await wait_for(pilot, lambda: screen.session is not None and screen.session.user_dormant)
        assert "Timeline: fast-forward" in titles()
        dict((t, cb) for t, _, cb in screen.palette_commands())["Timeline: fast-forward"]()
        await wait_for(pilot, lambda: screen.query_one(TimelinePanel).view.current == 1 or screen.ended is not None)
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.ended is not None)
        assert "Timeline: fast-forward" not in titles()


# --- snapshots ---------------------------------------------------------------------------------

@pytest.fixture
def no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    from proactive_tui.ui.widgets.status_line import StatusLine

    monkeypatch.setattr(StatusLine, "clock", staticmethod(lambda: 1000.0))


def finished_app(env_name: str):
    app = ProactiveApp()

    async def run_before(pilot) -> None:
        env = chronos_env(env_name)
        app.push_screen(ChronosSessionScreen(env, spec(env.id, monitor_delay_s=0.0), oracle_factory()))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: screen.ended is not None)
        # the session's worker done and every layout landed (a loaded machine lags a few refreshes)
        await settle(pilot, screen)
        # then the scroll positions: the transcript at its end, the side panels at the top
        screen.transcript.scroll_end(animate=False, immediate=True)
        screen.query_one("#timeline-side").scroll_home(animate=False, immediate=True)
        await settle(pilot, screen)  # the screenshot sees the scrolled screen, not one in between

    return app, run_before


def test_snapshot_finished_120x40(snap_compare, no_clock) -> None:
    app, run_before = finished_app("car-purchase-shift-positive")
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_finished_80x24(snap_compare, no_clock) -> None:
    app, run_before = finished_app("car-purchase-positive")
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_snapshot_setup(snap_compare) -> None:
    app = ProactiveApp()

    async def run_before(pilot) -> None:
        app.open_setup(chronos_env("car-purchase-positive"))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 34), run_before=run_before)


async def test_a_chronos_session_in_the_playground_is_recorded() -> None:
    from proactive_tui.store import list_sessions

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(POSITIVE)
        app.push_screen(ChronosSessionScreen(env, spec(POSITIVE), oracle_factory()))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: screen.ended is not None)
        (summary,) = list_sessions(app.store)
        assert summary.env_id == POSITIVE and summary.family == "chronos" and summary.status == "finished"
        assert summary.headline["success"] == "yes"
