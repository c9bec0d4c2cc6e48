"""The keys a person trusts on every family's session screen, in every seat (watch, play the user,
play the agent):

- esc in a text box leaves the box; esc outside one, while the session is live (running, or
  waiting for the person), asks before it stops the session (Stay keeps it, Stop & leave stops
  it and the store records it as before); a finished session is left at once;
- once the session ended, the footer offers only what still works (no step, auto, pause, stop or
  seat keys; restart and fork appear);
- the pause names the turn that really runs last: read on the status line, then checked against
  the turns the run record holds once the session holds.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Input, TextArea

from engine_helpers import scripted_judge, scripted_user
from test_proactivebench_engine import agent_proposing_on, judge_accepting
from ui_helpers import PE_ENV, burst_then_settle, fake_spec, scripted_factory, settle, settle_playing, wait_for
from proactive_tui.core.participants import HumanParticipant, ScriptedParticipant
from proactive_tui.core.spec import SessionSpec, build_session
from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession, ChronosSettings
from proactive_tui.families.chronos.testing import OracleAgent, ScriptedPersona
from proactive_tui.families.chronos.ui.session import ChronosSessionScreen
from proactive_tui.families.proactivebench.ui.session import ProactiveBenchSessionScreen
from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.confirm import ConfirmModal
from proactive_tui.ui.widgets.key_bar import KeyBar

PB_ENV = "proactivebench/coding_01"
CHRONOS_ENV = "chronos/car-purchase/positive"
"""The oracle agent needs seven turns here: enough to pause in the middle."""

LIVE_ONLY = {"autoplay", "step", "pause", "stop", "stop_and_score", "fast_forward", "user_command",
             "end_conversation", "end_session", "verdict", "focus_compose", "leave_box", "stay_quiet"}
"""Actions that only work while the session is live."""
AFTER_END = {"restart", "fork"}
"""Actions that only work once it ended."""


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def paused(factory):
    """The session starts held at its first turn gate (as if p was pressed at once): live, and
    nothing races the test."""

    async def start(spec, env, **kwargs):
        session, seats = await factory(spec, env, **kwargs)
        session.pause()
        return session, seats

    return start


class Hold:
    """Holds one seat's call at one turn until the test releases it; says when it is reached."""

    def __init__(self, turn: int) -> None:
        self.turn = turn
        self.reached = asyncio.Event()
        self.released = asyncio.Event()

    async def at(self, turn: int) -> None:
        if turn == self.turn and not self.released.is_set():
            self.reached.set()
            await self.released.wait()


# -- the screens, one per family and seat --------------------------------------------------------


def pe_screen(seat: str | None, hold: Hold | None = None):
    def make(app):
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=6, planning=False)
        if seat:
            spec.seats[seat] = "human"
            return ProactiveEvalSessionScreen(env, spec, scripted_factory(human=seat))
        if hold is None:
            return ProactiveEvalSessionScreen(env, spec, paused(scripted_factory()))

        async def factory(spec, env, **_):
            class Agent(ScriptedParticipant):
                async def reply(self, request):
                    await hold.at(request.turn)
                    return await super().reply(request)

            seats = {"agent": Agent(lambda r: f"agent says turn {r.turn}", label="scripted-agent"),
                     "user": scripted_user(), "judge": scripted_judge(None)}
            return build_session(spec, env, gateway=None, seats=seats), seats

        return ProactiveEvalSessionScreen(env, spec, factory)

    return make


def pb_screen(seat: str | None, hold: Hold | None = None):
    def make(app):
        env = app.environments.get(PB_ENV)
        spec = fake_spec(PB_ENV, "http://unused")
        if seat:
            spec.seats[seat] = "human"

        async def factory(spec, env, **_):
            inner = agent_proposing_on({1, 2, 3, 4, 5}).structured

            async def structured(request, schema):
                if hold is not None:
                    await hold.at(request.turn)
                return inner(request, schema)

            agent = ScriptedParticipant([], structured=structured, label="scripted-agent")
            if seat == "agent":
                agent = HumanParticipant()
            user = HumanParticipant() if seat == "user" else judge_accepting(lambda i, t: True)
            seats = {"agent": agent, "user": user}
            return build_session(spec, env, gateway=None, seats=seats), seats

        return ProactiveBenchSessionScreen(env, spec, factory if seat or hold else paused(factory))

    return make


