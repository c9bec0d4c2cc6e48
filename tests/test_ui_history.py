"""Sessions recorded as they happen in the playground; the history screen: replay, delete, export, resume."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time

import pytest
from textual.widgets import DataTable, Input

from engine_helpers import make_session
from ui_helpers import PE_ENV, fake_spec, key_burst, scripted_factory, wait_for
from proactive_tui.core.spec import SessionSpec
from proactive_tui.families.proactiveeval.protocol import ProactiveEvalSettings
from proactive_tui.core.run_record import RunRecord
from proactive_tui.store import list_sessions, load_events, load_record, open_store, record_events
from proactive_tui.store.db import default_path
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.confirm import ConfirmModal
from proactive_tui.ui.screens.export_modal import ExportModal
from proactive_tui.ui.screens.history import HistoryScreen
from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen
from proactive_tui.families.proactiveeval.ui.final_scores import FinalScores
from proactive_tui.ui.widgets.message_view import MessageView


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def shown_messages(screen) -> list[tuple[str, int, str]]:
    return [(v.role, v.turn, v.body) for v in screen.query(MessageView) if v.state == "done"]


async def run_scripted(app, pilot, max_turns: int = 2) -> ProactiveEvalSessionScreen:
    env = app.environments.get(PE_ENV)
    app.push_screen(ProactiveEvalSessionScreen(env, fake_spec(PE_ENV, "http://unused", max_turns=max_turns), scripted_factory()))
    await pilot.pause()
    screen = app.screen
    await wait_for(pilot, lambda: screen.ended is not None)
    await wait_for(pilot, lambda: not screen.workers)  # the recorder closed
    return screen


async def open_history(app, pilot) -> HistoryScreen:
    while not type(app.screen).__name__ == "PickerScreen":
        app.pop_screen()
        await pilot.pause()
    await pilot.press("h")
    await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
    return app.screen


async def test_a_tui_session_is_recorded_and_replays_the_same() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        live = await run_scripted(app, pilot)
        messages = shown_messages(live)
        final = live.query_one(FinalScores).score
        assert messages and final is not None
        (summary,) = list_sessions(app.store)
        assert summary.status == "finished" and summary.env_id == PE_ENV
        assert summary.id == live.builder.record.id and summary.headline["overall"] == f"{final.overall}/10"

        history = await open_history(app, pilot)
        table = history.query_one(DataTable)
        assert table.row_count == 1
        cells = [str(c) for c in table.get_row_at(0)]
        assert cells[1] == "proactiveeval\npersuasion/fair/0" and cells[2] == "finished\nturn limit"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ProactiveEvalSessionScreen))
        replay = app.screen
        await pilot.pause()
        assert replay.replaying and replay.session is None
        assert shown_messages(replay) == messages
        assert replay.query_one(FinalScores).score == final
        assert replay.ended == live.ended
        for action in ("stop", "step", "autoplay", "pause", "restart"):
            assert not replay.check_action(action, ())
        # the palette offers the export of what is shown
        assert "Export session…" in [title for title, _, _ in replay.palette_commands()]
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        assert len(list_sessions(app.store)) == 1  # a replay records nothing


async def test_delete_asks_first() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await run_scripted(app, pilot, max_turns=1)
        history = await open_history(app, pilot)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is history)
        assert len(list_sessions(app.store)) == 1 and history.query_one(DataTable).row_count == 1
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is history)
        assert list_sessions(app.store) == [] and history.query_one(DataTable).row_count == 0
        assert not history.check_action("export", ())


async def test_export_from_history_writes_a_run_record(tmp_path) -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        live = await run_scripted(app, pilot, max_turns=1)
        await open_history(app, pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportModal))
        modal = app.screen
        names = [e.name for e in modal.exporters]
        assert "run-record" in names and "proactiveeval" in names and "proactivebench" not in names
        modal.select_format("markdown")
        await pilot.pause()
        assert modal.query_one("#export-path", Input).value.endswith(f"exports/{live.builder.record.id}.md")
        modal.select_format("run-record")
        await pilot.pause()
        path = modal.query_one("#export-path", Input)
        assert path.value.endswith(".json") and str(default_path().parent / "exports") in path.value
        path.value = str(tmp_path / "out" / "record.json")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        record = RunRecord.model_validate_json((tmp_path / "out" / "record.json").read_text())
        assert record.id == live.builder.record.id and record.messages


async def resume_after_crash(app: ProactiveApp, pilot, cut: int, factory) -> HistoryScreen:
    """Make the store look as a crash after event `cut` leaves it (the later events never reached
    the disk, the process is gone), then press `r` on that session in History (returned)."""
    with sqlite3.connect(default_path()) as raw:
        raw.execute("DELETE FROM events WHERE seq > ?", (cut,))
        raw.execute("UPDATE sessions SET status = 'running', summary = NULL, pid = 0")
    raw.close()
    await open_history(app, pilot)
    app.pop_screen()
    app.push_screen(HistoryScreen(session_factory=factory))
    await pilot.pause()
    history = app.screen
    assert "interrupted" in str(history.query_one(DataTable).get_row_at(0))
    assert history.check_action("resume", ())
    await pilot.press("r")
    return history


async def test_resume_from_history_continues_an_interrupted_session() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        first = await run_scripted(app, pilot, max_turns=4)
        first_id = first.builder.record.id
        # a crash after turn 2: the later events never reached the disk, the process is gone
        events = load_events(app.store, first_id)
        cut = next(e.seq for e in events if e.type == "message_done" and e.message.role == "user" and e.message.turn == 2)
        history = await resume_after_crash(app, pilot, cut, scripted_factory())
        await wait_for(pilot, lambda: isinstance(app.screen, ProactiveEvalSessionScreen))
        resumed = app.screen
        await wait_for(pilot, lambda: resumed.ended is not None)
        await wait_for(pilot, lambda: not resumed.workers)
        record = load_record(app.store, resumed.builder.record.id)
        assert record.resumed_from == {"session_id": first_id, "turns": 2}
        assert [(m.role, m.turn) for m in record.messages] == [(r, t) for t in range(1, 5) for r in ("agent", "user")]
        assert app.store.session(record.id).resumed_from == first_id
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is history)
        await pilot.pause()
        assert history.query_one(DataTable).row_count == 2
        assert "(resumed)" in str(history.query_one(DataTable).get_row_at(0))


async def test_store_that_cannot_open_costs_one_notice(monkeypatch: pytest.MonkeyPatch) -> None:
    default_path().parent.mkdir(parents=True, exist_ok=True)
    default_path().write_bytes(b"not a database at all" * 100)
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        live = await run_scripted(app, pilot, max_turns=1)
        assert live.ended == "max_turns" and app.store is None
        assert sum("not saved" in n.message for n in app._notifications) == 1
        history = await open_history(app, pilot)
        assert history.query_one(DataTable).row_count == 0


# -- snapshot -------------------------------------------------------------------------------------


def record_fixed_sessions() -> None:
    """Three sessions with fixed dates: finished, cancelled, and one whose process died."""

    async def record(session, **settings) -> None:
        spec = SessionSpec(env_id=session.env.id, settings=ProactiveEvalSettings(**settings).model_dump())
        async with contextlib.aclosing(record_events(store, spec, session)) as events:
            async for _ in events:
                pass

    def session(agent: str, user: str, reach_at: int | None = None, **settings):
        made = make_session(reach_at=reach_at, **settings)
        made.models = {"agent": {"model": agent}, "user": {"model": user}, "judge": {"model": "openai/gpt-4o"}}
        return made

    store = open_store()
    asyncio.run(record(session("openai/gpt-4o", "openai/gpt-4o-mini", max_turns=2), max_turns=2))
    asyncio.run(record(session("anthropic/claude-sonnet-4-5", "openai/gpt-4o-mini", reach_at=1, max_turns=3), max_turns=3))
    asyncio.run(record(session("openai/gpt-4o", "openai/gpt-4o", max_turns=3, planning=False), max_turns=3, planning=False))
    store.close()
    with sqlite3.connect(default_path()) as raw:
        ids = [r[0] for r in raw.execute("SELECT id FROM sessions ORDER BY created_at")]
        for k, sid in enumerate(ids):
            ts = f"2026-03-0{k + 1}T09:1{k}:00+00:00"
            raw.execute("UPDATE sessions SET created_at = ?, updated_at = ? WHERE id = ?", (ts, ts, sid))
        # the last one: the process died after turn 1
        done = raw.execute("SELECT seq, payload FROM events WHERE session_id = ? AND type = 'message_done' "
                           "ORDER BY seq", (ids[2],)).fetchall()
        cut = next(seq for seq, payload in done
                   if json.loads(payload)["message"]["role"] == "user" and json.loads(payload)["message"]["turn"] == 1)
        raw.execute("DELETE FROM events WHERE session_id = ? AND seq > ?", (ids[2], cut))
        raw.execute("UPDATE sessions SET status = 'running', summary = NULL, pid = 0 WHERE id = ?", (ids[2],))
    raw.close()


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_snapshot_history(snap_compare, utc) -> None:
    record_fixed_sessions()

    async def run_before(pilot) -> None:
        await pilot.press("h")
        await pilot.pause()

    assert snap_compare(ProactiveApp(), terminal_size=(100, 30), run_before=run_before)


async def test_export_from_the_session_palette(tmp_path) -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        live = await run_scripted(app, pilot, max_turns=1)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"export session")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportModal))
        modal = app.screen
        modal.select_format("markdown")
        await pilot.pause()
        modal.query_one("#export-path", Input).value = str(tmp_path / "s.md")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is live)
        assert (tmp_path / "s.md").read_text().startswith(f"# Session {live.builder.record.id}")


async def test_a_family_without_replay_shows_its_record_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from proactive_tui.ui.screens.text_modal import TextModal

    monkeypatch.setattr(HistoryScreen, "_replay_screen", staticmethod(lambda family: None))
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        live = await run_scripted(app, pilot, max_turns=1)
        await open_history(app, pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        text = app.screen.sections[0][1]
        assert text.startswith(f"# Session {live.builder.record.id}") and "agent says turn 1" in text


async def test_resume_with_the_model_backed_session() -> None:
    from test_store import counting_responder
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(responder=counting_responder()) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            env = app.environments.get(PE_ENV)
            app.start_session(env, fake_spec(PE_ENV, server.base_url, max_turns=3, planning=False))
            first = app.screen
            await wait_for(pilot, lambda: first.ended is not None)
            await wait_for(pilot, lambda: not first.workers)
            first_id = first.builder.record.id
            events = load_events(app.store, first_id)
            cut = next(e.seq for e in events if e.type == "message_done" and e.message.role == "user" and e.message.turn == 1)
            with sqlite3.connect(default_path()) as raw:
                raw.execute("DELETE FROM events WHERE seq > ?", (cut,))
                raw.execute("UPDATE sessions SET status = 'running', summary = NULL, pid = 0")
            raw.close()
            history = await open_history(app, pilot)
            assert history.check_action("resume", ())
            await pilot.press("r")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveEvalSessionScreen))
            resumed = app.screen
            await wait_for(pilot, lambda: resumed.ended is not None)
            assert resumed.ended == "max_turns", resumed.errors
            record = resumed.builder.record
            assert record.resumed_from == {"session_id": first_id, "turns": 1}
            assert [(m.role, m.turn) for m in record.messages] == [(r, t) for t in range(1, 4) for r in ("agent", "user")]


def _replay_factory():
    """Scripted seats for ProactiveBench (an agent proposing on even events, a judge accepting
    all) and Chronos (the oracle agent and the scripted persona); resumes when given a record."""
    from proactive_tui.core.participants import ScriptedParticipant
    from proactive_tui.core.spec import build_session
    from proactive_tui.families.chronos.testing import OracleAgent, ScriptedPersona
    from proactive_tui.families.proactivebench.judges import JudgeVerdict

    async def factory(spec, env, resume_from=None):
        if env.family == "chronos":
            seats = {"agent": OracleAgent(), "user": ScriptedPersona()}
        else:
            def propose(request, schema):
                task = f"task {request.turn}" if request.turn % 2 == 0 else "null"
                return {"Purpose": "p", "Thoughts": "t", "Proactive Task": task, "Response": None}

            seats = {"agent": ScriptedParticipant([], structured=propose, label="scripted-agent"),
                     "user": ScriptedParticipant([], structured=lambda r, s: JudgeVerdict(judgement="accepted"),
                                                 label="scripted-judge")}
        return build_session(spec, env, gateway=None, seats=seats, resume_from=resume_from), seats

    return factory


@pytest.mark.parametrize("env_id, step, settings", [
    ("proactivebench/coding_01", "proactivebench.proposal_metrics", {"max_events": 4}),
    ("chronos/car-purchase/positive", "chronos.timeline_turn", {"monitor_delay_s": 0}),
])
async def test_resume_from_history_continues_proactivebench_and_chronos(env_id: str, step: str, settings: dict) -> None:
    from proactive_tui.core import registry

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(env_id)
        screen_class = registry.get(env.family).screen("session_screen")
        spec = fake_spec(env_id, "http://unused", **settings)
        spec.seats = {s: "model" for s in registry.get(env.family).seats}
        app.push_screen(screen_class(env, spec, _replay_factory()))
        await pilot.pause()
        first = app.screen
        await wait_for(pilot, lambda: first.ended is not None)
        await wait_for(pilot, lambda: not first.workers)
        first_id = first.builder.record.id
        whole = load_record(app.store, first_id)
        # a crash one event into the third step: two steps are committed
        events = load_events(app.store, first_id)
        cut = [e.seq for e in events if e.type == step][1] + 1
        await resume_after_crash(app, pilot, cut, _replay_factory())
        await wait_for(pilot, lambda: isinstance(app.screen, screen_class) and app.screen is not first)
        resumed = app.screen
        await wait_for(pilot, lambda: resumed.ended is not None)
        await wait_for(pilot, lambda: not resumed.workers)
        record = load_record(app.store, resumed.builder.record.id)
        assert record.resumed_from == {"session_id": first_id, "turns": 2}
        assert record.section.model_dump() == whole.section.model_dump()
        assert record.termination.reason == whole.termination.reason
        assert app.store.session(record.id).resumed_from == first_id


async def test_keys_typed_behind_slash_filter_and_never_act_on_the_table() -> None:
    """`/de` typed faster than the app handles keys: the focus moved to the filter only after the
    letters had gone to the table, where `d` asked to delete the session (and `e` went to that
    question). Now `/` focuses the filter at once and the letters are its text."""
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await run_scripted(app, pilot, max_turns=1)
        history = await open_history(app, pilot)
        await pilot.pause()
        key_burst(app, "slash", "d", "e")
        await wait_for(pilot, lambda: app.screen is not history or history.filter_text == "de")
        await pilot.pause()
        assert app.screen is history and not isinstance(app.screen, ConfirmModal)
        assert history.query_one("#history-filter").value == "de" and len(list_sessions(app.store)) == 1
        await pilot.press("slash", "x")  # in the filter, `/` is text (the priority binding lets it through)
        await wait_for(pilot, lambda: history.filter_text == "de/x")
