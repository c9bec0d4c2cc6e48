"""The Chronos session screens: setup, watching a scripted session, fast-forward, playing the user
and the agent (driven only by the keys and clicks a person would use), and snapshots of the
timeline and task panels and of both play screens."""

from __future__ import annotations


import pytest
from textual.widgets import Input, Select

from chronos_helpers import chronos_env, when
from ui_helpers import screen_lines, settle, settle_playing, wait_for
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
from proactive_tui.families.chronos.ui.user_controls import UserControls
from proactive_tui.ui.widgets.context_card import ContextCard
from proactive_tui.ui.widgets.status_line import StatusLine

POSITIVE = "chronos/car-purchase/positive"
SHIFT = "chronos/car-purchase-shift/positive"


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def oracle_factory(human: str | None = None, agent=None):
    """Protocol-following seats (OracleAgent, ScriptedPersona); `human` seats a person instead, and
    `agent` replaces the oracle agent."""

    async def factory(spec: SessionSpec, env):
        seats = {"agent": agent or OracleAgent(), "user": ScriptedPersona()}
        if human:
            seats[human] = HumanParticipant()
        session = ChronosSession(env, ChronosSeats(**seats), ChronosSettings(**spec.settings))
        return session, seats

    return factory


def checking_agent():
    """An agent that answers INFO_RETRIEVAL to everything, as the embedded local model does."""
    return when(lambda s: True, "INFO_RETRIEVAL", text="Let me check.")


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
        judge = setup.query_one("#model-judge", Input)  # the judge seat reads replies to offers
        assert not judge.disabled
        setup.query_one("#confirmation-reader", Select).value = "keywords"
        await wait_for(pilot, lambda: judge.disabled)
        assert "keyword check reads replies" in str(setup.query_one("#key-judge").render())
        setup.query_one("#confirmation-reader", Select).value = "judge"
        await wait_for(pilot, lambda: not judge.disabled)
        setup.query_one("#user-simulator", Select).value = "scripted"
        await wait_for(pilot, lambda: setup.query_one("#model-user", Input).disabled)
        setup.query_one("#max-turns", Input).value = "12"
        setup.query_one("#prompt-variant", Select).value = "guided"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, ChronosSessionScreen))
        assert started[0].settings == {"max_turns": 12, "monitor_delay_s": 1.0, "max_tool_calls": 2,
                                       "prompt_variant": "guided", "user_simulator": "scripted",
                                       "confirmation_reader": "judge"}
        assert started[0].seats == {"agent": "model", "user": "model", "judge": "model"}
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
        env = chronos_env("car-purchase-towing/negative")
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


# --- playing a seat: what a person sees and does -------------------------------------------------

SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]
STALE = ("your turn", "waiting for you", "typing…", "is thinking", "sent:")


def norm(text: str) -> str:
    return " ".join(text.split())


GUTTERS = str.maketrans("", "", "█▌▐│▂▃▄▅▆▇▁")


def region_text(lines: list[str], widget) -> str:
    """The rows of `lines` inside `widget`'s content region (without borders, message gutters and
    scrollbars), as one line."""
    region = widget.scrollable_content_region
    return norm(" ".join(line[region.x:region.right].translate(GUTTERS) for line in lines[region.y:region.bottom]))


def status_text(screen) -> str:
    return screen.query_one(StatusLine).render().plain


async def asked(pilot, screen, seat: str) -> list[str]:
    """Wait until the person is asked (or the session ended); the settled screen's rows."""
    await wait_for(pilot, lambda: screen.awaiting == seat or screen.ended is not None)
    await settle_playing(pilot)
    return screen_lines(pilot.app)


async def type_text(pilot, text: str) -> None:
    """Type like a person, one key per character."""
    await pilot.press(*[{" ": "space"}.get(ch, ch) for ch in text])


