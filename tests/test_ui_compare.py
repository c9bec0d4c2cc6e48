"""The compare screen: two agents side by side, blind until the vote, the vote kept in the store.

Regenerate the snapshots after an intended change with
`pytest tests/test_ui_compare.py --snapshot-update` and look at the diffs.
"""

from __future__ import annotations

import pytest
from textual.widgets import Button, Input

from engine_helpers import scripted_judge, scripted_user
from test_compare import side_aware_responder
from ui_helpers import PE_ENV, settle, wait_for
from proactive_tui.services.compare import ComparePlan
from proactive_tui.core.participants import ScriptedParticipant
from proactive_tui.core.spec import build_session
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.compare import CompareScreen, SidePane
from proactive_tui.ui.screens.vote_modal import VoteModal

AGENTS = ("openai/agent-alpha", "openai/agent-beta")


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def plan_for(base_url: str, blind: bool = True, shuffle_seed: int | None = 1) -> ComparePlan:
    """The comparison these tests run; shuffle seed 1 keeps alpha as A (`services.compare.side_order`)."""
    seat = ModelSettings(model="openai/user-m", api_base=base_url)
    return ComparePlan(env_id=PE_ENV, agents=[ModelSettings(model=m, api_base=base_url) for m in AGENTS],
                       user=seat, judge=seat.model_copy(update={"model": "openai/judge-m"}), blind=blind,
                       settings={"max_turns": 2, "live_judging": True}, shuffle_seed=shuffle_seed if blind else None)


def pane_text(pane: SidePane) -> str:
    return pane.text()


def screen_text(app) -> str:
    from ui_helpers import screen_lines

    return "\n".join(screen_lines(app))


async def test_compare_two_fake_server_agents_blind_then_vote() -> None:
    with FakeOpenAIServer(responder=side_aware_responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            env = app.environments.get(PE_ENV)
            app.push_screen(CompareScreen(plan_for(server.base_url), env))
            await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.done)
            screen = app.screen
            await settle(pilot)
            a, b = screen.panes()
            assert "alpha speaking" in pane_text(a) and "beta speaking" in pane_text(b)
            assert "overall" in str(a.query_one(".side-scores").render())
            shown = screen_text(app)
            assert "agent-alpha" not in shown and "agent-beta" not in shown  # blind: letters only
            assert [str(p.border_title) for p in screen.panes()] == ["A", "B"]
            assert "B − A" in shown and "+3" in shown  # beta's words score 8, alpha's 5
            await pilot.press("v")
            await wait_for(pilot, lambda: isinstance(app.screen, VoteModal) and app.screen.query("#vote-B"))
            await pilot.pause()
            await pilot.press(*"kinder")
            app.screen.query_one("#vote-B", Button).press()
            await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and screen.row.vote is not None)
            await settle(pilot)
            (row,) = app.store.comparisons()
            assert row.vote == row.sessions[1] and row.reason == "kinder" and row.blind
            assert [str(p.border_title) for p in screen.panes()] == ["A · openai/agent-alpha", "B · openai/agent-beta"]
            assert "agent-alpha" in screen_text(app)
            assert all(app.store.session(sid) is not None for sid in row.sessions)


async def test_c_and_the_palette_offer_compare_on_the_highlighted_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from family_runs import RUNS
    from proactive_tui.testing.fake_openai import FakeOpenAIServer
    from proactive_tui.ui.screens.compare_setup import CompareSetupModal

    with FakeOpenAIServer(responder=RUNS["proactiveeval"].responder) as server:
        # every seat a model of the fake server; the sides run to their end (a side cancelled
        # before its first call leaves litellm's coroutine unawaited)
        monkeypatch.setenv("PROACTIVE_TUI_MODEL", "openai/fake")
        monkeypatch.setenv("PROACTIVE_TUI_API_BASE", server.base_url)
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("slash", *PE_ENV, "enter")
            await pilot.pause()
            titles = [c.title for c in app.get_system_commands(app.screen)]
            assert f"Compare agents on: {PE_ENV}" in titles
            await pilot.press("c")  # the picker's key for the same
            await wait_for(pilot, lambda: isinstance(app.screen, CompareSetupModal) and app.screen.query("#compare-agent-b"))
            await pilot.pause()
            app.screen.query_one("#compare-agent-b", Input).value = "openai/other"
            app.screen.query_one("#compare-start", Button).press()
            await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
            screen = app.screen
            assert screen.plan.blind and [a.model for a in screen.plan.agents] == ["openai/fake", "openai/other"]
            assert screen.plan.user.model == screen.plan.judge.model == "openai/fake"
            await wait_for(pilot, lambda: all(screen.ended))
            await settle(pilot, screen)
            models = {r.body.get("model") for r in server.chat_requests()}
            assert {"fake", "other"} <= models  # both agents were asked, on the same server


def scripted_build(spec, env, gateway, session_id):
    """Deterministic sides: scripted seats, the agent's words told apart by its model."""
    words = "Walk" if spec.roles.agent.model.endswith("alpha") else "Cycle"
    from engine_helpers import scripted_agent

    plan_maker = scripted_agent()
    agent = ScriptedParticipant(lambda req: f"{words} to work on turn {req.turn}?", structured=plan_maker.structured,
                                label="scripted-agent")
    seats = {"agent": agent, "user": scripted_user(), "judge": scripted_judge()}
    return build_session(spec, env, None, seats=seats, session_id=session_id)


def compare_app(vote_modal: bool = False):
    app = ProactiveApp()

    async def run_before(pilot) -> None:
        env = app.environments.get(PE_ENV)
        app.push_screen(CompareScreen(plan_for("http://unused"), env, build=scripted_build))
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.done)
        await settle(pilot)
        if vote_modal:
            await pilot.press("v")
            await wait_for(pilot, lambda: isinstance(app.screen, VoteModal) and app.screen.query("#vote-B"))
            await pilot.pause()
            await pilot.press(*"asks first")
            await settle(pilot)

    return app, run_before


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_snapshot_compare_blind_after_both_ended(snap_compare, size) -> None:
    app, run_before = compare_app()
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_snapshot_compare_vote_modal(snap_compare, size) -> None:
    app, run_before = compare_app(vote_modal=True)
    assert snap_compare(app, terminal_size=size, run_before=run_before)
