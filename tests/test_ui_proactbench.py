"""ProactBench's screens (issue 34): the setup, and the session screen drawn from a session's events
(`proactbench_events` on the shipped sample, offline and online): recorded turns dimmed, trigger
points marked, the current rubric, verdicts as they come (SKIPPED shown, never counted), the
per-type scores, the Planner's plan; what a person playing a seat may see; snapshots."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from proactbench_events import THREE_TYPES_UID, Models, judge_failure, offline_events, online_events, recorded_plans
from proactbench_events import sample_env as sample
from ui_helpers import settle
from proactive_tui.core.spec import SessionSpec
from proactive_tui.families.proactbench.env import EvaluationResult
from proactive_tui.families.proactbench.ui.planner_panel import PlannerPanel
from proactive_tui.families.proactbench.ui.recorded_message import RecordedMessage
from proactive_tui.families.proactbench.ui.rubric_panel import RubricPanel
from proactive_tui.families.proactbench.ui.score_panel import TypeScorePanel
from proactive_tui.families.proactbench.ui.session import ProactBenchSessionScreen
from proactive_tui.families.proactbench.ui.setup import ProactBenchSetupScreen
from proactive_tui.families.proactbench.ui.trigger_marker import TriggerMarker
from proactive_tui.families.proactbench.ui.verdict_card import VerdictCard
from proactive_tui.llm.settings import ModelSettings, RoleSettings
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.widgets.compose_box import ComposeBox
from proactive_tui.ui.widgets.context_card import ContextCard
from proactive_tui.ui.widgets.message_view import MessageView

MARKUP = "[bold red]not markup[/bold red]"
"""Model text that Rich would read as markup: the screens must show these characters."""
MODELS = Models(agent="openai/agent-m", judge="openai/judge-m", user="openai/user-m", planner="openai/planner-m")
AGENT_REPLIES = {
    1: ("Start with the drive's SMART data (smartctl -a) and a long self-test. Since you mean to keep "
        "DSLR photo batches on it later, also run a full surface read and keep a checksum manifest of "
        "what you copy, so a failing sector cannot silently corrupt a shoot."),
    4: ("A clean reinstall of a light Linux is enough for the trip laptop. " + MARKUP + " Copy the card, "
        "check the hashes, then format the card only once the copy verifies."),
    8: "Glad it worked out. Enjoy the trip!",
}
"""Our agent's replies at the dialogue's trigger turns (1 EMERGENT, 4 CRITICAL, 8 RECOVERY)."""
VERDICTS = {
    1: EvaluationResult(score="PASS", rationale="Infers the photo-storage risk and adds an integrity step.",
                        evidence="keep a checksum manifest of what you copy"),
    4: EvaluationResult(score="PARTIAL", rationale="Workflow hinted, no full synthesis. " + MARKUP,
                        evidence="check the hashes"),
    8: None,
}
"""The verdict per trigger turn; None: the judge's reply could not be used (SKIPPED)."""
ONLINE_USER = {
    1: "How can I tell whether the old laptop's drive is healthy before I wipe it? It may end up holding DSLR photo batches.",
    2: "Fine. Which tools would you use on Linux for that?",
    3: "I'd rather reuse old gear on road trips than buy new.",
    4: "So what would you set it up as, given all that?",
}
ONLINE_AGENT = {1: AGENT_REPLIES[1], 2: "smartctl and badblocks cover it; f3 checks the card reader path too.",
                3: "Reusing it is sensible; a light distribution keeps it quick.", 4: AGENT_REPLIES[4]}


def sample_env():
    """The sample with one trigger of each type, so every panel row and marker kind shows."""
    return sample(THREE_TYPES_UID)


def offline(env) -> list:
    return offline_events(env, session_id="pb-offline", replies=AGENT_REPLIES, models=MODELS,
                          verdicts=[VERDICTS[t.turn] for t in env.triggers])