async def read_scrolling(pilot, widget) -> str:
    """Everything a scrolling widget shows, read as a person would: click it, Home, then Down
    until its end, keeping each row as it comes into view. Returns the rows in order, as one line."""
    await pilot.click(widget)
    await pilot.press("home")
    rows: list[str] = []
    for _ in range(200):  # a hang guard
        await settle_playing(pilot)
        lines = screen_lines(pilot.app)
        region = widget.scrollable_content_region
        top = round(widget.scroll_y)
        for i, line in enumerate(lines[region.y:region.bottom]):
            if top + i >= len(rows):
                rows.append(norm(line[region.x:region.right].translate(GUTTERS)))
        if widget.scroll_y >= widget.max_scroll_y:
            break
        await pilot.press("down")
    return norm(" ".join(rows))


async def fast_forward_until_asked(pilot, screen) -> None:
    """With the manual monitor: press f whenever the user is dormant, until the user is asked."""
    while screen.awaiting != "user" and screen.ended is None:
        view = screen.query_one(TimelinePanel).view
        if screen.session.user_dormant:
            await pilot.press("f")  # then wait for the scan it asked for
            await wait_for(pilot, lambda view=view: screen.awaiting == "user" or screen.ended is not None
                           or screen.query_one(TimelinePanel).view is not view)
        else:
            await wait_for(pilot, lambda: screen.awaiting == "user" or screen.ended is not None
                           or screen.session.user_dormant)


def reference_hidden(app, screen, upcoming: list[str]) -> None:
    """Which state meets the needs, and listings nobody was shown, are nowhere on the screen."""
    lines = screen_lines(app)
    panel = region_text(lines, screen.query_one(TimelinePanel))
    assert "✓" not in panel and "✗" not in panel and "✓ meets the needs" not in panel, panel
    assert "hidden" in panel  # and the panel says so
    text = "\n".join(lines)
    for listing in upcoming:
        assert listing not in text, listing


async def reveal_with_t(pilot, screen) -> str:
    """Press t as a person would (from the transcript, not the compose box): the timeline panel's text."""
    await pilot.click("#transcript")
    await pilot.press("t")
    await settle_playing(pilot)
    return region_text(screen_lines(pilot.app), screen.query_one(TimelinePanel))


def assert_nothing_stale(app, screen) -> None:
    text = "\n".join(screen_lines(app))
    for stale in STALE:
        assert stale not in status_text(screen), (stale, status_text(screen))
    assert "waiting for you" not in text and "typing…" not in text
    assert "finished:" in status_text(screen)


@pytest.mark.parametrize("size", SIZES)
async def test_play_user_is_asked_although_the_agent_keeps_checking(size) -> None:
    """The embedded model answers INFO_RETRIEVAL to everything: the person is still asked after
    each exchange, sees the brief in full, never the reference, and the turn budget counts their
    exchanges, not the agent's checks."""
    app = ProactiveApp()
    async with app.run_test(size=size) as pilot:
        env = chronos_env("car-purchase/positive")
        app.push_screen(ChronosSessionScreen(env, spec(env.id, human="user", max_turns=3),
                                             oracle_factory("user", agent=checking_agent())))
        await pilot.pause()
        screen = app.screen
        upcoming = ["Toyota Yaris", "Honda Jazz"]
        replies = ["My budget is at most 12,000 euros", "Under 90,000 km please"]
        for n, reply in enumerate(replies, 1):
            lines = await asked(pilot, screen, "user")
            assert screen.awaiting == "user", f"not asked for reply {n}"
            brief = screen.builder.record.section.briefs[-1]
            hint = region_text(lines, screen.query_one("#user-hint"))
            assert norm(brief.instruction) in hint  # all of it, on screen
            assert "commands:" not in hint  # the commands are the buttons and keys
            assert status_text(screen).startswith(f"exchange {n}/3") and "your turn: add the details" in status_text(screen)
            assert "checked enough in a row: the user's turn" in region_text(lines, screen.transcript)
            reference_hidden(app, screen, upcoming)
            await type_text(pilot, reply)
            await pilot.press("enter")
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle_playing(pilot)
        record = screen.builder.record
        assert [m.content for m in record.messages if m.role == "user"][1:] == replies
        assert [t.input_kind for t in record.section.turns] == ["user", "tool_call"] * 3
        assert screen.ended == "max_turns" and status_text(screen).startswith("exchange 3/3")
        assert_nothing_stale(app, screen)
        reference_hidden(app, screen, upcoming)
        panel = await reveal_with_t(pilot, screen)
        assert "✓ 2017 Honda" in panel and "✗ 2016 Renaul" in panel


