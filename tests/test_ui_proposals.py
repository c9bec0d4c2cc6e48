"""The playground's ProactiveBench screens: setup, the event timeline with proposals and verdicts,
live metrics, and a person judging as the user through the verdict prompt (accept / reject / skip).

A person's tests are driven only by what a person does (keys and clicks). What they see is read
from the rendered screen (`screen_lines`), cropped to a widget's region, so "visible" means on
screen, not merely held by some widget.
"""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from rich.console import Console
from textual.widgets import Input

from test_proactivebench_engine import agent_proposing_on, judge_accepting
from ui_helpers import fake_spec, screen_lines, settle_playing, wait_for
from proactive_tui.export import load_formats
from proactive_tui.export.registry import export as export_records
from proactive_tui.llm.errors import ModelError
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
    if name == "JudgeVerdict":  # upstream's reward-model input: the observations so far
        index = len(json.loads(last)["Observations (Time Ascending)"])
        ok = index in (1, 3, 5)
        return json.dumps({"thought": f"[bold]judged {index}[/]", "judgement": "accepted" if ok else "rejected"})
    index = sum(1 for m in body["messages"] if m["role"] == "user")  # one user message per event
    task = f"Write the test for step {index}" if index in (1, 2, 5) else None
    return json.dumps({"Purpose": f"purpose {index}", "Thoughts": f"thoughts {index}", "Proactive Task": task,
                       "Response": "Want me to?" if task else None})


LONG_TASK = ("Step {n}: write a pytest test for load_orders that builds a small CSV in a temporary folder, "
             "reads it back and checks that the order_date column is parsed as datetime64 and that no row "
             "is lost [bold]not markup[/]")
"""A task long enough to wrap over several rows at 80x24, with markup that must stay literal."""


def long_task(n: int) -> str:
    return LONG_TASK.format(n=n)


def scripted_factory(human: bool = False, hold_at: int | None = None, propose_on: set[int] = frozenset({1, 2, 5}),
                     long: bool = False, fail_at: int | None = None, hold_judge_at: int | None = None):
    """Scripted seats: the agent proposes on `propose_on` ("task N", or `long_task(N)`), null
    elsewhere; it waits forever at event `hold_at` and fails for good (a fatal model error) at
    `fail_at`. The user is a person, or a judge accepting events 1, 3 and 5 that waits forever at
    event `hold_judge_at`."""

    async def factory(spec, env):
        agent = agent_proposing_on(set(propose_on))
        inner = agent.structured

        async def structured(request, schema):
            if request.turn == hold_at:
                await asyncio.Event().wait()
            if request.turn == fail_at:
                raise ModelError("the fake provider is down", kind="connection")
            reply = inner(request, schema)
            if long and request.turn in propose_on:
                reply = {**reply, "Proactive Task": long_task(request.turn)}
            return reply

        agent = ScriptedParticipant([], structured=structured, label="scripted-agent")
        if human:
            user = HumanParticipant()
        else:
            judge = judge_accepting(lambda i, t: i in (1, 3, 5))
            verdict = judge.structured

            async def judging(request, schema):
                if request.turn == hold_judge_at:
                    await asyncio.Event().wait()
                return verdict(request, schema)

            user = ScriptedParticipant([], structured=judging, label="scripted-judge")
        seats = {"agent": agent, "user": user}
        return build_session(spec, env, gateway=None, seats=seats), seats

    return factory


def pb_spec(human: bool = False, **settings):
    spec = fake_spec(PB_ENV, "http://unused", **settings)
    spec.seats = {"agent": "model", "user": "human" if human else "model"}
    return spec


def prompt_of(screen) -> VerdictPrompt:
    return screen.query_one(VerdictPrompt)


def export(records, fmt: str, out) -> list:
    """Write `records` in export format `fmt`, as the export command does (formats loaded first)."""
    load_formats()
    return export_records(records, fmt, out)


def status_text(screen) -> str:
    return screen.status.visual.plain


def shown_in(app, region) -> str:
    """The words drawn inside `region` of the screen, rows joined, runs of spaces collapsed."""
    rows = screen_lines(app)[region.y: region.y + region.height]
    return " ".join(" ".join(row[region.x: region.x + region.width] for row in rows).split())


