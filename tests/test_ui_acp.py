"""An ACP agent program in the playground (issue 37): a ProactiveEval session whose agent seat is
`tests/acp_fixtures/agent.py`, with `permission = "ask"`: the modal asks the person, the choice
reaches the agent, the transcript shows its streamed answer, and the call inspector shows the
agent's side of the turn. The setup screen offers the configured agent beside the models."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_fixtures import write_agent_config
from ui_helpers import PE_ENV, settle, wait_for
from proactive_tui.core.spec import SessionSpec
from proactive_tui.llm.settings import ModelSettings, RoleSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.call_inspector import CallInspector
from proactive_tui.ui.widgets.acp_permission import PermissionModal
from proactive_tui.ui.widgets.description_view import DescriptionView


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


async def test_the_person_answers_the_agents_permission_request_in_a_modal(isolated_dirs: Path) -> None:
    from proactive_tui.core import registry

    write_agent_config(isolated_dirs, "permission", permission="ask")
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        model = ModelSettings(model="openai/fake", api_base=server.base_url)
        spec = SessionSpec(env_id=PE_ENV, roles=RoleSettings(agent=ModelSettings(model="acp:tester"), user=model,
                                                             judge=model),
                           settings={"max_turns": 1, "planning": False})
        app = ProactiveApp()
        async with app.run_test(size=(140, 40)) as pilot:
            env = app.environments.get(PE_ENV)
            app.push_screen(registry.get("proactiveeval").screen("session_screen")(env, spec))
            screen = app.screen
            await wait_for(pilot, lambda: isinstance(app.screen, PermissionModal))
            modal = app.screen
            assert modal.ask.agent == "acp:tester" and modal.ask.tool == "delete everything"
            await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "acp-deny")  # Enter alone denies
            await pilot.click("#acp-option-0")  # "Allow once"
            await wait_for(pilot, lambda: screen.ended is not None)
            await settle(pilot)
            agent_lines = [m for m in screen.builder.record.messages if m.role == "agent"]
            assert [m.content for m in agent_lines] == ["permission: yes"]
            assert agent_lines[0].model == "acp:tester (test-agent 1.2.3, ACP v1)"
            await pilot.press("i")
            await wait_for(pilot, lambda: isinstance(app.screen, CallInspector))
            inspector = app.screen
            await settle(pilot, inspector)
            index = next(i for i, c in enumerate(inspector.calls) if c.seat == "agent")
            await pilot.press("home")
            for _ in range(index):
                await pilot.press("down")
            await wait_for(pilot, lambda: inspector.selected == index)
            shown = inspector.query_one("#call-detail", DescriptionView).plain_text()
            assert "Agent program" in shown and "test-agent 1.2.3 · ACP v1" in shown
            assert "Permission request" in shown and "answer: yes (policy: asked the person)" in shown


async def test_the_setup_screen_offers_configured_agents_beside_models(isolated_dirs: Path) -> None:
    from proactive_tui.core import registry
    from textual.widgets import Input, Static

    write_agent_config(isolated_dirs, permission="ask")
    app = ProactiveApp()
    async with app.run_test(size=(140, 50)) as pilot:
        env = app.environments.get(PE_ENV)
        setup = registry.get("proactiveeval").screen("setup_screen")(env)
        app.push_screen(setup)
        await wait_for(pilot, lambda: app.screen is setup and setup.query("#acp-agents"))
        assert "acp:tester" in setup.models
        assert "acp:tester" in str(setup.query_one("#acp-agents", Static).render())
        box = setup.query_one("#model-agent", Input)
        box.value = "acp:tester"
        await pilot.pause()
        assert "agent program over ACP" in str(setup.query_one("#key-agent", Static).render())
        box.value = "acp:no-such-program-here"
        await pilot.pause()
        assert "no program 'no-such-program-here' on PATH" in str(setup.query_one("#key-agent", Static).render())