@pytest.mark.parametrize("size", SIZES)
async def test_play_user_commands_by_key_and_button(size) -> None:
    """Letters type into the compose box; the ctrl keys (shown on the buttons and the key bar) and
    the buttons send the commands; every command reaches the record; the persona card follows the
    intention shift, and every need on it can be read."""
    app = ProactiveApp()
    async with app.run_test(size=size) as pilot:
        env = chronos_env("car-purchase-shift/positive")
        shift = env.scenario.intention_shift
        app.push_screen(ChronosSessionScreen(env, spec(env.id, human="user", monitor_delay_s=None), oracle_factory("user")))
        await pilot.pause()
        screen = app.screen
        box = screen.query_one(ComposeBox)
        card = screen.query_one(ContextCard)
        lines = await asked(pilot, screen, "user")
        for button in screen.query_one(UserControls).query("Button"):  # every button whole, on screen
            assert str(button.label) in region_text(lines, button), (str(button.label), region_text(lines, button))
        assert "^l Dormant" in lines[-1] and "^o Confirm" in lines[-1]  # and on the key bar
        assert norm(shift.utterance)[:40] not in norm(" ".join(lines))  # the hidden change of plans
        reference_hidden(app, screen, ["Skoda Octavia"])
        await pilot.press("d", "v", "y", "n")  # a person typing: letters are text, not commands
        assert box.text == "dvyn" and screen.awaiting == "user"
        await pilot.press(*["backspace"] * 4)
        await type_text(pilot, "At most 8,000 pounds")
        await pilot.press("enter")
        await asked(pilot, screen, "user")
        await pilot.press("ctrl+l")  # dormant before any reminder: the protocol says why not
        lines = await asked(pilot, screen, "user")
        assert "No reminder is set yet" in region_text(lines, screen.query_one("#user-hint"))
        assert "your turn again" in status_text(screen)
        await type_text(pilot, "Under 70,000 miles")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.session.user_dormant)
        assert "user dormant: f fast-forwards" in status_text(screen)
        await fast_forward_until_asked(pilot, screen)  # the monitor waits for f (manual)
        lines = await asked(pilot, screen, "user")
        assert "voice the change of plans" in status_text(screen)
        assert norm(shift.utterance) in await read_scrolling(pilot, screen.query_one("#user-hint"))
        await pilot.click(box)
        await pilot.press("ctrl+n")  # with the compose box focused
        await wait_for(pilot, lambda: screen.builder.record.section.shift is not None)
        assert screen.builder.record.section.shift.utterance == shift.utterance and box.text == ""
        await settle_playing(pilot)
        # the card now says the new intention and needs; each need can be read by scrolling it
        assert shift.intention in card.plain_text() and "hidden" not in (card.border_subtitle or "")
        seen = await read_scrolling(pilot, card)
        for key, value in shift.constraints.items():
            assert norm(f"{key}: {value}")[:30] in norm(seen), (key, seen)
        await fast_forward_until_asked(pilot, screen)
        await asked(pilot, screen, "user")
        assert "answer the offer" in status_text(screen)
        await pilot.click("#cmd-confirm")
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle_playing(pilot)
        record = screen.builder.record
        assert record.section.outcome.success is True and screen.ended == "task_completed"
        assert "My needs are met" in [m.content for m in record.messages if m.role == "user"][-1]
        assert_nothing_stale(app, screen)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("how", ["ctrl+l", "click:#cmd-refuse"])