def online(env) -> list:
    """Four turns on the dialogue's recorded plans (triggers at turns 1 and 4, real rubrics and
    orders); the user agent scores trigger 1 with its turn-2 message, trigger 2 after the loop."""
    return online_events(env, session_id="pb-online", plans=recorded_plans(env, 4), users=ONLINE_USER,
                         replies=ONLINE_AGENT, verdicts=[VERDICTS[1], VERDICTS[4]], models=MODELS)


SIZES = [(120, 40), (80, 24)]
THEMES = ["proactive-dark", "proactive-light"]


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


@pytest.fixture
def no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    from proactive_tui.ui.widgets.status_line import StatusLine

    monkeypatch.setattr(StatusLine, "clock", staticmethod(lambda: 1000.0))


def spec(env_id: str, protocol: str = "offline", human: str | None = None, **settings) -> SessionSpec:
    roles = RoleSettings(agent=ModelSettings(model="openai/agent-m"), user=ModelSettings(model="openai/user-m"),
                         judge=ModelSettings(model="openai/judge-m"))
    seats = {"agent": "model", "user": "model", "judge": "model"}
    if human:
        seats[human] = "human"
    return SessionSpec(env_id=env_id, roles=roles, seats=seats, settings={"protocol": protocol, **settings})


async def playing_screen(app: ProactiveApp, pilot, human: str) -> tuple[ProactBenchSessionScreen, list]:
    """A settled online screen with a person in `human`'s seat and no session running, and the
    online session's events for the test to show it one by one."""
    env = sample_env()
    screen = ProactBenchSessionScreen(env, spec(env.id, "online", human=human), replay_events=[])
    app.push_screen(screen)
    await settle(pilot, screen)
    return screen, online(env)


def played_spec(env_id: str, base_url: str, seat: str, **settings) -> SessionSpec:
    """A spec against the fake server with a person in `seat` (the real engine asks them)."""
    from ui_helpers import fake_spec

    played = fake_spec(env_id, base_url, **settings)
    played.seats = {"agent": "model", "user": "model", "judge": "model", seat: "human"}
    return played


def replay_screen(protocol: str, human: str | None = None, events: list | None = None) -> ProactBenchSessionScreen:
    env = sample_env()
    if events is None:
        events = offline(env) if protocol == "offline" else online(env)
    return ProactBenchSessionScreen(env, spec(env.id, protocol, human), replay_events=events)


async def test_an_offline_session_shows_context_triggers_verdicts_and_scores() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = replay_screen("offline")
        app.push_screen(screen)
        await settle(pilot, screen)
        # the recorded turns before triggers 2 (turns 2, 3) and 3 (turns 5, 6, 7), user and reply each
        recorded = list(screen.query(RecordedMessage))
        assert sorted({r.turn for r in recorded}) == [2, 3, 5, 6, 7] and len(recorded) == 10
        assert all("recorded" in r.header().plain for r in recorded)
        curation = next(r for r in recorded if r.role == "agent")
        assert curation.is_folded and "gemini-2.5-pro" in curation.header().plain
        markers = [m.render_text().plain for m in screen.query(TriggerMarker)]
        assert [m.split(" · ")[0:3] for m in markers] == [["◆ trigger 1/3", "turn 1", "EMERGENT"],
                                                          ["◆ trigger 2/3", "turn 4", "CRITICAL"],
                                                          ["◆ trigger 3/3", "turn 8", "RECOVERY"]]
        cards = {c.index: c for c in screen.query(VerdictCard)}
        assert {i: c.counted for i, c in cards.items()} == {1: "PASS", 2: "PARTIAL", 3: "SKIPPED"}
        assert "keep a checksum manifest" in cards[1].plain_text()
        skipped = cards[3].plain_text()
        assert skipped.startswith("SKIPPED") and "not counted" in skipped and judge_failure(MODELS.judge) in " ".join(skipped.split())
        # model text shows literally: the markup characters are there, as written
        assert MARKUP in cards[2].plain_text()
        agent4 = next(v for v in screen.query(MessageView) if v.message_id == "agent-4")
        assert MARKUP in agent4.body and MARKUP in str(agent4.render())
        # the rubric panel holds the latest trigger's criteria
        rubric = screen.query_one(RubricPanel)
        assert rubric.index == 3 and rubric.shown.plain.startswith("PASS ")
        assert "PARTIAL " in rubric.shown.plain and "FAIL " in rubric.shown.plain
        # per type and overall, SKIPPED shown and left out of every rate
        rows = {row[0]: row[1:] for row in screen.query_one(TypeScorePanel).rows()}
        assert rows["EMERGENT"] == ("1", "0", "0", "0", "100%", "1.00")
        assert rows["CRITICAL"] == ("0", "1", "0", "0", "0%", "0.50")
        assert rows["RECOVERY"] == ("0", "0", "0", "1", "-", "-")
        assert rows["OVERALL"] == ("1", "1", "0", "1", "50%", "0.75")
        assert screen.ended == "completed"
        text = screen.transcript_text()
        assert "trigger 2/3 · turn 4 · CRITICAL" in text and "recorded" in text