def words(text: str) -> str:
    return " ".join(text.split())


async def settle_on_prompt(pilot, screen, index: int, max_rounds: int = 3000) -> None:
    """Wait until the prompt asks about event `index`, the person's seat waits for the answer, and
    every scroll position and size on the screen is the same over three pause rounds (ui_helpers'
    `settle` waits for the session worker to finish, which a session waiting for a person never
    does). `max_rounds` only guards against a hang."""
    prompt = prompt_of(screen)
    person = screen.seats["user"]
    await wait_for(pilot, lambda: prompt.display and prompt.index == index and person.pending is not None)
    await settle_playing(pilot, max_rounds=max_rounds)


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
            # verdict feedback: off, as upstream's evaluation, and named as the paper's ablation
            from textual.widgets import Label, Static, Switch

            assert setup.query_one("#feedback", Switch).value is False
            assert "verdict feedback (ablation)" in [str(label.render()) for label in setup.query(Label)]
            assert "64.60 -> 56.00" in str(setup.query_one("#feedback-note", Static).render())
            assert setup.query_one("#temperature-agent", Input).value == "0.5"
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveBenchSessionScreen))
            screen = app.screen
            # upstream's evaluation: no verdict feedback, the agent at 0.5 (issue 13)
            assert screen.spec.settings == {"retries": 0, "candidates": 1, "feedback": False, "max_events": 5,
                                            "agent_temperature": 0.5}
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


async def test_metrics_say_why_a_zero_is_zero() -> None:
    """Before anything is scored: "-". After one null accepted (TN) nothing was proposed and no
    event needed help: upstream's eps makes those metrics 0, and the panel stars them and says why
    under the table (it said "-" before issue 13 asked for upstream's numbers)."""
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PB_ENV)
        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(max_events=1), scripted_factory(propose_on=set())))
        await pilot.pause()
        screen = app.screen
        panel = screen.query_one(MetricsPanel)
        assert set(MetricsPanel().values().values()) == {"-"}
        await wait_for(pilot, lambda: screen.ended is not None)
        values = panel.values()
        assert values == {"Recall": "0.00%*", "Precision": "0.00%*", "Accuracy": "100.00%", "False-Alarm": "0.00%*",
                          "F1": "0.00%*", "Accept Rate": "0.00%*"}
        assert panel.footnote() == "* 0: no event needed help; no proposals"
        await pilot.pause()
        assert "* 0: no event needed help; no proposals" in shown_in(app, panel.region)


async def test_a_feedback_run_is_labelled_the_ablation_beside_its_numbers() -> None:
    """Verdict feedback on is not upstream's protocol (the paper's ablation): the metrics panel and
    the timeline say so, since those numbers do not compare with upstream's."""
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PB_ENV)
        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(max_events=1, feedback=True), scripted_factory()))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: screen.ended is not None)
        await pilot.pause()
        panel = screen.query_one(MetricsPanel)
        assert "not upstream's protocol: feedback" in shown_in(app, panel.region)
        notes = [n.visual.plain for n in screen.query(".note")]
        assert any("verdict feedback on (the paper's ablation)" in n for n in notes)
        assert "Protocol: verdict feedback on" in screen.transcript_text()


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
        await pilot.press("s")  # skip: not counted
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


JUDGE_PLAN = {
    # event: (what the person does, the verdict it must record)
    1: (("press", "a"), "accepted"),
    2: (("click", "#prompt-reject"), "rejected"),
    3: (("press", "s"), "skipped"),        # a null proposal, skipped
    4: (("click", "#prompt-skip"), "skipped"),  # a task, skipped
    5: (("press", "r"), "rejected"),
    6: (("click", "#prompt-accept"), "accepted"),
}
PROPOSING = {1, 2, 4, 6}