async def test_play_user_dormant_or_refuse_at_the_offer(size, how) -> None:
    app = ProactiveApp()
    async with app.run_test(size=size) as pilot:
        env = chronos_env("car-purchase/positive")
        app.push_screen(ChronosSessionScreen(env, spec(env.id, human="user", monitor_delay_s=None), oracle_factory("user")))
        await pilot.pause()
        screen = app.screen
        for reply in ("up to 12,000 euros", "under 90,000 km"):
            await asked(pilot, screen, "user")
            await type_text(pilot, reply)
            await pilot.press("enter")
        await fast_forward_until_asked(pilot, screen)
        await asked(pilot, screen, "user")
        assert screen.builder.record.section.briefs[-1].situation == "offer_meets"
        if how.startswith("click:"):
            await pilot.click(how.removeprefix("click:"))
        else:
            await pilot.press(how)
        await wait_for(pilot, lambda: screen.ended is not None or screen.builder.record.section.user_dormant)
        record = screen.builder.record
        if how == "ctrl+l":
            assert record.section.user_dormant and "user dormant" in status_text(screen)
            await pilot.press("f")  # the last state is gone: the timeline runs out
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle_playing(pilot)
        outcome = record.section.outcome
        if how == "ctrl+l":
            assert (screen.ended, outcome.reason) == ("timeline_exhausted", "timeline_exhausted")
        else:
            assert (screen.ended, outcome.reason) == ("task_failed", "user_refused")
            assert record.section.turns[-1].action == "FAILED_TASK"
        assert_nothing_stale(app, screen)


async def choose(pilot, select_id: str, value: str, options: tuple[str, ...]) -> None:
    """Open a select with a click and pick `value` with the keys, as a person would."""
    await pilot.click(select_id)
    await settle_playing(pilot)
    await pilot.press("home", *["down"] * options.index(value), "enter")
    await settle_playing(pilot)


@pytest.mark.parametrize("size", SIZES)
async def test_play_agent_form_shorthand_and_json_reach_the_record(size) -> None:
    """The person in the agent seat answers every agent turn: with the form's selects, with the
    shorthand or JSON typed in its text box (parsed as such, whatever the selects say), and sees the
    guidance, and any problem with a reply, but never which state meets the needs."""
    from proactive_tui.families.chronos.reply import ACTIONS
    from proactive_tui.families.chronos.ui.session import FORM_HINT

    app = ProactiveApp()
    async with app.run_test(size=size) as pilot:
        env = chronos_env("car-purchase/positive")
        app.push_screen(ChronosSessionScreen(env, spec(env.id, human="agent", monitor_delay_s=0.0), oracle_factory("agent")))
        await pilot.pause()
        screen = app.screen
        lines = await asked(pilot, screen, "agent")
        assert norm(FORM_HINT) in region_text(lines, screen.query_one("#agent-hint"))
        assert "INFO_RETRIEVAL" in region_text(lines, screen.query_one("#form-action"))
        assert "not checked yet" in region_text(lines, screen.query_one(TimelinePanel))
        reference_hidden(app, screen, ["Renault Clio", "Toyota Yaris", "Honda Jazz"])
        assert status_text(screen).startswith("exchange 1/") and "your turn: write the agent's reply" in status_text(screen)
        # the dropdown: every name whole, opening above the form, clear of the status line
        await pilot.click("#form-action")
        await settle_playing(pilot)
        overlay = screen.query_one("#form-action SelectOverlay")
        lines = screen_lines(app)
        assert all(name in region_text(lines, overlay) for name in ACTIONS)
        assert overlay.region.bottom <= screen.query_one("#form-action").region.y
        assert not overlay.region.overlaps(screen.query_one(StatusLine).region)
        await pilot.press("escape")
        # turn 1: the form as it stands (INFO_RETRIEVAL), text typed, Send clicked
        await pilot.click("#form-text")
        await type_text(pilot, "Let me look.")
        await pilot.click("#form-send")
        lines = await asked(pilot, screen, "agent")
        assert "2016 Renault C" in region_text(lines, screen.query_one(TimelinePanel))  # seen now
        # turn 2: the shorthand, while the select still says INFO_RETRIEVAL
        await type_text(pilot, "NO_ACTION: Nothing fits yet. What is your budget?")
        await pilot.press("enter")
        await asked(pilot, screen, "agent")
        # turn 3: the selects
        await choose(pilot, "#form-action", "NO_ACTION", ACTIONS)
        await pilot.click("#form-text")
        await type_text(pilot, "Noted. Any limit on mileage?")
        await pilot.press("enter")
        await asked(pilot, screen, "agent")
        # turn 4: a reminder without a condition is not sent, with the reason in the hint
        await type_text(pilot, "SET_REMINDER IN_PROGRESS: I will watch.")
        await pilot.press("enter")
        lines = await asked(pilot, screen, "agent")
        assert "Not sent" in region_text(lines, screen.query_one("#agent-hint"))
        assert "not sent" in status_text(screen)
        await pilot.press("ctrl+u")  # clear what is left in the text box, then fix the reply
        await type_text(pilot, "SET_REMINDER IN_PROGRESS: I will watch. @EVENT an automatic under 12,000 euros")
        await pilot.press("enter")
        # turn 5: the monitor's first scan (no fit), answered with JSON
        await asked(pilot, screen, "agent")
        reference_hidden(app, screen, ["Honda Jazz"])
        await type_text(pilot, '{"response_text": "", "proactive_action": "KEEP_SILENT", '
                               '"task_description": {"intention": "a car", "status": "IN_PROGRESS"}}')
        await pilot.press("enter")
        # turn 6: the state that fits, a follow-up chosen with the select
        await asked(pilot, screen, "agent")
        await choose(pilot, "#form-action", "FOLLOW_UP", ACTIONS)
        await pilot.click("#form-text")
        await type_text(pilot, "Found one: a 2017 Honda Jazz.")
        await pilot.press("enter")
        # turn 7: the user thanked: complete
        await asked(pilot, screen, "agent")
        await type_text(pilot, "COMPLETE_TASK COMPLETED: Enjoy the car.")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle_playing(pilot)
        record = screen.builder.record
        turns = record.section.turns
        assert [t.action for t in turns] == ["INFO_RETRIEVAL", "NO_ACTION", "NO_ACTION", "SET_REMINDER",
                                             "KEEP_SILENT", "FOLLOW_UP", "COMPLETE_TASK"]
        assert turns[1].reply.response_text == "Nothing fits yet. What is your budget?"
        assert record.section.reminders[0].value == "an automatic under 12,000 euros"
        assert record.section.outcome.success is True and screen.ended == "task_completed"
        assert record.human_seats == ["agent"]
        assert_nothing_stale(app, screen)
        panel = await reveal_with_t(pilot, screen)
        assert "✓" in panel and "✓ meets the needs" in panel


