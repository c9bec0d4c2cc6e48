"""Re-grading stored sessions (issue 18): the judges run again, with another judge model, over
the dialogue as recorded; each grading is kept (which judge, when, what it decided) and the
original grading never changes.

Sessions are run the way a person runs them (`run` against the fake OpenAI server, `tests/
family_runs.py`), then `proactive-tui regrade` runs on the stored session. The fake server's judge
answers by model name: `judge-m` (the session's) as the family's usual responder, `judge-2` (the
new judge) differently, so the new scores can only have come from the new judge's replies.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import datetime
from pathlib import Path

from family_runs import RUNS
from proactive_tui.cli.main import main
from proactive_tui.services.regrade import grading_record, parse_grading_events
from proactive_tui.families.proactivebench.metrics import Confusion, metrics
from proactive_tui.store import open_store
from proactive_tui.store.db import MIGRATIONS, SCHEMA_VERSION, GradingRow, Store
from proactive_tui.store.queries import list_sessions, load_record
from proactive_tui.testing.fake_openai import FakeOpenAIServer

NEW_JUDGE = "openai/judge-2"


def schema_name(body: dict) -> str | None:
    return (body.get("response_format") or {}).get("json_schema", {}).get("name")


def two_judges(base):
    """`base` for every seat but the new judge, which scores lower and flips every verdict (and
    `garbled`, a judge whose replies are never JSON)."""

    def respond(body: dict) -> str:
        if body.get("model") == "garbled":
            return "not JSON at all"
        if body.get("model") != "judge-2":
            return base(body)
        name = schema_name(body)
        if name == "PlanJudgement":
            return json.dumps({"reasoning": "thin plan", "score": 3})
        if name == "GuidanceJudgement":
            return json.dumps({"reasoning": "pushy", "overall": 4, "effectiveness": 3, "personalization": 4,
                               "tone": 5, "engagement": 4, "naturalness": 5})
        if name == "TurnVerdict":
            return json.dumps({"reasoning": "not yet", "target_reached": False, "covered_steps": [1]})
        if name == "JudgeVerdict":  # the opposite of bench_responder's judge: null accepted, tasks rejected
            accepted = json.loads(body["messages"][-1]["content"])["Proposed Task"] is None
            return json.dumps({"thought": "contrary", "judgement": "accepted" if accepted else "rejected"})
        return "not JSON at all"

    return respond


def run_session(family: str, server: FakeOpenAIServer, out: Path) -> str:
    run = RUNS[family]
    assert main(["run", run.env_id, *run.args, "--api-base", server.base_url, "--out", str(out), "--quiet"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))["id"]


def snapshot(session_id: str) -> tuple:
    """Everything the store says of a session's own grading: its event rows, record and summary."""
    with open_store() as store:
        return (store.event_rows(session_id), load_record(store, session_id).model_dump_json(),
                store.session(session_id).model_dump_json(),
                next(s for s in list_sessions(store) if s.id == session_id).model_dump_json())