def chronos_screen(seat: str | None, hold: Hold | None = None):
    def make(app):
        env = app.environments.get(CHRONOS_ENV)
        seats = {"agent": "model", "user": "model"}
        if seat:
            seats[seat] = "human"
        spec = SessionSpec(env_id=env.id, seats=seats, settings={"monitor_delay_s": 0})

        class Agent(OracleAgent):
            async def reply_structured(self, request, schema, parse_text=None):
                if hold is not None:
                    await hold.at(request.turn)
                return await super().reply_structured(request, schema, parse_text)

        async def factory(spec, env, **_):
            players = {"agent": Agent(), "user": ScriptedPersona()}
            if seat:
                players[seat] = HumanParticipant()
            return ChronosSession(env, ChronosSeats(**players), ChronosSettings(**spec.settings)), players

        return ChronosSessionScreen(env, spec, factory if seat or hold else paused(factory))

    return make


ONLINE: list = []
"""The fake server ProactBench's online protocol talks to (its Planner and agent are models), once
a module, started by the first test that seats a person as its user."""


@pytest.fixture(scope="module", autouse=True)
def online_server():
    yield
    for server in ONLINE:
        server.__exit__(None, None, None)


def proactbench_screen(seat: str | None, hold: Hold | None = None):
    """ProactBench: offline (the protocol's default) the agent's seat watched or played, the judge
    scripted; the user's seat is asked only online, where the Planner and the agent are models
    (the fake server)."""
    def make(app):
        from test_proactbench_engine import ENV_ID, online_responder
        from proactive_tui.core import registry
        from proactive_tui.families.proactbench.judges import JudgeVerdict
        from proactive_tui.families.proactbench.ui.session import ProactBenchSessionScreen
        from proactive_tui.testing.fake_openai import FakeOpenAIServer

        env = app.environments.get(ENV_ID)
        family = registry.get("proactbench")
        if seat == "user":
            if not ONLINE:
                ONLINE.append(FakeOpenAIServer(responder=online_responder()).__enter__())
            spec = fake_spec(env.id, ONLINE[0].base_url, protocol="online", max_turns=3)
            spec.seats = {"agent": "model", "user": "human", "judge": "model"}
            return ProactBenchSessionScreen(env, spec)
        seats = {"agent": "model", "user": "model", "judge": "model"}
        if seat:
            seats[seat] = "human"
        spec = SessionSpec(env_id=env.id, seats=seats, settings=family.settings({"max_triggers": 3}).model_dump())

        async def factory(spec, env, **_):
            class Agent(ScriptedParticipant):
                async def reply(self, request):
                    if hold is not None:
                        await hold.at(request.turn)
                    return await super().reply(request)

            agent = HumanParticipant() if seat == "agent" else Agent(lambda r: f"agent reply at turn {r.turn}",
                                                                     label="scripted-agent")
            judge = ScriptedParticipant([], structured=lambda request, schema: JudgeVerdict(
                rationale="fine", score="PASS"), label="scripted-judge")
            players = {"agent": agent, "user": ScriptedParticipant([]), "judge": judge}
            return family.engine.build_session(spec, env, players), players

        return ProactBenchSessionScreen(env, spec, factory if seat or hold else paused(factory))

    return make


SCREENS = {"proactiveeval": pe_screen, "proactivebench": pb_screen, "chronos": chronos_screen,
           "proactbench": proactbench_screen}
SEATS = [
    pytest.param("proactiveeval", None, id="proactiveeval-watch"),
    pytest.param("proactiveeval", "user", id="proactiveeval-user"),
    pytest.param("proactiveeval", "agent", id="proactiveeval-agent"),
    pytest.param("proactivebench", None, id="proactivebench-watch"),
    pytest.param("proactivebench", "user", id="proactivebench-user"),
    pytest.param("proactivebench", "agent", id="proactivebench-agent"),
    pytest.param("chronos", None, id="chronos-watch"),
    pytest.param("chronos", "user", id="chronos-user"),
    pytest.param("chronos", "agent", id="chronos-agent"),
    pytest.param("proactbench", None, id="proactbench-watch"),
    pytest.param("proactbench", "user", id="proactbench-user"),
    pytest.param("proactbench", "agent", id="proactbench-agent"),
]
"""Every seat a person can take in each family."""