async def test_the_rubric_panel_says_each_level_once() -> None:
    """The sample's CRITICAL rubric begins each criterion with its level ("PASS if the assistant
    synthesizes…"): the panel shows "PASS if…", never "PASS PASS if…"."""
    env = sample_env()
    rubric_of = env.triggers[1].evaluation_rubric
    assert rubric_of.pass_criteria.startswith("PASS if") and rubric_of.fail_criteria.startswith("FAIL if")
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = replay_screen("offline")
        app.push_screen(screen)
        await settle(pilot, screen)
        panel = screen.query_one(RubricPanel)
        panel.show_rubric(2, 4, rubric_of, 3)
        await pilot.pause()
        lines = panel.shown.plain.splitlines()
        assert [line.split(" ", 2)[:2] for line in lines] == [["PASS", "if"], ["PARTIAL", "if"], ["FAIL", "if"]]
        assert lines[0] == rubric_of.pass_criteria  # the criterion whole, its level once


async def test_an_online_session_shows_the_plan_and_the_user_agents_verdicts() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = replay_screen("online")
        app.push_screen(screen)
        await settle(pilot, screen)
        assert not list(screen.query(RecordedMessage))  # online nothing recorded is shown as the dialogue
        planner = screen.query_one(PlannerPanel)
        assert planner.turn == 4 and "trigger point: CRITICAL" in planner.shown.plain
        assert "What to bring up" in planner.shown.plain
        cards = {c.index: c for c in screen.query(VerdictCard)}
        assert {i: c.counted for i, c in cards.items()} == {1: "PASS", 2: "PARTIAL"}
        assert "user agent openai/user-m" in cards[1].plain_text()
        score = screen.query_one(TypeScorePanel)
        assert score.scorer == "the user agent"
        rows = {row[0]: row[1:] for row in score.rows()}
        assert rows["OVERALL"] == ("1", "1", "0", "0", "50%", "0.75")


async def test_playing_the_agent_the_rubric_and_plan_show_only_once_the_reply_is_in() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, events = await playing_screen(app, pilot, "agent")
        card = screen.query_one(ContextCard).plain_text()
        assert "Only the chat" in card
        rubric, planner = screen.query_one(RubricPanel), screen.query_one(PlannerPanel)
        reply_done = next(i for i, e in enumerate(events) if e.type == "message_done" and e.message.role == "agent")
        for event in events[:reply_done]:
            screen._show(event)
        await pilot.pause()
        assert rubric.rubric is not None and rubric.rubric.type == "EMERGENT"
        assert "hidden until your reply" in rubric.shown.plain and "PASS" not in rubric.shown.plain
        assert "hidden until your reply" in planner.shown.plain and "EMERGENT" not in planner.shown.plain
        screen._show(events[reply_done])
        await pilot.pause()
        assert rubric.shown.plain.startswith("PASS ") and "trigger point: EMERGENT" in planner.shown.plain


