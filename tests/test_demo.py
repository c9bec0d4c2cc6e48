"""Demo mode (issue 19): a recorded session replayed at its recorded pace, faster, or step by step.

Sessions are recorded the way a person records one: `run` against the fake OpenAI server (the
real litellm path, into the store), then played by `services.demo.RecordedSession`. Pacing is checked
through an injected sleep that records the waits asked for: no wall time anywhere.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from family_runs import RUNS
from ui_helpers import settle, wait_for
from proactive_tui.cli.main import main
from proactive_tui.services.demo import MAX_GAP_S, DemoError, RecordedSession, demo_plan, gaps
from proactive_tui.core.events import MessageDelta, MessageStarted, SessionEnded, SessionStarted
from proactive_tui.store import open_store
from proactive_tui.store.queries import list_sessions, load_events
from proactive_tui.testing.fake_openai import FakeOpenAIServer


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def record_session(family: str, out: Path) -> str:
    """One session of `family` recorded into the store through the CLI; its id."""
    run = RUNS[family]
    with FakeOpenAIServer(responder=run.responder) as server:
        assert main(["run", run.env_id, *run.args, "--api-base", server.base_url, "--out", str(out), "--quiet"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))["id"]


def stored(session_id: str) -> list:
    with open_store() as store:
        return load_events(store, session_id)


class FakeSleep:
    """Records the waits asked for and returns at once."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        await asyncio.sleep(0)


async def collect(session: RecordedSession) -> list:
    return [event async for event in session.events()]


def payload(event) -> dict:
    return event.model_dump(exclude={"seq", "ts"})


def synthetic(gap_s: list[float]) -> list:
    """A tiny recording whose events are `gap_s` seconds apart (first at 0)."""
    from datetime import datetime, timedelta, timezone

    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    offsets = [0.0]
    for gap in gap_s:
        offsets.append(offsets[-1] + gap)
    kinds = [SessionStarted(session_id="s1", family="proactiveeval", env_id="e", environment={}, mode="watch",
                            seats={}, settings={}, prompt_version="p", app_version="a")]
    for k in range(1, len(offsets) - 1):
        kinds.append(MessageStarted(message_id=f"m{k}", role="agent", turn=k, model="m") if k % 2
                     else MessageDelta(message_id=f"m{k - 1}", text=f"text {k}"))
    kinds.append(SessionEnded(reason="max_turns"))
    for event, offset in zip(kinds, offsets):
        event.ts = (t0 + timedelta(seconds=offset)).isoformat(timespec="milliseconds")
    return kinds


def test_a_demo_emits_exactly_the_recorded_events_in_order(tmp_path: Path) -> None:
    session_id = record_session("proactiveeval", tmp_path / "r.json")
    events = stored(session_id)
    played = asyncio.run(collect(RecordedSession(events, speed=1000, sleep=FakeSleep())))
    assert [type(e) for e in played] == [type(e) for e in events]
    assert [payload(e) for e in played] == [payload(e) for e in events]
    assert any(e.type == "model_called" for e in played)  # the call inspector has what it shows
    assert [e.seq for e in played] == list(range(1, len(played) + 1))
    assert all(p is not e for p, e in zip(played, events))  # copies: the recording stays as it was


def test_the_waits_are_the_recorded_gaps_divided_by_the_speed_and_capped() -> None:
    recorded = [0.5, 2.0, 60.0, 0.0, 4.0]
    events = synthetic(recorded)
    assert gaps(events) == [0.0, *recorded]
    sleep = FakeSleep()
    asyncio.run(collect(RecordedSession(events, speed=2, sleep=sleep)))
    assert sleep.asked == [0.25, 1.0, MAX_GAP_S, 2.0]  # the idle minute is capped; no wait for 0
    slow = FakeSleep()
    asyncio.run(collect(RecordedSession(events, speed=0.5, sleep=slow, max_gap_s=5.0)))
    assert slow.asked == [1.0, 4.0, 5.0, 5.0]


def test_step_mode_emits_nothing_past_a_turn_until_step() -> None:
    events = synthetic([1.0, 1.0, 1.0, 1.0, 1.0])  # start, m1 started, delta, m3 started, delta, end

    async def scenario() -> None:
        session = RecordedSession(events, speed=0, sleep=FakeSleep())
        seen: list = []

        async def read() -> None:
            async for event in session.events():
                seen.append(event)

        reader = asyncio.create_task(read())
        await wait_until(lambda: session.holding and session._queue.empty())  # all emitted so far read
        for _ in range(20):  # and the demo stays held, however long the loop runs
            await asyncio.sleep(0)
        assert [e.type for e in seen] == ["session_started"]  # held before the first turn
        session.step()
        await wait_until(lambda: session.holding and len(seen) == 3)
        assert [e.type for e in seen] == ["session_started", "message_started", "message_delta"]
        session.play()
        await reader
        assert [payload(e) for e in seen] == [payload(e) for e in events]

    asyncio.run(scenario())


