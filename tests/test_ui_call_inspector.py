"""The call inspector (`i` on any session screen): every model call of the session, with exactly
what the model was sent and what came back, shown literally (issue 17)."""

from __future__ import annotations

import asyncio
import json

import pytest

from family_runs import RUNS
from ui_helpers import PE_ENV, fake_spec, settle, wait_for
from proactive_tui.core.events import ModelCalled
from proactive_tui.llm.trace import CallTrace
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.call_inspector import CallInspector, call_sections
from proactive_tui.ui.widgets.description_view import DescriptionView


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def screen_class(family: str):
    """The family's own session screen, as the app opens it."""
    from proactive_tui.core import registry

    return registry.get(family).screen("session_screen")


SETTINGS = {"proactiveeval": dict(max_turns=2), "proactivebench": dict(max_events=2), "chronos": dict(max_turns=3),
            "proactbench": dict(max_triggers=2)}


@pytest.mark.parametrize("family", sorted(RUNS))
async def test_the_inspector_shows_every_call_as_the_server_received_it(family) -> None:
    run = RUNS[family]
    with FakeOpenAIServer(responder=run.responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(140, 40)) as pilot:
            env = app.environments.get(run.env_id)
            app.push_screen(screen_class(family)(env, fake_spec(env.id, server.base_url, **SETTINGS[family])))
            screen = app.screen
            await wait_for(pilot, lambda: screen.ended is not None)
            await settle(pilot)
            received = [r.body for r in server.chat_requests()]
            await pilot.press("i")
            await wait_for(pilot, lambda: isinstance(app.screen, CallInspector))
            inspector = app.screen
            await settle(pilot, inspector)
            assert len(inspector.calls) == len(received) and inspector.selected == len(received) - 1
            sent_texts = sorted(json.dumps(b["messages"], sort_keys=True) for b in received)
            assert sorted(json.dumps(c.call.request["messages"], sort_keys=True) for c in inspector.calls) == sent_texts
            # the detail pane shows the highlighted call literally: its system prompt and raw reply
            first = inspector.calls[0]
            await pilot.press("home")
            await wait_for(pilot, lambda: inspector.selected == 0)
            shown = inspector.query_one("#call-detail", DescriptionView).plain_text()
            assert first.call.request["messages"][0]["content"].splitlines()[0] in shown
            assert first.call.reply.splitlines()[0] in shown and first.purpose in shown
            await pilot.press("y")
            assert json.loads(app.clipboard)["call"]["request"] == first.call.request
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen)


async def test_a_focused_message_opens_the_call_that_produced_it_and_markup_stays_text() -> None:
    run = RUNS["proactiveeval"]
    from proactive_tui.ui.widgets.message_view import MessageView

    with FakeOpenAIServer(responder=run.responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(140, 40)) as pilot:
            env = app.environments.get(PE_ENV)
            app.push_screen(screen_class("proactiveeval")(env, fake_spec(env.id, server.base_url, max_turns=2)))
            screen = app.screen
            await wait_for(pilot, lambda: screen.ended is not None)
            await settle(pilot)
            view = next(v for v in screen.query(MessageView) if v.role == "user" and v.message_id)
            view.focus()
            await pilot.pause()
            screen.action_inspect_calls()
            await wait_for(pilot, lambda: isinstance(app.screen, CallInspector))
            inspector = app.screen
            await settle(pilot, inspector)
            chosen = inspector.calls[inspector.selected]
            assert chosen.message_id == view.message_id and chosen.seat == "user"
            shown = inspector.query_one("#call-detail", DescriptionView).plain_text()
            assert "[bold]Hi[/bold] \x1b[31mthere" not in shown  # the escape is never passed through raw
            assert "[bold]Hi[/bold]" in shown  # markup-like model text is shown as text