def test_regrading_leaves_the_original_untouched_and_records_the_new_grading(tmp_path: Path, capsys) -> None:
    responder = two_judges(RUNS["proactiveeval"].responder)
    with FakeOpenAIServer(responder=responder) as server:
        session_id = run_session("proactiveeval", server, tmp_path / "s.json")
        before = snapshot(session_id)
        capsys.readouterr()
        assert main(["regrade", session_id, "--judge", NEW_JUDGE, "--api-base", server.base_url]) == 0
        printed = capsys.readouterr().out
        judged = [r.body for r in server.chat_requests() if r.body.get("model") == "judge-2"]
    assert snapshot(session_id) == before  # byte for byte: events, record, row, history summary
    original = json.loads(before[1])
    assert original["section"]["guidance"]["overall"] == 7 and original["section"]["planning"]["score"] == 6
    assert "overall 7/10 → 4/10" in printed and "plan 6/10 → 3/10" in printed
    with open_store() as store:
        (grading,) = store.gradings(session_id)
        regraded = grading_record(store, grading)
    assert grading.judge == NEW_JUDGE and grading.session_id == session_id
    assert datetime.fromisoformat(grading.created_at) <= datetime.fromisoformat(datetime.now().astimezone().isoformat())
    assert grading.summary["overall"] == "4/10" and grading.summary["plan"] == "3/10"
    events = parse_grading_events(grading.events)
    kinds = [e.type for e in events]
    assert kinds.count("proactiveeval.plan_scored") == 1 and kinds.count("proactiveeval.guidance_scored") == 1
    turns = len(original["section"]["turn_checks"])
    assert [e.check.turn for e in events if e.type == "proactiveeval.turn_checked"] == list(range(1, turns + 1))
    assert all(e.check.target_reached is False and e.check.covered_sub_targets == [1]
               for e in events if e.type == "proactiveeval.turn_checked")
    # what the judge was sent is kept, labelled; the same prompts the session's judge was sent
    called = [e for e in events if e.type == "model_called"]
    assert [c.purpose for c in called] == ["plan score", *[f"turn {t} check" for t in range(1, turns + 1)], "guidance score"]
    assert all(c.seat == "judge" and c.call.model == NEW_JUDGE for c in called)
    assert [c.call.request["messages"] for c in called] == [b["messages"] for b in judged]
    with open_store() as store:
        from proactive_tui.store.queries import load_events

        original_calls = [e for e in load_events(store, session_id) if e.type == "model_called" and e.seat == "judge"]
    assert sorted(json.dumps(c.call.request["messages"]) for c in original_calls) == \
        sorted(json.dumps(c.call.request["messages"]) for c in called)
    # the re-graded record: the session's dialogue, the new judge's scores
    assert regraded.section.guidance.overall == 4 and regraded.section.planning.score == 3
    assert regraded.messages == load_record_of(session_id).messages
    # `sessions show` lists the grading after the session's own scores
    assert main(["sessions", "show", session_id]) == 0
    shown = capsys.readouterr().out
    assert "re-gradings (1" in shown and NEW_JUDGE in shown and grading.id in shown
    assert shown.index("re-gradings") > shown.index("7/10")


def load_record_of(session_id: str):
    with open_store() as store:
        return load_record(store, session_id)


def test_proactivebench_metrics_are_recomputed_from_the_flipped_verdicts(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=two_judges(RUNS["proactivebench"].responder)) as server:
        session_id = run_session("proactivebench", server, tmp_path / "b.json")
        before = snapshot(session_id)
        original = load_record_of(session_id)
        capsys.readouterr()
        assert main(["regrade", session_id, "--judge", NEW_JUDGE, "--api-base", server.base_url, "--json"]) == 0
    assert snapshot(session_id) == before
    line = json.loads(capsys.readouterr().out)
    outcomes = [ev.outcome for ev in original.section.events]
    flipped = {"TP": "FP", "FP": "TP", "TN": "FN", "FN": "TN"}
    expected = Confusion()
    for outcome, ev in zip(outcomes, original.section.events):
        proposed = bool(ev.final.tasks)
        expected = expected.add(flipped[outcome], int(proposed), int(proposed and flipped[outcome] == "TP"))
    with open_store() as store:
        (grading,) = store.gradings(session_id)
        regraded = grading_record(store, grading)
    assert regraded.section.confusion == expected and regraded.section.metrics == metrics(expected)
    assert [ev.outcome for ev in regraded.section.events] == [flipped[o] for o in outcomes]
    assert all(v.by == NEW_JUDGE and v.thought == "contrary"
               for ev in regraded.section.events for a in ev.attempts for v in a.verdicts)
    assert original.section.metrics.f1 != regraded.section.metrics.f1
    assert line["judge"] == NEW_JUDGE and line["after"]["f1"] == regraded.score("f1").display
    assert line["before"]["f1"] == original.score("f1").display
    assert {c["name"] for c in line["changes"]} >= {"f1"}
    events = parse_grading_events(grading.events)
    assert {e.type for e in events} >= {"proactivebench.proposal_verdict", "proactivebench.proposal_metrics",
                                        "model_called"}


