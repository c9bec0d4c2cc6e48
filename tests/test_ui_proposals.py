"""The playground's ProactiveBench screens: setup, the event timeline with proposals and verdicts,
live metrics, and a person playing the user through the accept / reject prompt."""

from __future__ import annotations

import asyncio
import io
import json
import re

import pytest
from rich.console import Console
from textual.widgets import Input

from test_proactivebench_engine import agent_proposing_on, judge_accepting
from ui_helpers import fake_spec, wait_for
from proactive_tui.core.spec import build_session
from proactive_tui.core.participants import HumanParticipant, ScriptedParticipant
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.families.proactivebench.ui.session import ProactiveBenchSessionScreen
from proactive_tui.families.proactivebench.ui.setup import ProactiveBenchSetupScreen
from proactive_tui.families.proactivebench.ui.metrics_panel import MetricsPanel, pct
from proactive_tui.families.proactivebench.ui.proposal_card import EventCard
from proactive_tui.families.proactivebench.ui.verdict_prompt import VerdictPrompt

PB_ENV = "proactivebench/coding_01"


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


@pytest.fixture
def no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    from proactive_tui.ui.widgets.status_line import StatusLine

    monkeypatch.setattr(StatusLine, "clock", staticmethod(lambda: 1000.0))


def proposals_responder(body: dict) -> str:
    """Agent: a task on events 1, 2 and 5, null on 3 and 4. Judge: accepts on events 1, 3 and 5.
    Over five events: TP 2, FP 1, TN 1, FN 1."""
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    last = body["messages"][-1]["content"]
    if name == "JudgeVerdict":
        index = len(re.findall(r"^\d+\. \[", last, flags=re.M))
        ok = index in (1, 3, 5)
        return json.dumps({"thought": f"[bold]judged {index}[/]", "judgement": "accepted" if ok else "rejected"})
    index = max(int(n) for n in re.findall(r"Event (\d+)\nTime", last))
    task = f"Write the test for step {index}" if index in (1, 2, 5) else None
    return json.dumps({"Purpose": f"purpose {index}", "Thoughts": f"thoughts {index}", "Proactive Task": task,
                       "Response": "Want me to?" if task else None})


def scripted_factory(human: bool = False, hold_at: int | None = None, propose_on: set[int] = frozenset({1, 2, 5})):
    async def factory(spec, env):
        agent = agent_proposing_on(set(propose_on))
        if hold_at is not None:
            inner = agent.structured

            async def holding(request, schema):
                if request.turn == hold_at:
                    await asyncio.Event().wait()
                return inner(request, schema)

            agent = ScriptedParticipant([], structured=holding, label="scripted-agent")
        user = HumanParticipant() if human else judge_accepting(lambda i, t: i in (1, 3, 5))
        seats = {"agent": agent, "user": user}
        return build_session(spec, env, gateway=None, seats=seats), seats

    return factory


def pb_spec(human: bool = False, **settings):
    spec = fake_spec(PB_ENV, "http://unused", **settings)
    spec.seats = {"agent": "model", "user": "human" if human else "model"}
    return spec


def prompt_of(screen) -> VerdictPrompt:
    return screen.query_one(VerdictPrompt)


async def test_pick_setup_watch_to_the_end() -> None:
    with FakeOpenAIServer(responder=proposals_responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("slash", *PB_ENV, "enter")
            await pilot.pause()
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveBenchSetupScreen))
            setup = app.screen
            assert [str(label.render()) for label in setup.query(".seat-label")] == ["agent", "judge (user)"]
            for role in ("agent", "user"):
                setup.query_one(f"#model-{role}", Input).value = "openai/fake-model"
            setup.query_one("#api-base", Input).value = server.base_url
            setup.query_one("#max-events", Input).value = "5"
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveBenchSessionScreen))
            screen = app.screen
            assert screen.spec.settings == {"retries": 0, "candidates": 1, "feedback": True, "max_events": 5}
            await wait_for(pilot, lambda: screen.ended is not None)
            await pilot.pause()
            assert screen.ended == "completed"
            section = screen.builder.record.section
            c = section.confusion
            assert (c.tp, c.fp, c.tn, c.fn) == (2, 1, 1, 1)
            panel = screen.query_one(MetricsPanel)
            expected = {"Recall": section.metrics.recall, "Precision": section.metrics.precision,
                        "Accuracy": section.metrics.accuracy, "False-Alarm": section.metrics.false_alarm,
                        "F1": section.metrics.f1, "Accept Rate": section.metrics.accept_rate}
            assert panel.values() == {k: pct(v) for k, v in expected.items()}
            assert panel.values()["Recall"] == "66.67%" and panel.values()["Accuracy"] == "60.00%"
            assert panel.confusion == c and panel.border_subtitle == "judge: openai/fake-model"
            console = Console(width=60, record=True, file=io.StringIO())
            console.print(panel.table())
            rendered = console.export_text()
            assert "TP 2" in rendered and "66.67%" in rendered
            cards = list(screen.query(EventCard))
            assert [card.outcome for card in cards] == ["TP", "FP", "TN", "FN", "TP"]
            assert cards[0].verdicts[0][:2] == ("accepted", "openai/fake-model")
            assert cards[0].verdicts[0][2] == "[bold]judged 1[/]"  # model text stays literal
            assert "Recall: 66.67%" in screen.transcript_text()