async def wait_until(predicate, rounds: int = 10_000) -> None:
    """Yield to the loop until `predicate()` holds (a hang guard, no timing)."""
    for _ in range(rounds):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("never reached")


def test_stopping_a_demo_ends_its_stream_as_cancelled() -> None:
    events = synthetic([1.0, 1.0, 1.0])

    async def scenario() -> list:
        session = RecordedSession(events, step=True, sleep=FakeSleep())
        seen: list = []
        async for event in session.events():
            seen.append(event)
            if event.type == "session_started":
                await wait_until(lambda: session.holding)
                session.stop()
        return seen

    seen = asyncio.run(scenario())
    assert [e.type for e in seen] == ["session_started", "session_ended"]
    assert seen[-1].reason == "cancelled"


def test_a_finished_recording_ends_once() -> None:
    seen = asyncio.run(collect(RecordedSession(synthetic([1.0]), sleep=FakeSleep())))
    assert [e.type for e in seen] == ["session_started", "session_ended"] and seen[-1].reason == "max_turns"


def test_a_demo_records_no_new_session(tmp_path: Path) -> None:
    session_id = record_session("proactiveeval", tmp_path / "r.json")
    with open_store() as store:
        before = [s.id for s in list_sessions(store)]
        plan = demo_plan(store, session_id[:6])  # a prefix, as `sessions` takes it
    asyncio.run(collect(RecordedSession(plan.events, speed=1000, sleep=FakeSleep())))
    with open_store() as store:
        assert [s.id for s in list_sessions(store)] == before == [session_id]


def test_a_run_record_file_plays_when_its_session_is_stored(tmp_path: Path) -> None:
    session_id = record_session("proactiveeval", tmp_path / "r.json")
    with open_store() as store:
        assert demo_plan(store, str(tmp_path / "r.json")).session_id == session_id
    record = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    record["id"] = "notstored1234"
    (tmp_path / "other.json").write_text(json.dumps(record), encoding="utf-8")
    with open_store() as store, pytest.raises(DemoError, match="holds no event log"):
        demo_plan(store, str(tmp_path / "other.json"))


def test_the_cli_says_in_one_line_that_an_id_is_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "nosuchsession"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no session with id 'nosuchsession'") and err.count("\n") == 1
    assert main(["demo", "x", "--speed", "-1"]) == 1
    assert "--speed" in capsys.readouterr().err


@pytest.mark.parametrize("family", ["proactiveeval", "proactivebench", "chronos", "proactbench"])
async def test_a_stored_session_plays_as_a_demo_in_its_screen(family: str, tmp_path: Path) -> None:
    from proactive_tui.core.run_record import fold
    from proactive_tui.ui.app import ProactiveApp
    from proactive_tui.ui.widgets.transcript import MessageView

    session_id = await asyncio.to_thread(record_session, family, tmp_path / "r.json")  # `run` has its own loop
    with open_store() as store:
        plan = demo_plan(store, session_id)
    recorded = fold(plan.events)
    app = ProactiveApp(demo=(plan, 1000.0, False))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: getattr(app.screen, "ended", None) is not None)
        screen = app.screen
        await settle(pilot)
        assert not screen.RECORD and f"demo of session {session_id}" in app.sub_title
        assert screen.ended == recorded.termination.reason
        assert len(screen.calls) == len([e for e in plan.events if e.type == "model_called"])
        shown = screen.builder.record
        assert [(m.role, m.turn, m.content) for m in shown.messages] == \
            [(m.role, m.turn, m.content) for m in recorded.messages]
        assert [s.model_dump() for s in shown.scores] == [s.model_dump() for s in recorded.scores]
        if family == "proactiveeval":
            from proactive_tui.families.proactiveeval.ui.final_scores import FinalScores

            bodies = [v.body for v in screen.query(MessageView) if v.state == "done"]
            from proactive_tui.textsafe import plain

            assert bodies == [plain(m.content) for m in recorded.messages]  # as the live screen shows them
            assert screen.query_one(FinalScores).score == recorded.section.guidance  # the judge panel filled
        elif family == "proactivebench":
            from proactive_tui.families.proactivebench.ui.metrics_panel import MetricsPanel

            assert set(screen.query_one(MetricsPanel).values().values()) != {"-"}
        elif family == "proactbench":
            from proactive_tui.families.proactbench.ui.score_panel import TypeScorePanel

            overall = next(r for r in screen.query_one(TypeScorePanel).rows() if r[0] == "OVERALL")
            assert overall[1:5] == ("0", "2", "0", "0")  # the verdicts as recorded: two PARTIAL
        assert [s.id for s in list_sessions(app.store)] == [session_id]  # the demo recorded nothing
        screen.action_restart()  # plays again, still recording nothing
        await wait_for(pilot, lambda: app.screen is not screen and getattr(app.screen, "ended", None) is not None)
        await settle(pilot)
        assert type(app.screen) is type(screen) and app.screen.ended == screen.ended
        assert [s.id for s in list_sessions(app.store)] == [session_id]