async def open_live(app, pilot, family: str, seat: str | None):
    """The family's screen over the picker, its session live: held at its first turn when
    watched, waiting for the person when played."""
    app.push_screen(SCREENS[family](seat)(app))
    screen = app.screen
    if seat:
        await wait_for(pilot, lambda: screen.awaiting == seat)
        await settle_playing(pilot)
    else:
        await wait_for(pilot, lambda: screen.session is not None and screen.session.holding)
    assert screen.running
    return screen


def in_box(app) -> bool:
    return isinstance(app.focused, (TextArea, Input))


def actions(screen) -> set[str]:
    """What the footer offers now (the screen's active bindings, disabled ones included)."""
    return {active.binding.action.split("(")[0] for active in screen.active_bindings.values()}


def still_live(screen, seat: str | None) -> bool:
    """The session runs, and still holds (watched) or still waits for the person (played)."""
    session = screen.session
    return screen.running and session.running and (screen.awaiting == seat if seat else session.holding)


# -- 0. Enter goes back to the box at once --------------------------------------------------------


@pytest.mark.parametrize("family, seat", [p for p in SEATS if p.values[1] is not None])
async def test_enter_then_a_reply_typed_faster_than_the_app_goes_into_the_box(family: str, seat: str) -> None:
    """Enter (back to the box) moved the focus only after the keys already typed behind it, so
    under load those went to the session's keys: `x` stopped the session, `i` opened the calls.
    The box takes them, whatever the machine's speed."""
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_live(app, pilot, family, seat)
        if not in_box(app):
            assert family == "proactivebench" and seat == "user"  # the verdict prompt: no box to go back to
            return
        await pilot.press("escape")  # out of the box: the session's keys work
        await pilot.pause()
        assert not in_box(app) and "focus_compose" in actions(screen)
        await burst_then_settle(pilot, "enter", "x", "i", "j")
        assert app.screen is screen and in_box(app) and still_live(screen, seat)
        box = app.focused
        assert (box.text if isinstance(box, TextArea) else box.value).endswith("xij")


async def test_enter_on_a_widget_with_its_own_enter_stays_with_it() -> None:
    """Outside the box, Enter goes back to it, unless the focused widget has an Enter of its own
    (a button presses, a list picks): then the screen does not offer it."""
    from textual.widgets import Button, Static

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_live(app, pilot, "proactiveeval", "user")
        plain, button = Static("plain", id="plain"), Button("mine", id="mine")
        plain.can_focus = True
        await screen.mount(plain, button)
        plain.focus()
        await pilot.pause()
        assert "focus_compose" in actions(screen)  # a widget with no Enter: Enter goes back to the box
        button.focus()
        await pilot.pause()
        assert "focus_compose" not in actions(screen)  # the button keeps its Enter


# -- 1. esc asks before it stops a live session; a finished one is left at once ------------------


@pytest.mark.parametrize("family, seat", SEATS)
async def test_esc_asks_before_it_stops_a_live_session(family: str, seat: str | None) -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        below = app.screen
        screen = await open_live(app, pilot, family, seat)
        if in_box(app):  # the first esc leaves the box, and nothing else (the footer says so)
            assert "leave_box" in actions(screen) and "back" not in actions(screen)
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is screen and not in_box(app) and still_live(screen, seat)
            assert "leave_box" not in actions(screen) and "back" in actions(screen)
        else:
            assert seat is None or family == "proactivebench"  # a person's seat has a box, but the verdict prompt
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        modal = app.screen
        assert "Leave and stop this session? The transcript is kept." in str(modal.query_one("#confirm-question").render())
        assert still_live(screen, seat)
        await pilot.click("#confirm-no")  # Stay
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.pause()
        assert still_live(screen, seat)
        session_id = screen.session_id
        assert session_id is not None and app.store.session(session_id).status == "running"

        await pilot.press("escape")  # outside the box now: it asks at once
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.click("#confirm-yes")  # Stop & leave
        await wait_for(pilot, lambda: app.screen is below)
        assert screen not in app.screen_stack
        await wait_for(pilot, lambda: screen.session.ended and not screen.session.running)
        await wait_for(pilot, lambda: app.store.session(session_id).status != "running")
        # as leaving recorded it before the question was asked: stopped (the end arrived before the
        # screen was gone), or interrupted (it did not); neither running nor finished
        assert app.store.session(session_id).status in ("stopped", "interrupted")