def test_unknown_ids_chronos_and_a_failing_judge_are_reported_while_others_are_regraded(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=two_judges(RUNS["proactiveeval"].responder)) as server:
        good = run_session("proactiveeval", server, tmp_path / "e.json")
    with FakeOpenAIServer(responder=RUNS["chronos"].responder) as server:
        chronos = run_session("chronos", server, tmp_path / "c.json")
    chronos_before = snapshot(chronos)
    capsys.readouterr()
    with FakeOpenAIServer(responder=two_judges(RUNS["proactiveeval"].responder)) as server:
        assert main(["regrade", "no-such-session", chronos, good, "--judge", NEW_JUDGE,
                     "--api-base", server.base_url]) == 1
        out = capsys.readouterr()
        # a judge whose replies cannot be read: reported, and no half grading is kept
        assert main(["regrade", good, "--judge", "openai/garbled", "--api-base", server.base_url]) == 1
        garbled = capsys.readouterr().err
    assert "no session with id 'no-such-session'" in out.err
    assert f"session {chronos}: Chronos sessions cannot be re-graded: they are graded by rules (the oracle)" in out.err
    assert "overall 7/10 → 4/10" in out.out
    assert "the judge openai/garbled failed" in garbled and "nothing was stored" in garbled
    with open_store() as store:
        assert [g.judge for g in store.gradings(good)] == [NEW_JUDGE]
        assert store.gradings(chronos) == []
    assert snapshot(chronos) == chronos_before


def test_the_v4_migration_adds_gradings_and_keeps_a_v3_database_readable(tmp_path: Path) -> None:
    """A database written before re-grading existed (schema v3) opens, is upgraded with a backup,
    and every session in it reads exactly as before, with no gradings yet."""
    with FakeOpenAIServer(responder=RUNS["proactiveeval"].responder) as server:
        session_id = run_session("proactiveeval", server, tmp_path / "p.json")
    before = load_record_of(session_id)
    with open_store() as store:
        row, rows = store.session(session_id), store.event_rows(session_id)
        summary_before = next(s for s in list_sessions(store) if s.id == session_id).model_dump()
    old = tmp_path / "old" / "sessions.db"
    old.parent.mkdir()
    with sqlite3.connect(old) as raw:
        for statement in [s for step in MIGRATIONS[:3] for s in step]:
            raw.execute(statement)
        raw.execute("PRAGMA user_version=3")
        values = row.model_dump()
        for col in ("seats", "models", "settings", "spec", "summary"):
            values[col] = json.dumps(values[col]) if values[col] is not None else None
        columns = list(values)
        raw.execute(f"INSERT INTO sessions ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                    [values[c] for c in columns])
        raw.executemany("INSERT INTO events (session_id, seq, type, payload, ts) VALUES (?, ?, ?, ?, ?)",
                        [(session_id, *r) for r in rows])
    with Store(old) as store:
        assert store.schema_version() == SCHEMA_VERSION >= 4
        assert load_record(store, session_id).model_dump() == before.model_dump()
        assert next(s for s in list_sessions(store) if s.id == session_id).model_dump() == summary_before
        assert store.event_rows(session_id) == rows and store.gradings(session_id) == []
        store.add_grading(GradingRow(id="g1", session_id=session_id, judge="openai/x", created_at="2026-01-01T00:00:00",
                                     events=[{"type": "x"}], summary={"overall": "5/10"}))
        assert store.gradings(session_id)[0].summary == {"overall": "5/10"}
        assert store.delete_session(session_id) and store.gradings(session_id) == []
    with sqlite3.connect(old.with_name("sessions.v3.backup.db")) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 3
        assert raw.execute("SELECT count(*) FROM events").fetchone()[0] == len(rows)


async def test_history_regrades_the_highlighted_session_in_a_worker(tmp_path: Path, monkeypatch) -> None:
    """`g` on a row asks for the judge (prefilled with the session's), re-grades without blocking
    the screen, and notifies how the scores changed; the session's own grading stays. `G` then
    lists the grading beside the session's own and opens what its judge was sent."""
    from ui_helpers import wait_for
    from textual.widgets import Input

    from proactive_tui.ui.app import ProactiveApp
    from proactive_tui.ui.screens.history import HistoryScreen
    from proactive_tui.ui.screens.regrade_modal import RegradeModal
    from proactive_tui.ui.screens.call_inspector import CallInspector
    from proactive_tui.ui.screens.gradings_modal import GradingsModal
    from textual.widgets import OptionList, Static

    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")
    with FakeOpenAIServer(responder=two_judges(RUNS["proactiveeval"].responder)) as server:
        # headless `run` starts its own event loop: in a thread, beside this test's
        session_id = await asyncio.to_thread(run_session, "proactiveeval", server, tmp_path / "h.json")
        before = snapshot(session_id)
        app = ProactiveApp()
        notes: list[str] = []
        original_notify = app.notify

        def notify(message, *args, **kwargs):
            notes.append(str(message))
            return original_notify(message, *args, **kwargs)

        monkeypatch.setattr(app, "notify", notify)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("h")
            await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
            history = app.screen
            monkeypatch.setattr(history, "notify", notify)
            await pilot.press("g")
            await wait_for(pilot, lambda: isinstance(app.screen, RegradeModal))
            model = app.screen.query_one("#regrade-model", Input)
            assert model.value == "openai/judge-m"  # the session's judge
            assert app.screen.query_one("#regrade-api-base", Input).value == server.base_url
            model.value = NEW_JUDGE
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
            await wait_for(pilot, lambda: any("re-graded by" in n for n in notes))
            # G: the grading, beside the session's own, and what its judge was sent
            await pilot.press("G")
            await wait_for(pilot, lambda: isinstance(app.screen, GradingsModal))
            await pilot.pause()
            listing = app.screen.query_one("#grading-list", OptionList)
            assert listing.option_count == 1
            line = str(listing.get_option_at_index(0).prompt)
            assert NEW_JUDGE in line and "overall 7/10 → 4/10" in line and "plan 6/10 → 3/10" in line
            assert "overall 7/10" in app.screen.query_one("#own-grading", Static).visual.plain
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, CallInspector))
            calls = app.screen.calls
            assert calls and {c.call.model for c in calls} == {NEW_JUDGE}  # the new judge's calls, not the session's
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, GradingsModal))
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
    done = next(n for n in notes if "re-graded by" in n)
    assert NEW_JUDGE in done and "overall 7/10 → 4/10" in done and "plan 6/10 → 3/10" in done
    assert snapshot(session_id) == before
    with open_store() as store:
        assert [g.judge for g in store.gradings(session_id)] == [NEW_JUDGE]


