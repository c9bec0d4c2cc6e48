"""The playground's session flow, driven like a person would, against the fake OpenAI server."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input

from test_run_command import judge_aware_responder
from ui_helpers import PE_ENV, fake_spec, scripted_factory, wait_for
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen
from proactive_tui.families.proactiveeval.ui.setup import ProactiveEvalSetupScreen as SetupScreen
from proactive_tui.families.proactiveeval.ui.checklist import SubTargetChecklist
from proactive_tui.ui.widgets.compose_box import ComposeBox
from proactive_tui.families.proactiveeval.ui.final_scores import FinalScores
from proactive_tui.ui.widgets.message_view import MessageView
from proactive_tui.families.proactiveeval.ui.plan_panel import PlanPanel
from proactive_tui.families.proactiveeval.ui.score_trend import ScoreTrend
from proactive_tui.families.proactiveeval.ui.turn_checks import TurnChecks


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


async def test_pick_setup_watch_to_the_end() -> None:
    with FakeOpenAIServer(responder=judge_aware_responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("slash", *PE_ENV, "enter")  # filter to the one environment, back to the tree
            await pilot.pause()
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen))
            setup = app.screen
            for role in ("agent", "user", "judge"):
                setup.query_one(f"#model-{role}", Input).value = "openai/fake-model"
            setup.query_one("#api-base", Input).value = server.base_url
            setup.query_one("#max-turns", Input).value = "4"
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveEvalSessionScreen))
            screen = app.screen
            await wait_for(pilot, lambda: screen.ended is not None)
            assert screen.ended == "target_reached"
            # the panels hold exactly the judge's values, attributed to the judge model
            assert screen.query_one(PlanPanel).score == 6
            final = screen.query_one(FinalScores).score
            assert final.overall == 7 and final.judge_model == "openai/fake-model"
            checks = screen.query_one(TurnChecks)
            assert checks.row_count == 2 and checks.border_subtitle == "judge: openai/fake-model"
            assert screen.query_one(SubTargetChecklist).done == {1, 2}
            assert screen.query_one(ScoreTrend).points[-1] == 7
            messages = [v for v in screen.query(MessageView) if v.state == "done"]
            assert [m.role for m in messages] == ["agent", "user", "agent", "user"]
            assert "openai/fake-model" in app.config.recent_models


async def test_stop_mid_stream_keeps_partial_text() -> None:
    with FakeOpenAIServer(responder=judge_aware_responder, chunk_delay=0.15) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            env = app.environments.get(PE_ENV)
            app.start_session(env, fake_spec(PE_ENV, server.base_url, planning=False))
            screen = app.screen
            await wait_for(pilot, lambda: any(v.body.strip() for v in screen.query(MessageView)))
            await pilot.press("x")
            await wait_for(pilot, lambda: screen.ended is not None)
            assert screen.ended == "cancelled"
            (view,) = list(screen.query(MessageView))
            assert view.state == "partial" and view.body and "talk?" not in view.body
            assert screen.builder.record.messages[0].partial
            assert screen.query_one(FinalScores).score is None  # plain stop: nothing scored, shows "-"


async def test_play_as_user_typed_text_is_judged() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=2, planning=False)
        spec.seats["user"] = "human"
        app.push_screen(ProactiveEvalSessionScreen(env, spec, scripted_factory(human="user")))
        await pilot.pause()
        screen = app.screen
        box = screen.query_one(ComposeBox)
        await wait_for(pilot, lambda: not box.disabled)
        assert "You are" in screen.query_one("#context-card").plain_text()
        box.focus()
        await pilot.press(*"I walk a bit", "ctrl+j", *"already", "enter")
        await wait_for(pilot, lambda: screen.query_one(TurnChecks).row_count == 1)
        mine = [v for v in screen.query(MessageView) if v.role == "user"][0]
        assert mine.body == "I walk a bit\nalready" and mine.speaker == "you"
        await wait_for(pilot, lambda: not box.disabled)
        await pilot.press("ctrl+d")  # end the conversation as the user
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "user_stopped"
        assert screen.builder.record.human_seats == ["user"]


async def test_palette_commands_run() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=3)
        app.push_screen(ProactiveEvalSessionScreen(env, spec, scripted_factory(hold_agent_at=2)))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: any(v.turn == 2 and v.body for v in screen.query(MessageView)))
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"stop and score")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "cancelled"
        assert screen.query_one(FinalScores).score is not None  # stop and score asked the judge


async def test_pause_and_step_controls() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        app.push_screen(ProactiveEvalSessionScreen(env, fake_spec(PE_ENV, "http://unused", max_turns=3, planning=False), scripted_factory(delay=0.2)))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: screen.session is not None)
        await pilot.press("p")
        await wait_for(pilot, lambda: screen.query_one(TurnChecks).row_count >= 1)
        await pilot.pause(0.3)
        turns = {v.turn for v in screen.query(MessageView)}
        assert screen.ended is None and max(turns) <= 2
        await pilot.press("a")
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "max_turns"


async def test_model_output_markup_and_escapes_render_literally() -> None:
    evil = "[bold]x[/] [@click=app.quit]click[/] \x1b]0;pwned\x07\x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07done"

    def responder(body):
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
        return judge_aware_responder(body) if name else evil

    with FakeOpenAIServer(responder=responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            env = app.environments.get(PE_ENV)
            app.start_session(env, fake_spec(PE_ENV, server.base_url, max_turns=1, planning=False))
            screen = app.screen
            await wait_for(pilot, lambda: screen.ended is not None)
            view = [v for v in screen.query(MessageView) if v.role == "agent"][0]
            assert view.body == "[bold]x[/] [@click=app.quit]click[/] redclick".replace("click", "click", 1).replace("redclick", "red done")
            assert "\x1b" not in view.body
            rendered = str(view.render())
            assert "[bold]x[/]" in rendered and "[@click=app.quit]" in rendered
            await pilot.click(view)
            await pilot.pause()
            assert app.is_running  # clicking the text ran no action


async def test_setup_warns_before_a_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        chosen = []
        app.push_screen(SetupScreen(env), chosen.append)
        await pilot.pause()
        setup = app.screen
        assert "offline 135M demo model" in str(setup.query_one("#key-agent").render())
        setup.query_one("#model-judge", Input).value = "anthropic/claude-sonnet-4-5"
        await pilot.pause()
        assert "no key: set ANTHROPIC_API_KEY" in str(setup.query_one("#key-judge").render())
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert chosen == [] and "Press Start again" in str(setup.query_one("#setup-warning").render())
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert chosen and chosen[0].roles.judge.model == "anthropic/claude-sonnet-4-5"


# --- snapshots ---------------------------------------------------------------------------------

from ui_helpers import scripted_factory as _factory  # noqa: E402


def session_app(spec_changes: dict | None = None, human: str | None = None, hold: int | None = None):
    app = ProactiveApp()
    settings = {"max_turns": 2, "live_judging": True, **(spec_changes or {})}

    async def run_before(pilot) -> None:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", **settings)
        if human:
            spec.seats[human] = "human"
        app.push_screen(ProactiveEvalSessionScreen(env, spec, _factory(human=human, hold_agent_at=hold)))
        await pilot.pause()
        screen = app.screen
        if hold:
            await wait_for(pilot, lambda: any(v.turn == hold and v.body for v in screen.query(MessageView))
                           and screen.query_one(TurnChecks).row_count == hold - 1 and screen.query_one(PlanPanel).score)
        elif human:
            await wait_for(pilot, lambda: not screen.query_one(ComposeBox).disabled)
        else:
            await wait_for(pilot, lambda: screen.ended is not None)
        await pilot.pause()

    return app, run_before


@pytest.fixture
def no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The elapsed clock reads 0:00 in snapshots."""
    from proactive_tui.ui.widgets.status_line import StatusLine

    monkeypatch.setattr(StatusLine, "clock", staticmethod(lambda: 1000.0))