async def test_playing_the_user_the_planners_order_is_the_brief() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, events = await playing_screen(app, pilot, "user")
        first_plan = next(e for e in events if e.type == "proactbench.planned")
        screen._show(events[0])
        screen._show(first_plan)
        await pilot.pause()
        brief = screen.query_one(ContextCard).plain_text()
        order = first_plan.plan.tactical_order
        assert order.intent in brief and order.content_payload[0] in brief and order.behavioral_directive in brief
        # the person scores as the user agent: the rubric is theirs to see
        assert screen.query_one(RubricPanel).hidden is None


async def test_playing_the_user_the_box_says_the_session_ended_once_it_has() -> None:
    """Not "the box opens when the Planner's order is in" after the Planner has ended the dialogue."""
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen, events = await playing_screen(app, pilot, "user")
        box = screen.query_one(ComposeBox)
        assert "Planner's order" in box.placeholder
        screen._show(next(e for e in events if e.type == "session_ended"))
        await pilot.pause()
        assert box.placeholder == "The session has ended" and box.disabled


async def test_setup_switches_the_fields_and_seats_with_the_protocol() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(sample_env().id)
        app.open_setup(env)
        for _ in range(20):
            await pilot.pause()
            if isinstance(app.screen, ProactBenchSetupScreen):
                break
        setup = app.screen
        assert isinstance(setup, ProactBenchSetupScreen)
        user, triggers, turns = (setup.query_one(f"#{i}", Input) for i in ("model-user", "max-triggers", "max-turns"))
        assert setup.protocol == "offline" and user.disabled and not triggers.disabled and turns.disabled
        assert "not used offline" in str(setup.query_one("#key-user").render())
        setup.query_one("#protocol", Select).value = "online"
        await pilot.pause()
        assert not user.disabled and triggers.disabled and not turns.disabled
        setup.query_one("#protocol", Select).value = "offline"
        await pilot.pause()
        triggers.value = "2"
        assert setup.build_spec().settings == {"protocol": "offline", "system_prompt": "", "max_triggers": 2}


# -- snapshots --------------------------------------------------------------------------------


def setup_app(protocol: str, theme: str):
    app = ProactiveApp()

    async def run_before(pilot) -> None:
        app.theme = theme
        app.open_setup(app.environments.get(sample_env().id))
        for _ in range(20):
            await pilot.pause()
            if isinstance(app.screen, ProactBenchSetupScreen):
                break
        app.screen.query_one("#protocol", Select).value = protocol
        await settle(pilot)

    return app, run_before


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=["120x40", "80x24"])
@pytest.mark.parametrize("protocol", ["offline", "online"])
def test_snapshot_setup(snap_compare, protocol: str, size, theme: str) -> None:
    app, run_before = setup_app(protocol, theme)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


def session_app(protocol: str, theme: str):
    app = ProactiveApp()

    async def run_before(pilot) -> None:
        app.theme = theme
        screen = replay_screen(protocol)
        app.push_screen(screen)
        await settle(pilot, screen)
        # the SKIPPED verdict's error line toasts for 8 s, as in a live session; the snapshot is of
        # the screen under it (a toast left on or gone by the wall clock would make it flaky)
        assert any("SKIPPED, not counted" in e for e in screen.errors) == (protocol == "offline")
        app.clear_notifications()
        await pilot.pause()

    return app, run_before


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=["120x40", "80x24"])
@pytest.mark.parametrize("protocol", ["offline", "online"])
def test_snapshot_session(snap_compare, no_clock, protocol: str, size, theme: str) -> None:
    app, run_before = session_app(protocol, theme)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


# -- the real engine, through litellm, against the fake server ---------------------------------