def reference_texts(env) -> list[str]:
    """What the environment holds beside the events for scoring (never shown to the judge): the
    reference tasks (`agent_response.candidate_task`) and whether help was welcome (`task_status`)."""
    texts = []
    for event in env.events:
        extra = event.model_extra or {}
        texts += [t for t in (extra.get("agent_response") or {}).get("candidate_task") or [] if t]
    return texts


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_judging_as_the_user_sees_what_is_judged_and_every_verdict_is_kept(size, tmp_path) -> None:
    app = ProactiveApp()
    async with app.run_test(size=size) as pilot:
        env = app.environments.get(PB_ENV)
        references = reference_texts(env)
        assert references  # the sample carries a reference: the test below means something
        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(human=True, max_events=6),
                                                    scripted_factory(human=True, propose_on=PROPOSING, long=True)))
        await pilot.pause()
        screen = app.screen
        prompt = prompt_of(screen)
        asked = []
        for index, ((how, what), _) in JUDGE_PLAN.items():
            await settle_on_prompt(pilot, screen, index)
            asked.append(index)
            assert prompt.border_title == f"Your verdict · event {index}/6"
            # the event being judged: its whole text is drawn inside the timeline
            card = screen.timeline.card(index)
            text_box = card.query_one(".event-text")
            assert screen.timeline.scrollable_content_region.contains_region(text_box.region)
            assert words(env.events[index - 1].observation.event) in shown_in(app, text_box.region)
            assert card.has_class("judging")
            # the proposal: the whole task, markup literal, drawn in the prompt (no scrolling needed here)
            scroll = prompt.query_one("#prompt-scroll")
            assert scroll.max_scroll_y == 0
            offer = shown_in(app, scroll.region)
            if index in PROPOSING:
                assert words(long_task(index)) in offer and "[bold]not markup[/]" in offer
            else:
                assert offer.startswith("No offer: the assistant thinks you need no help now.")
            # the metrics panel is whole and nothing covers it
            metrics = screen.query_one(MetricsPanel)
            assert not prompt.region.overlaps(metrics.region)
            drawn = shown_in(app, metrics.region)
            assert "F1" in drawn and "Accept Rate" in drawn and "judge: you (person)" in drawn
            # the buttons and the key bar name the same three answers
            assert "Accept (a) Reject (r) Skip (s)" in shown_in(app, prompt.query_one("#prompt-buttons").region)
            key_bar = screen_lines(app)[-1]
            assert "a Accept" in key_bar and "r Reject" in key_bar and "s Skip" in key_bar and "Ignore" not in key_bar
            assert f"waiting for your verdict on event {index}" in status_text(screen)
            # the reference is never on screen while the person judges
            drawn_all = "\n".join(screen_lines(app))
            assert not [ref for ref in references if ref[:40] in drawn_all]
            assert "task_status" not in drawn_all and "help welcome" not in drawn_all
            if how == "press":
                await pilot.press(what)
            else:
                await pilot.click(what)
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "completed" and not prompt.display
        assert asked == [1, 2, 3, 4, 5, 6]  # one verdict asked for each event, each event's proposal once
        # every action reached the record ...
        record = screen.builder.record
        section = record.section
        assert [[v.judgement for v in ev.final.verdicts] for ev in section.events] == \
            [[want] for _, want in JUDGE_PLAN.values()]
        assert {v.by_kind for ev in section.events for v in ev.final.verdicts} == {"human"}
        assert [ev.outcome for ev in section.events] == ["TP", "FP", None, None, "FN", "TP"]
        c = section.confusion
        assert (c.tp, c.fp, c.tn, c.fn, c.skipped) == (2, 1, 0, 1, 2)
        # ... and the export: a skipped event keeps its proposal, with no verdict
        export([record], "proactivebench", tmp_path)
        data = json.loads((tmp_path / "coding_01.json").read_text())
        assert [(e["agent_response"], e["judgement"]) for e in data] == [
            ([long_task(1)], [True]), ([long_task(2)], [False]), ([None], []),
            ([long_task(4)], []), ([None], [False]), ([long_task(6)], [True]),
        ]
        # the end says how many were judged and skipped, and nothing waits any more
        notes = [n.visual.plain for n in screen.query(".note-end")]
        assert notes == ["Session ended: ran to the end; 4 of 6 events judged, 2 skipped (not counted) "
                         "(stopped after 6 of 15 events (max_events))"]
        assert "waiting" not in status_text(screen)
        assert "finished: ran to the end · 4 judged, 2 skipped" in status_text(screen)
        assert "4 judged · 2 skipped" in shown_in(app, screen.query_one(MetricsPanel).region)
        assert "a Accept" not in screen_lines(app)[-1]