async def refused(pilot, screen, line: str, reason: str) -> None:
    """Type `line` and press Enter: it is not sent (still the person's turn, nothing in the seat's
    inbox, no new turn recorded), the text stays in the box, marked, and the hint says why."""
    turns = len(screen.builder.record.section.turns)
    await type_text(pilot, line)
    await pilot.press("enter")
    lines = await asked(pilot, screen, "agent")
    text_box = screen.query_one("#form-text", Input)
    assert screen.awaiting == "agent" and screen.seats["agent"].inbox.empty()
    assert len(screen.builder.record.section.turns) == turns
    assert text_box.value == line and text_box.has_class("-invalid")
    hint = region_text(lines, screen.query_one("#agent-hint"))
    assert hint.startswith(f"Not sent: {reason}"), hint
    assert "your reply was not sent: see the hint" in status_text(screen)
    if pilot.app.size.height <= 24:  # the reason takes no room from the transcript (ten rows at 80x24)
        assert screen.transcript.region.height >= 10 and screen.query_one("#agent-hint").region.height <= 2
    await pilot.press("ctrl+u")  # clear the box, as a person fixing the reply would
    assert not text_box.has_class("-invalid")


async def test_play_agent_typed_line_is_the_reply_recorded_or_refused() -> None:
    """The one-line reply the form advertises, typed with its brackets, is the reply recorded and
    scored whatever the selects say; JSON too; a line in the reply's shape that does not parse is
    refused on screen with the reason and nothing is sent."""
    from proactive_tui.families.chronos.reply import ACTIONS, STATUSES

    app = ProactiveApp()
    async with app.run_test(size=(80, 24)) as pilot:
        env = chronos_env("car-purchase/positive")
        app.push_screen(ChronosSessionScreen(env, spec(env.id, human="agent", monitor_delay_s=0.0), oracle_factory("agent")))
        await pilot.pause()
        screen = app.screen
        await asked(pilot, screen, "agent")
        await refused(pilot, screen, "INFO_RETRIEVAL [PENDNG]: Let me look.", "unknown status 'PENDNG'")
        await refused(pilot, screen, "INFO_RETRIEVL: Let me look.", "unknown action 'INFO_RETRIEVL'")
        await type_text(pilot, "INFO_RETRIEVAL [PENDING]: Let me look.")
        await pilot.press("enter")
        await asked(pilot, screen, "agent")
        await type_text(pilot, "NO_ACTION [PENDING]: Nothing fits yet. What is your budget?")
        await pilot.press("enter")
        await asked(pilot, screen, "agent")
        await type_text(pilot, "NO_ACTION: Noted. Any limit on mileage?")
        await pilot.press("enter")
        await asked(pilot, screen, "agent")
        await refused(pilot, screen, "SET_REMINDER [IN_PROGRESS]: I will watch.",
                      "SET_REMINDER needs trigger_condition.value")
        await type_text(pilot, "SET_REMINDER [IN_PROGRESS]: I will watch. @EVENT an automatic under 12,000 euros")
        await pilot.press("enter")
        # the monitor's first scan (no fit): the selects say INFO_RETRIEVAL and PENDING, the line KEEP_SILENT
        await asked(pilot, screen, "agent")
        await choose(pilot, "#form-status", "PENDING", STATUSES)
        assert screen.query_one("#form-action", Select).value == "INFO_RETRIEVAL"
        await pilot.click("#form-text")
        await type_text(pilot, "KEEP_SILENT [IN_PROGRESS]: not suitable yet")
        await pilot.press("enter")
        await asked(pilot, screen, "agent")
        # the state that fits: JSON, the selects again ignored
        await type_text(pilot, '{"response_text": "Found one: a 2017 Honda Jazz.", "proactive_action": "FOLLOW_UP", '
                               '"task_description": {"status": "IN_PROGRESS"}}')
        await pilot.press("enter")
        await asked(pilot, screen, "agent")
        turns = screen.builder.record.section.turns
        assert [(t.action, t.reply.status) for t in turns] == [
            ("INFO_RETRIEVAL", "PENDING"), ("NO_ACTION", "PENDING"), ("NO_ACTION", "PENDING"),
            ("SET_REMINDER", "IN_PROGRESS"), ("KEEP_SILENT", "IN_PROGRESS"), ("FOLLOW_UP", "IN_PROGRESS")]
        silent = turns[4]
        assert silent.reply.response_text == "not suitable yet" and not silent.delivered
        assert (silent.expected_action, silent.action_correct, silent.status_correct) == ("KEEP_SILENT", True, True)
        assert turns[3].reply.trigger_condition.value == "an automatic under 12,000 euros"
        assert turns[5].action_correct and turns[5].reply.response_text == "Found one: a 2017 Honda Jazz."
        assert all(t.action in ACTIONS for t in turns)


