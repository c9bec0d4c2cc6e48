"""ProactiveEval's planning panel says when the plan or its score failed, instead of waiting on.

A planning call (or the plan-score call) that fails for good emits only an error event; before,
the panel kept saying "waiting for the agent's plan" for the whole session.
"""

from __future__ import annotations

import pytest

from engine_helpers import scripted_agent, scripted_judge, scripted_user
from ui_helpers import PE_ENV, fake_spec, settle
from proactive_tui.core.participants import ScriptedParticipant
from proactive_tui.core.spec import build_session
from proactive_tui.families.proactiveeval.judges import PlanJudgement
from proactive_tui.families.proactiveeval.protocol import PlanDraft
from proactive_tui.families.proactiveeval.ui.plan_panel import PlanPanel
from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen
from proactive_tui.llm.errors import ModelError
from proactive_tui.ui.app import ProactiveApp


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def failing_factory(fail: type):
    """Scripted seats whose structured call for `fail` (the plan or its score) fails for good."""

    async def factory(spec, env, resume_from=None):
        agent_base, judge_base = scripted_agent(), scripted_judge(None)

        def failing(base):
            async def structured(request, schema):
                if schema is fail:
                    raise ModelError("the provider is down", kind="connection")
                return base.structured(request, schema)
            return structured

        seats = {"agent": ScriptedParticipant(lambda r: f"agent says turn {r.turn}", structured=failing(agent_base),
                                              label="scripted-agent"),
                 "user": scripted_user(),
                 "judge": ScriptedParticipant([], structured=failing(judge_base), label="scripted-judge")}
        return build_session(spec, env, gateway=None, seats=seats, resume_from=resume_from), seats

    return factory


def panel_text(screen) -> str:
    panel = screen.query_one(PlanPanel)
    return panel.query_one("#plan-body").render().plain + "\n" + str(panel.border_subtitle)


@pytest.mark.parametrize(("fail", "expected"), [
    pytest.param(PlanDraft, "planning failed: the provider is down", id="plan"),
    pytest.param(PlanJudgement, "score failed", id="plan-score"),
])
async def test_a_failed_plan_or_score_is_shown_as_failed(fail: type, expected: str) -> None:
    app = ProactiveApp()
    async with app.run_test(size=(140, 44)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=2, live_judging=False)
        app.push_screen(ProactiveEvalSessionScreen(env, spec, failing_factory(fail)))
        screen = app.screen
        await settle(pilot)
        assert screen.ended is not None
        text = panel_text(screen)
        assert expected in text, text
        assert "waiting for the agent's plan" not in text
        assert "planning" not in screen.status.render().plain  # nothing says it is still planning