async def test_three_candidates_ask_one_verdict_per_task(tmp_path) -> None:
    async def factory(spec, env):
        def structured(request, schema):
            tasks = ["Offer to fix the KeyError", "Offer to normalise the column names"] if request.turn == 1 else None
            return {"Purpose": "p", "Thoughts": "t", "Proactive Task": tasks, "Response": "r"}

        seats = {"agent": ScriptedParticipant([], structured=structured, label="scripted-agent"), "user": HumanParticipant()}
        return build_session(spec, env, gateway=None, seats=seats), seats

    app = ProactiveApp()
    async with app.run_test(size=(80, 24)) as pilot:
        env = app.environments.get(PB_ENV)
        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(human=True, max_events=1, candidates=3), factory))
        await pilot.pause()
        screen = app.screen
        prompt = prompt_of(screen)
        await settle_on_prompt(pilot, screen, 1)
        assert prompt.border_title == "Your verdict · event 1/1 · task 1/2"
        assert "Offer to fix the KeyError" in shown_in(app, prompt.query_one("#prompt-scroll").region)
        assert "waiting for your verdict on event 1 (task 1/2)" in status_text(screen)
        await pilot.press("s")
        await wait_for(pilot, lambda: prompt.display and prompt.border_title.endswith("task 2/2"))
        assert "Offer to normalise the column names" in shown_in(app, prompt.query_one("#prompt-scroll").region)
        await pilot.click("#prompt-accept")
        await wait_for(pilot, lambda: screen.ended is not None)
        (ev,) = screen.builder.record.section.events
        assert [(v.candidate, v.judgement) for v in ev.final.verdicts] == [(0, "skipped"), (1, "accepted")]
        assert ev.outcome == "TP"
        export([screen.builder.record], "proactivebench", tmp_path)
        (event,) = json.loads((tmp_path / "coding_01.json").read_text())
        assert event["agent_response"] == ["Offer to normalise the column names", "Offer to fix the KeyError"]
        assert event["judgement"] == [True]


async def person_at_event_2(pilot, app, **factory):
    env = app.environments.get(PB_ENV)
    app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(human=True, max_events=4),
                                                scripted_factory(human=True, **factory)))
    await pilot.pause()
    screen = app.screen
    await settle_on_prompt(pilot, screen, 1)
    await pilot.press("a")
    return screen


async def test_ctrl_d_ends_the_session_and_keeps_the_offer_left_without_a_verdict(tmp_path) -> None:
    app = ProactiveApp()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await person_at_event_2(pilot, app)
        await settle_on_prompt(pilot, screen, 2)
        assert "^d End" in screen_lines(app)[-1]
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "user_stopped" and not prompt_of(screen).display
        assert "waiting" not in status_text(screen)
        assert "finished: you ended the session · 1 judged, 0 skipped" in status_text(screen)
        notes = [n.visual.plain for n in screen.query(".note-end")]
        assert notes == ["Session ended: you ended the session; 1 of 4 events judged, 0 skipped (not counted), "
                         "1 left without a verdict"]
        section = screen.builder.record.section
        assert [ev.outcome for ev in section.events] == ["TP", None] and section.events[1].final.verdicts == []
        export([screen.builder.record], "proactivebench", tmp_path)
        data = json.loads((tmp_path / "coding_01.json").read_text())
        assert [(e["agent_response"], e["judgement"]) for e in data] == [(["task 1"], [True]), (["task 2"], [])]


async def test_x_while_the_prompt_is_up_stops_and_nothing_waits_any_more() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await person_at_event_2(pilot, app)
        await settle_on_prompt(pilot, screen, 2)
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "cancelled" and not prompt_of(screen).display
        assert "waiting" not in status_text(screen)
        assert [n.visual.plain for n in screen.query(".note-end")] == [
            "Session ended: stopped; 1 of 4 events judged, 0 skipped (not counted), 1 left without a verdict"]
        await pilot.press("a")  # the prompt is gone: "a" is no verdict any more
        assert [ev.outcome for ev in screen.builder.record.section.events] == ["TP", None]