async def test_agent_form_labels_stay_focus_shows_and_the_transcript_keeps_room() -> None:
    """At 80x24: every field of the agent form keeps its label once it holds text (a placeholder
    would vanish), the field with focus is lit and its label in the focus colour, and the transcript
    above keeps ten rows (eight of dialogue) while the form is shown."""
    from textual.widgets import Label

    app = ProactiveApp()
    async with app.run_test(size=(80, 24)) as pilot:
        env = chronos_env("car-purchase/positive")
        app.push_screen(ChronosSessionScreen(env, spec(env.id, human="agent"), oracle_factory("agent")))
        await pilot.pause()
        screen = app.screen
        await asked(pilot, screen, "agent")
        assert screen.transcript.region.height >= 10
        for box_id, text in (("#form-text", "Let me look."), ("#form-tvalue", "a car"), ("#form-intention", "buy a car")):
            await pilot.click(box_id)
            await type_text(pilot, text)
        await settle_playing(pilot)
        lines = screen_lines(app)
        form = screen.query_one("#action-form")
        labels = {}
        for field in form.query(".field"):
            label = field.query_one(Label)
            widget = field.children[1]
            row = lines[field.region.y][field.region.x:field.region.right]
            name = str(label.render())
            labels[widget.id] = label
            assert row.lstrip().startswith(name), (name, row)
            if isinstance(widget, Input):
                assert widget.value in row, (widget.value, row)
        assert set(labels) == {"form-action", "form-status", "form-ttype", "form-text", "form-tvalue", "form-intention"}
        focused = screen.focused
        assert focused is not None and focused.id == "form-intention"
        lit = labels["form-intention"].rich_style.color
        assert lit != labels["form-text"].rich_style.color
        assert focused.rich_style.bgcolor != screen.query_one("#form-text", Input).rich_style.bgcolor
        await pilot.click("#form-status")  # a select: opens its list; Escape closes it, the focus stays
        await pilot.press("escape")
        await settle_playing(pilot)
        assert screen.focused.id == "form-status" and labels["form-status"].rich_style.color == lit
        assert labels["form-intention"].rich_style.color != lit