async def test_history_plays_the_highlighted_session_as_a_paced_demo(tmp_path: Path) -> None:
    """`p` in the History: the session plays at speed 1 in its screen; s steps, p plays on."""
    from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen
    from proactive_tui.ui.screens.history import HistoryScreen

    session_id = await asyncio.to_thread(record_session, "proactiveeval", tmp_path / "r.json")
    from proactive_tui.ui.app import ProactiveApp

    app = ProactiveApp()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        await settle(pilot)
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ProactiveEvalSessionScreen)
                       and app.screen.session is not None)
        screen = app.screen
        assert not screen.RECORD and not screen.replaying
        assert screen.session.speed == 1.0 and f"demo of session {session_id}" in app.sub_title
        screen.action_pause()  # the screen's own controls drive the demo
        await wait_for(pilot, lambda: screen.session.holding or screen.ended is not None)
        screen.action_autoplay()
        screen.session.speed = 1000.0  # no waiting for the rest in a test
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle(pilot)
        assert screen.ended == "target_reached"
        assert [s.id for s in list_sessions(app.store)] == [session_id]


def test_step_mode_holds_before_each_proactivebench_event(tmp_path: Path) -> None:
    """ProactiveBench has no messages: its steps are the trace events shown to the agent."""
    events = stored(record_session("proactivebench", tmp_path / "r.json"))
    observations = [e for e in events if e.type == "proactivebench.trace_observation"]
    assert observations

    async def scenario() -> None:
        session = RecordedSession(events, step=True, sleep=FakeSleep())
        seen: list = []

        async def read() -> None:
            async for event in session.events():
                seen.append(event)

        def shown() -> int:
            return len([e for e in seen if e.type == "proactivebench.trace_observation"])

        reader = asyncio.create_task(read())
        for held in range(len(observations)):
            await wait_until(lambda: session.holding and session._queue.empty())
            assert shown() == held  # held before the next trace event
            session.step()
            await wait_until(lambda held=held: shown() == held + 1)
        await reader
        assert [payload(e) for e in seen] == [payload(e) for e in events if e.type != "awaiting_human"]

    asyncio.run(scenario())


async def test_a_branch_plays_as_a_demo_and_the_header_says_both(tmp_path: Path) -> None:
    """A branch's events are stitched from its parent; its demo names the demo and the branch."""
    from proactive_tui.ui.app import ProactiveApp

    def record_branch() -> tuple[str, str]:
        run = RUNS["proactiveeval"]
        with FakeOpenAIServer(responder=run.responder) as server:
            assert main(["run", run.env_id, *run.args, "--api-base", server.base_url, "--out",
                         str(tmp_path / "p.json"), "--quiet"]) == 0
            parent = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))["id"]
            assert main(["sessions", "fork", parent, "--turn", "2", "--seat", "agent", "--edit", "DEMO EDIT",
                         "--api-base", server.base_url, "--out", str(tmp_path / "b.json"), "--quiet"]) == 0
        return parent, json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["id"]

    parent, branch = await asyncio.to_thread(record_branch)
    with open_store() as store:
        plan = demo_plan(store, branch)
    app = ProactiveApp(demo=(plan, 1000.0, False))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: getattr(app.screen, "ended", None) is not None)
        screen = app.screen
        await settle(pilot)
        assert app.sub_title.startswith(f"demo of session {branch}") and f"branch {branch} of {parent}" in app.sub_title
        assert "DEMO EDIT" in [m.content for m in screen.builder.record.messages]
        assert sorted(s.id for s in list_sessions(app.store)) == sorted([parent, branch])