async def test_an_error_ends_the_session_and_nothing_waits_any_more() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await person_at_event_2(pilot, app, fail_at=2)
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "error" and not prompt_of(screen).display
        assert "waiting" not in status_text(screen) and "proposing" not in status_text(screen)
        note = [n.visual.plain for n in screen.query(".note-end")][0]
        assert note.startswith("Session ended: stopped by an error; 1 of 4 events judged, 0 skipped (not counted)")


async def test_status_line_says_who_is_at_work_on_which_event() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PB_ENV)
        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(max_events=4), scripted_factory(hold_judge_at=2)))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: "judging" in status_text(screen))
        assert "event 2/4" in status_text(screen) and "judge is judging event 2…" in status_text(screen)
        await pilot.press("x")
        await wait_for(pilot, lambda: screen.ended is not None)
        assert "judging" not in status_text(screen)
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PB_ENV)
        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(max_events=4), scripted_factory(hold_at=3)))
        await pilot.pause()
        screen = app.screen
        # Wait for the held event itself: event 2's proposing also matches "proposing", and on a
        # loaded machine the status can be caught there before event 3 starts.
        await wait_for(pilot, lambda: "proposing for event 3" in status_text(screen))
        assert "event 3/4" in status_text(screen) and "agent is proposing for event 3…" in status_text(screen)
        assert "TP 1" in shown_in(app, screen.query_one(MetricsPanel).region)


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


def session_app(human: bool = False, hold_at: int | None = None, accept_first: bool = False, long: bool = False,
                theme: str | None = None, **settings):
    app = ProactiveApp()

    async def run_before(pilot) -> None:
        if theme:
            app.theme = theme
        env = app.environments.get(PB_ENV)
        app.push_screen(ProactiveBenchSessionScreen(env, pb_spec(human=human, **settings),
                                                    scripted_factory(human=human, hold_at=hold_at, long=long)))
        await pilot.pause()
        screen = app.screen
        if human:
            await settle_on_prompt(pilot, screen, 1)
            if accept_first:
                await pilot.press("a")
                await settle_on_prompt(pilot, screen, 2)
        else:
            await wait_for(pilot, lambda: len(screen.query(EventCard)) == hold_at
                           and screen.query_one(MetricsPanel).confusion.events == hold_at - 1
                           and f"proposing for event {hold_at}" in status_text(screen))
            await settle_playing(pilot)  # the agent's worker holds: settle on the screen alone

    return app, run_before


def test_snapshot_session_mid_trace(snap_compare, no_clock) -> None:
    app, run_before = session_app(hold_at=4, max_events=6)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_verdict_prompt(snap_compare, no_clock) -> None:
    app, run_before = session_app(human=True, accept_first=True, long=True, max_events=6)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_verdict_prompt_80x24(snap_compare, no_clock) -> None:
    app, run_before = session_app(human=True, accept_first=True, long=True, max_events=6)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_snapshot_verdict_prompt_80x24_light(snap_compare, no_clock) -> None:
    app, run_before = session_app(human=True, accept_first=True, long=True, theme="proactive-light", max_events=6)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_snapshot_verdict_prompt_light(snap_compare, no_clock) -> None:
    app, run_before = session_app(human=True, accept_first=True, long=True, theme="proactive-light", max_events=6)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def judge_only_responder(body: dict) -> str:
    """The judge seat alone (a person plays the agent): accepts a proposed task, rejects null."""
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    assert name == "JudgeVerdict", f"only the judge is a model here, not {name}"
    task = json.loads(body["messages"][-1]["content"])["Proposed Task"]
    return json.dumps({"thought": f"rated {task!r}", "judgement": "accepted" if task else "rejected"})