async def test_leaving_with_ctrl_d_while_it_is_your_turn() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(80, 24)) as pilot:
        env = chronos_env("car-purchase/positive")
        app.push_screen(ChronosSessionScreen(env, spec(env.id, human="user"), oracle_factory("user")))
        await pilot.pause()
        screen = app.screen
        await asked(pilot, screen, "user")
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle_playing(pilot)
        assert screen.ended == "user_stopped" and screen.builder.record.termination.reason == "user_stopped"
        assert_nothing_stale(app, screen)
        assert screen.query_one(ComposeBox).disabled and screen.query_one(UserControls).disabled


async def test_pause_and_step_hold_before_agent_turns() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = chronos_env("car-purchase-towing/negative")
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
        env = chronos_env("car-purchase-towing/negative")
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
    app, run_before = finished_app("car-purchase-shift/positive")
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_finished_80x24(snap_compare, no_clock) -> None:
    app, run_before = finished_app("car-purchase/positive")
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def play_app(seat: str, theme: str | None):
    """A play screen where the person is first asked: the user seat (after an agent that checked
    twice in a row), the agent seat (its first turn)."""
    app = ProactiveApp()

    async def run_before(pilot) -> None:
        if theme:
            app.theme = theme
        env = chronos_env("car-purchase-shift/positive")
        agent = checking_agent() if seat == "user" else None
        app.push_screen(ChronosSessionScreen(env, spec(env.id, human=seat), oracle_factory(seat, agent=agent)))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: screen.awaiting == seat)
        await settle_playing(pilot)

    return app, run_before


@pytest.mark.parametrize("theme", [pytest.param(None, id="dark"), pytest.param("proactive-light", id="light")])
@pytest.mark.parametrize("seat", ["user", "agent"])
def test_snapshot_play_seat(snap_compare, no_clock, seat, theme) -> None:
    app, run_before = play_app(seat, theme)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


@pytest.mark.parametrize("seat", ["user", "agent"])
def test_snapshot_play_seat_80x24(snap_compare, no_clock, seat) -> None:
    app, run_before = play_app(seat, None)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_snapshot_agent_form_filled_80x24(snap_compare, no_clock) -> None:
    """The agent seat at 80x24 with every box filled and a typed line refused: each field keeps its
    label, the field with focus is lit, the hint leads with why nothing was sent."""
    app, play = play_app("agent", None)

    async def run_before(pilot) -> None:
        await play(pilot)
        for box_id, text in (("#form-tvalue", "an automatic under 12,000 euros"), ("#form-intention", "a cheap car"),
                             ("#form-text", "KEEP_SILENT [IN_PROGRES]: not suitable yet")):
            await pilot.click(box_id)
            await type_text(pilot, text)
        await pilot.press("enter")
        await pilot.press("home")  # the line's start in view, as a person checking it would
        await settle_playing(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_snapshot_setup(snap_compare) -> None:
    app = ProactiveApp()

    async def run_before(pilot) -> None:
        app.open_setup(chronos_env("car-purchase/positive"))
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