async def test_a_watched_offline_session_against_the_fake_server() -> None:
    """The screen shows what the engine recorded: a verdict card per trigger, the failed judge
    call and the empty agent reply SKIPPED and uncounted, the panel's tallies the record's own."""
    from test_proactbench_engine import ENV_ID, offline_responder
    from ui_helpers import fake_spec, wait_for
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(ENV_ID)
        with FakeOpenAIServer(responder=offline_responder(env)) as server:
            screen = ProactBenchSessionScreen(env, fake_spec(env.id, server.base_url, protocol="offline"))
            app.push_screen(screen)
            await wait_for(pilot, lambda: screen.ended is not None)
            await settle(pilot, screen)
        record = screen.builder.record
        assert [t.counted for t in record.section.triggers] == ["PASS", "SKIPPED", "SKIPPED", "FAIL"]
        cards = {c.index: c for c in screen.query(VerdictCard)}
        assert {i: c.counted for i, c in cards.items()} == {1: "PASS", 2: "SKIPPED", 3: "SKIPPED", 4: "FAIL"}
        assert "this quote is not in the reply" in cards[4].plain_text()  # the judge quoted text that is not there
        assert "this quote is not in the reply" not in cards[1].plain_text()
        rows = {row[0]: row[1:] for row in screen.query_one(TypeScorePanel).rows()}
        assert rows["OVERALL"] == ("1", "0", "1", "2", "50%", "0.50")
        assert len(screen.query(TriggerMarker)) == 4 and screen.query(RecordedMessage)
        assert screen.calls, "the call inspector has the session's calls"


async def test_playing_the_agent_offline_the_rubric_waits_for_the_reply() -> None:
    from test_proactbench_engine import ENV_ID, offline_responder
    from ui_helpers import wait_for
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(ENV_ID)
        with FakeOpenAIServer(responder=offline_responder(env)) as server:
            screen = ProactBenchSessionScreen(env, played_spec(env.id, server.base_url, "agent", protocol="offline",
                                                               max_triggers=1))
            app.push_screen(screen)
            await wait_for(pilot, lambda: screen.awaiting == "agent")
            rubric = screen.query_one(RubricPanel)
            assert rubric.rubric is not None and "hidden until your reply" in rubric.shown.plain
            box = screen.query_one(ComposeBox)
            assert not box.disabled and app.focused is box
            box.load_text("Reply one: back up the DSLR photos before you wipe anything.")
            await pilot.press("enter")
            await wait_for(pilot, lambda: screen.ended is not None)
            await settle(pilot, screen)
        assert rubric.shown.plain.startswith("PASS ")
        card = screen.query_one(VerdictCard)
        assert card.counted == "PASS" and "you" in next(v for v in screen.query(MessageView) if v.role == "agent").speaker


@pytest.mark.parametrize("seat, protocol", [("agent", "offline"), ("user", "online")])
async def test_while_the_person_is_asked_the_status_line_says_it_is_their_turn(seat: str, protocol: str) -> None:
    """The engine asks the person (awaiting_human), then starts their message: that start must not
    overwrite "your turn" with "the agent is typing…" (the person is the one to type)."""
    from test_proactbench_engine import ENV_ID, offline_responder, online_responder
    from ui_helpers import wait_for
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(ENV_ID)
        responder = offline_responder(env) if protocol == "offline" else online_responder()
        with FakeOpenAIServer(responder=responder) as server:
            screen = ProactBenchSessionScreen(env, played_spec(env.id, server.base_url, seat, protocol=protocol,
                                                               max_triggers=1, max_turns=2))
            app.push_screen(screen)
            # the person's message has started (its view waits for them) and they are asked
            await wait_for(pilot, lambda: screen.awaiting == seat
                           and any(v.role == seat and v.state == "streaming" for v in screen.query(MessageView)))
            await pilot.pause()
            activity = screen.status.activity
            assert activity.startswith("your turn") and "typing" not in activity, activity
            screen.action_end_conversation()
            await wait_for(pilot, lambda: screen.ended is not None)
            await settle(pilot, screen)