def test_snapshot_setup(snap_compare) -> None:
    assert snap_compare(ProactiveApp(), terminal_size=(100, 34), press=["enter"])


def test_snapshot_session_finished_with_scores(snap_compare, no_clock) -> None:
    app, run_before = session_app()
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_session_finished_80x24(snap_compare, no_clock) -> None:
    app, run_before = session_app()
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_snapshot_session_mid_stream(snap_compare, no_clock) -> None:
    app, run_before = session_app({"max_turns": 3}, hold=2)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_play_awaiting_input(snap_compare, no_clock) -> None:
    app, run_before = session_app({"planning": False}, human="user")
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


async def test_play_as_agent_plan_and_messages_go_through_the_engine() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=1)
        spec.seats["agent"] = "human"
        app.push_screen(ProactiveEvalSessionScreen(env, spec, scripted_factory(human="agent")))
        await pilot.pause()
        screen = app.screen
        card = screen.query_one("#context-card").plain_text()
        assert "Your target" in card and env.item.target[:30] in card
        box = screen.query_one(ComposeBox)
        await wait_for(pilot, lambda: not box.disabled)  # the plan first
        box.focus()
        await pilot.press(*"Get Kenji walking", "ctrl+j", *"ask about steps", "ctrl+j", *"suggest the station walk", "enter")
        await wait_for(pilot, lambda: screen.query_one(PlanPanel).score is not None)
        assert "Get Kenji walking" in str(screen.query_one("#plan-body").render())
        await wait_for(pilot, lambda: not box.disabled)  # then the opening message
        await pilot.press(*"Kenji, fancy a walk to the station?", "enter")
        await wait_for(pilot, lambda: screen.ended is not None)
        record = screen.builder.record
        assert record.section.planning.target == "Get Kenji walking" and record.section.planning.sub_targets == ["ask about steps", "suggest the station walk"]
        assert record.messages[0].content == "Kenji, fancy a walk to the station?" and record.human_seats == ["agent"]
        assert record.section.turn_checks and record.section.guidance is not None


async def test_palette_starts_a_session_from_the_picker() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"start a session")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen))