@pytest.mark.parametrize("size", [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")])
async def test_play_the_agent_proposal_and_silence_are_judged_as_a_models(size) -> None:
    """Setup offers Play the agent; the person writes a proposal for event 1 and stays quiet
    (ctrl+n) on event 2; the judge seat (a model on the fake server) rates each from upstream's
    reward-model input, as it would a model's reply, and the record credits the replies to the
    person (seat kind human) and the verdicts to the judge."""
    with FakeOpenAIServer(responder=judge_only_responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=size) as pilot:
            await pilot.press("slash", *PB_ENV, "enter")
            await pilot.pause()
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveBenchSetupScreen))
            setup = app.screen
            await pilot.press("right", "right", "space")  # the mode: Play the agent
            await pilot.pause()
            assert setup.mode == "play_agent" and setup.query_one("#model-agent", Input).disabled
            assert "you play this seat" in str(setup.query_one("#key-agent").render())
            setup.query_one("#model-user", Input).value = "openai/fake-judge"
            setup.query_one("#api-base", Input).value = server.base_url
            setup.query_one("#max-events", Input).value = "2"
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveBenchSessionScreen))
            screen = app.screen
            from proactive_tui.families.proactivebench.ui.proposal_prompt import ProposalPrompt

            prompt = screen.query_one(ProposalPrompt)
            await wait_for(pilot, lambda: prompt.display and prompt.index == 1)
            await settle_playing(pilot)
            assert "Your proposal · event 1/2" in shown_in(app, prompt.region)
            assert "your turn: propose for event 1" in status_text(screen)
            await pilot.press("enter")  # nothing typed: not a reply the engine could use, nothing sent
            await pilot.pause()
            assert prompt.display and prompt.index == 1 and screen.builder.record.section.events[0].attempts == []
            await pilot.press(*[{" ": "space"}.get(ch, ch) for ch in "Offer to review the file"], "enter")
            await wait_for(pilot, lambda: prompt.display and prompt.index == 2)
            await settle_playing(pilot)
            assert "Your proposal · event 2/2" in shown_in(app, prompt.region)
            await pilot.press("ctrl+n")  # stay quiet: no proposal
            await wait_for(pilot, lambda: screen.ended is not None)
            assert screen.ended == "completed" and not prompt.display
            record = screen.builder.record
            assert record.human_seats == ["agent"] and record.models["agent"]["model"] == "person"
            ev1, ev2 = record.section.events
            assert ev1.final.tasks == ["Offer to review the file"] and ev1.final.model == "person"
            assert ev2.final.tasks == [] and ev2.final.model == "person"  # no proposal
            v1, v2 = ev1.final.verdicts[0], ev2.final.verdicts[0]
            assert (v1.by, v1.by_kind, v1.judgement) == ("openai/fake-judge", "llm", "accepted")
            assert v1.thought == "rated 'Offer to review the file'"
            assert (v2.by, v2.by_kind, v2.judgement, v2.thought) == ("openai/fake-judge", "llm", "rejected", "rated None")
            assert (ev1.outcome, ev2.outcome) == ("TP", "FN")  # a rejected null: help was wanted
            c = record.section.confusion
            assert (c.tp, c.fn, c.proposals) == (1, 1, 1)
            judged = [json.loads(r["messages"][-1]["content"])["Proposed Task"] for r in server.chat_requests()]
            assert judged == ["Offer to review the file", None]  # the judge saw exactly what the person sent
            cards = list(screen.query(EventCard))
            assert cards[0].verdicts[0][:2] == ("accepted", "openai/fake-judge")


def person_agent_app(size_theme: str | None = None):
    """A person in the agent seat, a scripted judge (accepting events 1, 3 and 5): they proposed a
    task for event 1 and are asked for event 2."""
    app = ProactiveApp()

    async def factory(spec, env):
        seats = {"agent": HumanParticipant(), "user": judge_accepting(lambda i, t: i in (1, 3, 5))}
        return build_session(spec, env, gateway=None, seats=seats), seats

    async def run_before(pilot) -> None:
        if size_theme:
            app.theme = size_theme
        env = app.environments.get(PB_ENV)
        spec = pb_spec(max_events=4)
        spec.seats = {"agent": "human", "user": "model"}
        app.push_screen(ProactiveBenchSessionScreen(env, spec, factory))
        await pilot.pause()
        screen = app.screen
        from proactive_tui.families.proactivebench.ui.proposal_prompt import ProposalPrompt

        prompt = screen.query_one(ProposalPrompt)
        await wait_for(pilot, lambda: prompt.display and prompt.index == 1)
        await pilot.press(*[{" ": "space"}.get(ch, ch) for ch in "Offer to set up the test data"], "enter")
        await wait_for(pilot, lambda: prompt.display and prompt.index == 2 and screen.seats["agent"].pending is not None)
        await settle_playing(pilot)

    return app, run_before