@pytest.mark.parametrize("family, seat", SEATS)
async def test_after_the_end_the_footer_offers_only_what_works_and_esc_leaves_at_once(family: str, seat: str | None) -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        below = app.screen
        screen = await open_live(app, pilot, family, seat)
        live = actions(screen)
        assert not live & AFTER_END
        assert in_box(app) or "stop" in live  # in a box, the letter keys type (the footer hides them)
        screen.action_stop()  # x (the key would type itself into the box)
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle_playing(pilot) if seat else await settle(pilot)
        assert screen.ended == "cancelled"
        after = actions(screen)
        assert not after & LIVE_ONLY, after & LIVE_ONLY
        assert AFTER_END <= after and "back" in after
        hints = screen.query_one(KeyBar).render().plain
        for word in ("Step", "Auto", "Pause", "Stop", "^l", "^d"):
            assert word not in hints, word
        assert "Fork" in hints and "Restart" in hints
        await pilot.press("escape")  # finished: no question, back at once
        await pilot.pause()
        assert app.screen is below and not isinstance(app.screen, ConfirmModal)
        assert screen not in app.screen_stack


async def test_a_broken_stream_ends_the_live_keys_too() -> None:
    """The event stream breaks without `session_ended`: the screen says it stopped, and the gate's
    keys, stop and the question on leaving go with it (nothing runs that they could act on)."""

    class Broken:
        auto, holding, paused, last_to_run, _task = True, False, False, None, None

        async def events(self):
            raise RuntimeError("the stream broke")
            yield  # pragma: no cover - an async generator

        def stop(self, score: bool = False) -> None:
            raise AssertionError("nothing runs: nothing to stop")

    async def factory(spec, env, **_):
        return Broken(), {}

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        below = app.screen
        env = app.environments.get(PE_ENV)
        screen = ProactiveEvalSessionScreen(env, fake_spec(PE_ENV, "http://unused", planning=False), factory)
        screen.RECORD = False
        app.push_screen(screen)
        await wait_for(pilot, lambda: app.screen is screen and screen.is_mounted
                       and "stopped by an error" in screen.status.render().plain)
        await settle(pilot)
        assert not actions(screen) & LIVE_ONLY
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is below


# -- 3. the pause names the turn that really runs last --------------------------------------------

UNIT = {"proactiveeval": "turn", "proactivebench": "event", "chronos": "exchange"}
"""Each family's unit (`Family.turn_unit`): the gate holds before each one, the pause names it."""


def last_recorded(family: str, record) -> int:
    """The last turn the run record holds, in the family's unit, each complete."""
    if family == "proactiveeval":
        done = {(m.role, m.turn) for m in record.messages if not m.partial}
        last = max(turn for _, turn in done)
        assert ("agent", last) in done and ("user", last) in done
        return last
    if family == "proactivebench":
        events = record.section.events
        assert events[-1].judgement is not None  # judged: the event ran to its end
        return events[-1].index
    from proactive_tui.core import registry

    return registry.get("chronos").record.unit_number(record, record.section.turns[-1].turn)


def status(screen) -> str:
    screen.status.refresh_line()
    return screen.status.render().plain


@pytest.mark.parametrize("family", ["proactiveeval", "proactivebench", "chronos"])
async def test_the_pause_names_the_turn_that_runs_last(family: str) -> None:
    """The agent's turn 2 is under way (its call held) when p is pressed: the unit it belongs to
    (turn or event 2; Chronos's exchange 1, whose second agent turn answers its own check) is the
    last to run. Then s, still during that turn: one more unit gets through. The status line says
    so each time, and once the session holds, that next unit is the last the record has."""
    unit = UNIT[family]
    hold = Hold(2)
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(SCREENS[family](None, hold)(app))
        screen = app.screen
        await wait_for(pilot, lambda: hold.reached.is_set())
        k = screen.session.counted_turns if family == "chronos" else 2  # the held turn's unit
        assert family != "chronos" or k == 1  # the oracle's second reply answers its own check
        await pilot.press("p")
        assert f"(pauses after {unit} {k})" in status(screen)
        await pilot.press("s")
        assert f"(pauses after {unit} {k + 1})" in status(screen)
        hold.released.set()
        await wait_for(pilot, lambda: screen.session.holding)
        await pilot.pause()
        assert f"paused before {unit} {k + 2}" in status(screen)
        assert last_recorded(family, screen.builder.record) == k + 1
        assert screen.running
        screen.action_stop()
        await wait_for(pilot, lambda: screen.ended is not None)