def fixed_calls() -> list[ModelCalled]:
    """Two calls with fixed values, for snapshots."""
    system = {"role": "system", "content": "You are a proactive assistant. [b]Not markup[/b]."}
    agent = ModelCalled(seat="agent", purpose="agent message", turn=1, message_id="agent-1-abc123", call=CallTrace(
        model="openai/agent-m", api_base="http://127.0.0.1:8000/v1",
        request={"messages": [system, {"role": "user", "content": "I keep skipping my walks."}],
                 "temperature": 0.7, "max_tokens": 512, "seed": 0},
        reply="Shall we find ten minutes after lunch?", finish_reason="stop", prompt_tokens=41, completion_tokens=9,
        started_at="2026-12-01T10:00:00.000+00:00", latency_s=0.42, attempts=2,
        retries=["openai/agent-m: server error 503 at http://127.0.0.1:8000/v1"]))
    judge = ModelCalled(seat="judge", purpose="turn 1 check", turn=None, call=CallTrace(
        model="openai/judge-m", api_base="http://127.0.0.1:8000/v1",
        request={"messages": [{"role": "system", "content": "You are a careful, fair evaluator."},
                              {"role": "user", "content": "Did the assistant reach the target?"}],
                 "temperature": 0.0, "max_tokens": 1024,
                 "response_format": {"type": "json_schema", "json_schema": {"name": "TurnVerdict", "schema": {}}}},
        reply='{"reasoning": "not yet", "target_reached": false', started_at="2026-12-01T10:00:01.000+00:00",
        latency_s=1.5, attempts=1, error="openai/judge-m: the stream was cut after 45 characters"))
    return [agent, judge]


def test_call_sections_say_what_was_sent_how_and_what_came_back() -> None:
    agent, judge = fixed_calls()
    titles = [t for t, _ in call_sections(agent)]
    assert titles == ["Call", "Settings", "Outcome", "Sent 1/2: system", "Sent 2/2: user", "Reply, raw"]
    outcome = dict(call_sections(agent))["Outcome"]
    assert "2 attempt(s)" in outcome and "retried after attempt 1: openai/agent-m: server error 503" in outcome
    judged = dict(call_sections(judge))
    assert "response format json_schema (TurnVerdict)" in judged["Settings"]
    assert "failed: openai/judge-m: the stream was cut" in judged["Outcome"] and "Reply, raw (cut off)" in judged


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_snapshot_call_inspector(snap_compare, size) -> None:
    from textual.app import App

    class Inspecting(App):
        def on_mount(self) -> None:
            self.push_screen(CallInspector(fixed_calls(), selected=0))

    async def run_before(pilot) -> None:
        await settle(pilot)

    assert snap_compare(Inspecting(), terminal_size=size, run_before=run_before)


async def test_a_replayed_session_shows_the_calls_it_made_when_it_ran(tmp_path) -> None:
    """History's replay of a stored session: the inspector reads the calls from the stored events."""
    from proactive_tui.cli.main import main
    from proactive_tui.ui.screens.history import open_stored

    run = RUNS["proactiveeval"]
    with FakeOpenAIServer(responder=run.responder) as server:
        argv = ["run", run.env_id, *run.args, "--api-base", server.base_url, "--out", str(tmp_path / "r.json")]
        assert await asyncio.to_thread(main, argv) == 0  # the run command has its own event loop
        received = len(server.chat_requests())
    session_id = json.loads((tmp_path / "r.json").read_text())["id"]
    app = ProactiveApp()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert open_stored(app, session_id)
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.calls) == received)
        await settle(pilot)
        screen.action_inspect_calls()
        await wait_for(pilot, lambda: isinstance(app.screen, CallInspector))
        await settle(pilot, app.screen)
        assert len(app.screen.calls) == received and not app.screen.live
        assert app.screen.query_one("#call-detail", DescriptionView).plain_text()


async def test_a_turn_check_row_opens_the_judges_reasoning() -> None:
    """Turn-check reasons were stored and never shown: Enter on a row of the judge panel shows
    the reasoning (literally) and the verdict it came with."""

    from proactive_tui.families.proactiveeval.ui.turn_checks import TurnChecks
    from proactive_tui.ui.screens.text_modal import TextModal
    from ui_helpers import scripted_factory

    app = ProactiveApp()
    async with app.run_test(size=(140, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        app.push_screen(screen_class("proactiveeval")(env, fake_spec(env.id, "http://127.0.0.1:9", max_turns=2),
                                                       scripted_factory()))
        screen = app.screen
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle(pilot)
        table = screen.query_one(TurnChecks)
        assert table.row_count == 2
        table.focus()
        table.move_cursor(row=1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        modal = app.screen
        await settle(pilot, modal)
        shown = modal.query_one(DescriptionView).plain_text()
        assert "turn 2 checked" in shown and "target reached: no" in shown and "judge: scripted-judge" in shown
        assert modal.title_text == "Turn 2 check"