def test_proactivebench_retries_are_judged_as_recorded(tmp_path: Path, capsys) -> None:
    """With `retries`, the retry a rejection by the session's judge caused stays (the dialogue is
    frozen): the new judge judges both attempts and the event counts on its last, as it did."""
    run = RUNS["proactivebench"]
    args = [a for a in run.args if a not in ("--max-events", "2")]
    with FakeOpenAIServer(responder=two_judges(run.responder)) as server:
        out = tmp_path / "r.json"
        assert main(["run", run.env_id, *args, "--max-events", "4", "--retries", "1", "--api-base", server.base_url,
                     "--out", str(out), "--quiet"]) == 0
        session_id = json.loads(out.read_text(encoding="utf-8"))["id"]
        original = load_record_of(session_id)
        assert [ev.outcome for ev in original.section.events] == ["TP", "TP", "FN", "FN"]
        assert [len(ev.attempts) for ev in original.section.events] == [1, 1, 2, 2]
        assert main(["regrade", session_id, "--judge", NEW_JUDGE, "--api-base", server.base_url]) == 0
    with open_store() as store:
        (grading,) = store.gradings(session_id)
        regraded = grading_record(store, grading)
    section = regraded.section
    assert [len(ev.attempts) for ev in section.events] == [1, 1, 2, 2]  # no retry removed, none added
    assert [[v.judgement for a in ev.attempts for v in a.verdicts] for ev in section.events] == \
        [["rejected"], ["rejected"], ["accepted", "accepted"], ["accepted", "accepted"]]
    assert [ev.outcome for ev in section.events] == ["FP", "FP", "TN", "TN"]
    assert section.confusion == Confusion(fp=2, tn=2, proposals=2, accepted_proposals=0)
    assert section.metrics == metrics(section.confusion)