async def test_metrics_show_dash_before_anything_is_defined() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PB_ENV)
        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(max_events=1), scripted_factory(propose_on=set())))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: screen.ended is not None)
        values = screen.query_one(MetricsPanel).values()
        # one null accepted (TN): no proposals, no positives -> undefined, never 0
        assert values == {"Recall": "-", "Precision": "-", "Accuracy": "100.00%", "False-Alarm": "-", "F1": "-",
                          "Accept Rate": "-"}


async def test_play_the_user_keys_and_clicks_record_person_verdicts() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PB_ENV)
        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(human=True, max_events=4), scripted_factory(human=True)))
        await pilot.pause()
        screen = app.screen
        prompt = prompt_of(screen)
        await wait_for(pilot, lambda: prompt.display and "event 1" in prompt.border_title)
        assert "task 1" in str(prompt.query_one("#prompt-body").render())
        await pilot.press("a")  # accept (not auto-play: the prompt has the key)
        await wait_for(pilot, lambda: prompt.display and "event 2" in prompt.border_title)
        panel = screen.query_one(MetricsPanel)
        assert panel.confusion.tp == 1 and panel.values()["Precision"] == "100.00%"
        await pilot.click("#prompt-reject")
        await wait_for(pilot, lambda: prompt.display and "event 3" in prompt.border_title)
        assert "No offer" in str(prompt.query_one("#prompt-body").render())
        await pilot.press("i")  # ignore: skipped, not counted
        await wait_for(pilot, lambda: prompt.display and "event 4" in prompt.border_title)
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "completed" and not prompt.display
        section = screen.builder.record.section
        verdicts = [v for ev in section.events for v in ev.final.verdicts]
        assert [v.judgement for v in verdicts] == ["accepted", "rejected", "skipped", "rejected"]
        assert {v.by for v in verdicts} == {"person"} and {v.by_kind for v in verdicts} == {"human"}
        c = panel.confusion
        assert (c.tp, c.fp, c.tn, c.fn, c.skipped) == (1, 1, 0, 1, 1) and c == section.confusion
        assert panel.values()["Precision"] == "50.00%" and panel.border_subtitle == "judge: you (person)"
        assert screen.builder.record.human_seats == ["user"]


async def test_pause_and_step_hold_between_events() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PB_ENV)
        inner = scripted_factory()

        async def paused_factory(spec, env):
            session, seats = await inner(spec, env)
            session.pause()  # hold before the first event
            return session, seats

        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(max_events=3), paused_factory))
        screen = app.screen
        await wait_for(pilot, lambda: screen.session is not None)
        await pilot.pause(0.2)
        assert len(screen.query(EventCard)) == 0 and screen.ended is None
        await pilot.press("s")
        await wait_for(pilot, lambda: any(c.outcome for c in screen.query(EventCard)))
        await pilot.pause(0.2)
        assert len(screen.query(EventCard)) == 1
        await pilot.press("a")  # no prompt in watch mode: "a" auto-plays
        await wait_for(pilot, lambda: screen.ended is not None)
        assert len(screen.query(EventCard)) == 3


async def test_palette_stop_and_restart() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PB_ENV)
        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(max_events=4), scripted_factory(hold_at=2)))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.query(EventCard)) == 2)
        titles = [t for t, _, _ in screen.palette_commands()]
        assert "Session: stop" in titles and "Session: restart" not in titles
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Session: stop")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "cancelled" and screen.builder.record.section.confusion.tp == 1
        assert "Session: restart" in [t for t, _, _ in screen.palette_commands()]
        await pilot.press("R")
        await wait_for(pilot, lambda: app.screen is not screen and isinstance(app.screen, ProactiveBenchSessionScreen))


# --- snapshots ---------------------------------------------------------------------------------


def session_app(human: bool = False, hold_at: int | None = None, accept_first: bool = False, **settings):
    app = ProactiveApp()

    async def run_before(pilot) -> None:
        env = app.environments.get(PB_ENV)
        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(human=human, **settings), scripted_factory(human=human, hold_at=hold_at)))
        await pilot.pause()
        screen = app.screen
        if human:
            prompt = prompt_of(screen)
            await wait_for(pilot, lambda: prompt.display and "event 1" in prompt.border_title)
            if accept_first:
                await pilot.press("a")
                await wait_for(pilot, lambda: prompt.display and "event 2" in prompt.border_title)
        else:
            await wait_for(pilot, lambda: len(screen.query(EventCard)) == hold_at
                           and screen.query_one(MetricsPanel).confusion.events == hold_at - 1)
        await pilot.pause(0.3)

    return app, run_before


def test_snapshot_session_mid_trace(snap_compare, no_clock) -> None:
    app, run_before = session_app(hold_at=4, max_events=6)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_verdict_prompt(snap_compare, no_clock) -> None:
    app, run_before = session_app(human=True, accept_first=True, max_events=6)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_verdict_prompt_80x24(snap_compare, no_clock) -> None:
    app, run_before = session_app(human=True, accept_first=True, max_events=6)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