def test_snapshot_proposal_prompt(snap_compare, no_clock) -> None:
    app, run_before = person_agent_app()
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_proposal_prompt_80x24_light(snap_compare, no_clock) -> None:
    app, run_before = person_agent_app("proactive-light")
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_play_the_agent_answers_again_after_a_rejection_with_three_candidates() -> None:
    """With retries and three candidates: the person offers two tasks (|), each is judged; both
    rejected, the prompt asks again for the same event and says so; staying quiet then is the
    event's last attempt."""
    app = ProactiveApp()

    async def factory(spec, env):
        seats = {"agent": HumanParticipant(), "user": judge_accepting(lambda i, t: t is None)}
        return build_session(spec, env, gateway=None, seats=seats), seats

    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PB_ENV)
        spec = pb_spec(max_events=1, retries=1, candidates=3)
        spec.seats = {"agent": "human", "user": "model"}
        app.push_screen(ProactiveBenchSessionScreen(env, spec, factory))
        await pilot.pause()
        screen = app.screen
        from proactive_tui.families.proactivebench.ui.proposal_prompt import ProposalPrompt

        prompt = screen.query_one(ProposalPrompt)
        await wait_for(pilot, lambda: prompt.display and prompt.index == 1)
        assert "up to three tasks, separated by |" in str(prompt.query_one("#proposal-body").render())
        await pilot.press(*[{" ": "space"}.get(ch, ch) for ch in "Run the tests | Open the docs"], "enter")
        await wait_for(pilot, lambda: prompt.display and "again, after a rejection" in prompt.border_title)
        await pilot.click("#proposal-quiet")
        await wait_for(pilot, lambda: screen.ended is not None)
        (event,) = screen.builder.record.section.events
        first, last = event.attempts
        assert first.tasks == ["Run the tests", "Open the docs"] and [v.judgement for v in first.verdicts] == ["rejected"] * 2
        assert last.tasks == [] and [v.judgement for v in last.verdicts] == ["accepted"] and event.outcome == "TN"


def format_error_responder(body: dict) -> str:
    """Agent: a reply with none of the expected keys at event 2, null elsewhere; judge: accepts."""
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if name == "JudgeVerdict":
        return json.dumps({"thought": "ok", "judgement": "accepted"})
    index = sum(1 for m in body["messages"] if m["role"] == "user")
    return '{"foo": 1}' if index == 2 else json.dumps({"Purpose": "p", "Proactive Task": None})


async def test_an_agent_format_error_is_said_on_its_event_card() -> None:
    """Issue 30: an event the agent never answered usably says why on screen, never "no help needed"."""
    with FakeOpenAIServer(responder=format_error_responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("slash", *PB_ENV, "enter")
            await pilot.pause()
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveBenchSetupScreen))
            setup = app.screen
            for role in ("agent", "user"):
                setup.query_one(f"#model-{role}", Input).value = "openai/fake-model"
            setup.query_one("#api-base", Input).value = server.base_url
            setup.query_one("#max-events", Input).value = "2"
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveBenchSessionScreen))
            screen = app.screen
            await wait_for(pilot, lambda: screen.ended is not None)
            await pilot.pause()
            card = screen.timeline.card(2)
            assert card is not None and card.border_subtitle == "skipped: not counted"
            region = card.region
            shown = " ".join(line[region.x:region.right].strip("│ ") for line in screen_lines(app)[region.y:region.bottom])
            assert "agent format error" in shown and "none of the expected keys" in shown
            assert "no help needed" not in shown
