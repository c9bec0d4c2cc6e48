"""The results screen: a report folder from a tiny batch (scripted seats, `--no-store`, nothing
reaches a network) opened in the playground: its tables, sorting, the model filter, the failing
filter, the drill-down into a session, a bad folder, and snapshots at 120x40 and 80x24."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from ui_helpers import screen_lines, settle, wait_for
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.open_report import OpenReportModal
from proactive_tui.ui.screens.results import ResultsScreen
from proactive_tui.ui.screens.text_modal import TextModal
from proactive_tui.ui.widgets.bar_chart import BarChart, bar

WRITTEN = "2026-01-02T03:04:05+00:00"
_BUILT: dict[str, Path] = {}


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def _build(out: Path) -> None:
    """Three families, two agents, two repeats; m2's guidance judge scores 9 (m1's 6), and m2's
    second ProactiveEval session fails (kept in failed/)."""
    from engine_helpers import scripted_agent, scripted_user
    from test_eval_batch import Seats, run

    from proactive_tui.core.participants import ScriptedParticipant
    from proactive_tui.core.spec import build_session
    from proactive_tui.families.proactiveeval.judges import GuidanceJudgement
    from engine_helpers import scripted_judge

    class Mixed(Seats):
        def __call__(self, spec, env, gateway):
            model, seed = spec.roles.agent.model, spec.roles.agent.seed
            if env.family != "proactiveeval":
                return super().__call__(spec, env, gateway)
            if model == "m2" and seed == 1:
                raise RuntimeError("the judge went away (HTTP 503)")
            judge = scripted_judge()
            if model == "m2":
                base = judge.structured

                def structured(request, schema):
                    verdict = base(request, schema)
                    return verdict.model_copy(update={"overall": 9}) if schema is GuidanceJudgement else verdict

                judge = ScriptedParticipant([], structured=structured, label="scripted-judge")
            seats = {"agent": scripted_agent(), "user": scripted_user(), "judge": judge}
            return build_session(spec, env, gateway, seats=seats)

    run(["proactiveeval/persuasion/fair/0", "proactivebench/coding_01", "chronos/car-purchase/positive",
         "--agent", "m1", "--agent", "m2", "--agreeableness", "low", "--repeats", "2", "--max-turns", "1",
         "--max-events", "2", "--no-store", "--concurrency", "1", "--out", str(out)], Mixed())
    _fix_written_time(out)


def _fix_written_time(out: Path) -> None:
    report = json.loads((out / "report.json").read_text())
    report["timing"]["generated_at"] = WRITTEN  # a fixed time, so the snapshots are stable
    (out / "report.json").write_text(json.dumps(report, indent=2))


def _built_copy(name: str, build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder `build` makes (once per run), copied as `name` into the test's own working
    folder and given relative (shown as given: stable)."""
    if name not in _BUILT:
        built = tmp_path / f"built-{name}"
        build(built)
        _BUILT[name] = built
    target = tmp_path / "work" / name
    shutil.copytree(_BUILT[name], target)
    monkeypatch.chdir(target.parent)
    return Path(name)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The report folder as `report` in the test's own working folder."""
    return _built_copy("report", _build, tmp_path, monkeypatch)


def cells(screen: ResultsScreen) -> list[list[str]]:
    grid = screen.table
    return [[str(c).strip() for c in grid.get_row_at(i)] for i in range(grid.row_count)]


async def open_results(app, pilot) -> ResultsScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen))
    await settle(pilot)
    return app.screen


async def to_table(pilot, screen: ResultsScreen, table_id: str) -> None:
    while screen.current[1].id != table_id or screen.current[0] != "proactiveeval":
        await pilot.press("t")
    await pilot.pause()


async def test_the_tables_show_the_reports_numbers_and_where_they_came_from(folder) -> None:
    report = json.loads((folder / "report.json").read_text())
    app = ProactiveApp(report=str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(app, pilot)
        source = str(screen.query_one("#results-source", Static).render())
        assert "Read from files" in source and "report written" not in source
        assert "report" in source and WRITTEN in source and "11/12 sessions finished (partial: 1 not finished)" in source
        assert "judge local/smollm2" in source and "user local/smollm2" in source
        # every table of every family is there, numbers as report.md prints them
        assert [t.id for _, t in screen.tables] == [t["id"] for f in report["families"].values() for t in f]
        await to_table(pilot, screen, "guidance")
        # --max-turns 1 is not the paper's protocol: every row of its numbers says so
        turns = "not the protocol: max turns 1 (the paper's: 6)"
        assert cells(screen) == [["m1", "6.00 ± 0.00", "6.00 ± 0.00", turns], ["m2", "9.00", "9.00", turns]]
        md = (folder / "report.md").read_text()
        assert f"| m1 | 6.00 ± 0.00 | 6.00 ± 0.00 | {turns} |" in md and f"| m2 | 9.00 | 9.00 | {turns} |" in md
        chart = screen.query_one(BarChart)
        assert [(label, text) for label, _, text in chart.rows] == [("m1", "6.00 ± 0.00"), ("m2", "9.00")]
        # the sessions of the highlighted row: m1's two ProactiveEval sessions
        assert screen.sessions.row_count == 2 and all(e.key.agent == "m1" for e in screen.listed)


async def test_sorting_by_a_column_reorders_the_rows(folder) -> None:
    app = ProactiveApp(report=str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(app, pilot)
        await to_table(pilot, screen, "guidance")
        screen.table.move_cursor(column=2)  # Overall
        await pilot.press("s")
        await pilot.pause()
        assert [r[0] for r in cells(screen)] == ["m2", "m1"]  # highest first
        assert "▼" in str(screen.table.ordered_columns[2].label)
        await pilot.press("s")
        await pilot.pause()
        assert [r[0] for r in cells(screen)] == ["m1", "m2"]
        # a click on a header sorts too (by that column, highest first)
        screen.post_message(DataTable.HeaderSelected(screen.table, screen.table.ordered_columns[1].key, 1,
                                                     screen.table.ordered_columns[1].label))
        await pilot.pause()
        assert screen.sort_key == "persuasion" and [r[0] for r in cells(screen)] == ["m2", "m1"]


async def test_the_model_filter_and_the_text_filter_narrow_the_rows(folder) -> None:
    app = ProactiveApp(report=str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(app, pilot)
        await to_table(pilot, screen, "consistency")
        assert {r[0] for r in cells(screen)} == {"m1", "m2"}
        await pilot.press("m")
        await pilot.pause()
        assert {r[0] for r in cells(screen)} == {"m1"} and "model m1" in str(screen.table.border_subtitle)
        await pilot.press("m")
        await pilot.pause()
        assert {r[0] for r in cells(screen)} == {"m2"}
        await pilot.press("m")
        await pilot.pause()
        await pilot.press("slash")
        await pilot.press(*"overall")
        await pilot.pause()
        assert [r[:2] for r in cells(screen)] == [["m1", "overall"], ["m2", "overall"]]
        await pilot.press("escape")
        await pilot.pause()
        assert len(cells(screen)) == 4 and not screen.query_one("#results-filter", Input).has_class("shown")


async def test_the_failing_filter_lists_the_failed_session(folder) -> None:
    app = ProactiveApp(report=str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(app, pilot)
        await pilot.press("f")
        await pilot.pause()
        (entry,) = screen.listed
        assert entry.key.agent == "m2" and entry.key.repeat == 1 and "the judge went away" in entry.reason
        row = [str(c) for c in screen.sessions.get_row_at(0)]
        # the exception's words say "judge", but nothing in the files says which seat failed
        assert row[0].startswith("proactiveeval/persuasion/fair/0 r1") and row[2] == "m2"
        assert row[1] == "errored, unknown seat: RuntimeError: the judge went away (HTTP 503)"
        assert str(screen.sessions.border_title) == "Errors · all (1)"
        await pilot.press("enter")  # a failure with no record: why it failed, and the file
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        assert "the judge went away" in str(app.screen.sections)


async def test_errored_sessions_are_counted_apart_from_those_that_failed_the_task(folder) -> None:
    """m2's second ProactiveEval session errored (no verdict); m1's two ran and failed the task
    (guidance 6 < 7); m2's first passed (9). ProactiveBench's sessions each have an event judged
    wrong and Chronos's did not succeed: they ran and failed the task too."""
    from proactive_tui.evalrun.opened import open_folder

    assert open_folder(folder).outcome_counts() == {"passed": 1, "failed the task": 10, "errored": 1}
    app = ProactiveApp(report=str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(app, pilot)
        line = str(screen.query_one("#results-outcomes", Static).render())
        assert "Sessions: 1 passed · 10 failed the task · 1 errored (no verdict)" in line
        await to_table(pilot, screen, "guidance")
        outcomes = {}
        for model in ("m1", "m2"):
            screen.table.move_cursor(row=[r.model for r in screen.rows].index(model))
            await pilot.pause()
            outcomes[model] = sorted(str(screen.sessions.get_row_at(i)[1]) for i in range(screen.sessions.row_count))
        assert outcomes["m1"] == ["failed the task · Guidance (overall) 6/10, Plan 7/10"] * 2
        assert outcomes["m2"] == ["passed · Guidance (overall) 9/10, Plan 7/10"]  # the errored one is in no row
        await pilot.press("f")
        await pilot.pause()
        assert [str(c) for c in screen.sessions.get_row_at(0)][1].startswith("errored, unknown seat: RuntimeError")


async def test_the_shown_tables_deviations_from_the_protocol_are_on_screen(folder) -> None:
    """The folder ran ProactiveEval with --max-turns 1 and ProactiveBench with --max-events 2."""
    app = ProactiveApp(report=str(folder))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_results(app, pilot)
        await to_table(pilot, screen, "guidance")
        line = str(screen.query_one("#results-outcomes", Static).render())
        assert "Not the protocol: max turns 1 (the paper's: 6)" in line
        assert screen.table.ordered_columns[-1].label.plain == "protocol"
        while screen.current[0] != "proactivebench":
            await pilot.press("t")
        await pilot.pause()
        line = str(screen.query_one("#results-outcomes", Static).render())
        assert "Not the protocol: first 2 events of each trace only" in line and "max turns" not in line
        assert "Accept Rate" in [c.label.plain for c in screen.table.ordered_columns]


async def test_enter_on_a_session_opens_its_transcript_and_judges(folder) -> None:
    app = ProactiveApp(report=str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(app, pilot)
        await to_table(pilot, screen, "guidance")
        await pilot.press("enter")  # from the table to its row's sessions
        await pilot.pause()
        assert screen.focused is screen.sessions
        entry = screen.chosen
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        text = app.screen.sections[0][1]
        assert "agent says turn 1" in text and "user answers turn 1" in text  # the transcript
        assert "plan is close to the reference" in text and "scored 1 turns" in text  # the judges
        assert entry.key.agent == "m1" and "from report/sessions/" in app.screen.title_text


async def test_a_bad_folder_gives_a_clear_error_and_no_crash(tmp_path, folder, capsys) -> None:
    (tmp_path / "empty").mkdir()
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"open a report folder")
        await wait_for(pilot, lambda: "Open a report folder" in " ".join(screen_lines(app)))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, OpenReportModal))
        await settle(pilot)
        modal = app.screen
        modal.query_one(Input).value = str(tmp_path / "empty")
        await pilot.press("enter")
        await pilot.pause()
        error = str(modal.query_one("#open-report-error", Static).render())
        assert "is not a report folder: it holds neither report.json nor sessions/" in error
        modal.query_one(Input).value = str(tmp_path / "nowhere")
        await pilot.press("enter")
        await pilot.pause()
        assert "does not exist" in str(modal.query_one("#open-report-error", Static).render())
        assert app.screen is modal
        modal.query_one(Input).value = str(folder)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen))
    # the same from the command line: an error before the playground starts
    from proactive_tui.cli.main import main

    capsys.readouterr()
    assert main(["--report", str(tmp_path / "empty")]) == 2
    assert "is not a report folder" in capsys.readouterr().err
    # and `report show` names the playground's way in
    assert main(["report", "show", str(folder)]) == 0
    assert "proactive-tui --report report" in " ".join(capsys.readouterr().err.split())


def test_bars_are_eighth_blocks() -> None:
    assert bar(1.0, 4) == "████" and bar(0.0, 4) == "" and bar(0.5, 3) == "█▌" and bar(1 / 32, 4) == "▏"


def test_snapshot_results_120x40(snap_compare, folder) -> None:
    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ResultsScreen))
        await settle(pilot)

    assert snap_compare(ProactiveApp(report=str(folder)), terminal_size=(120, 40), run_before=run_before)


def test_snapshot_results_80x24_light(snap_compare, folder) -> None:
    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ResultsScreen))
        pilot.app.theme = "proactive-light"
        await to_table(pilot, pilot.app.screen, "guidance")
        await settle(pilot)

    assert snap_compare(ProactiveApp(report=str(folder)), terminal_size=(80, 24), run_before=run_before)


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    """One session run without --no-store: it is in this test's session store too."""
    from test_eval_batch import Seats, run

    out = tmp_path / "stored"
    assert run(["proactiveeval/persuasion/fair/0", "--agent", "m1", "--agreeableness", "low", "--max-turns", "1",
                "--out", str(out)], Seats()) == 0
    return out


async def test_a_session_the_store_has_replays_in_its_session_screen(stored) -> None:
    """Enter replays the session as the history does, with the family's transcript and judge panels."""
    from proactive_tui.families.proactiveeval.ui.final_scores import FinalScores
    from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen

    app = ProactiveApp(report=str(stored))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(app, pilot)
        await to_table(pilot, screen, "guidance")
        await pilot.press("enter", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ProactiveEvalSessionScreen))
        replay = app.screen
        await settle(pilot)
        assert replay.replaying and replay.query_one(FinalScores).score is not None
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)


def test_the_sessions_behind_a_row_are_the_ones_its_figures_count(folder) -> None:
    from proactive_tui.evalrun.opened import open_folder

    opened = open_folder(folder)
    behind = {(f, t.id, r.model, r.group): opened.row_sessions(f, r) for f, t in opened.tables() for r in t.rows}
    assert len(behind[("proactiveeval", "consistency", "m1", "Persuasion")]) == 2
    assert len(behind[("proactiveeval", "agreeableness", "m2", "low")]) == 1  # the failed one is not behind it
    assert len(behind[("proactivebench", "splits", "m1", "sample_coding")]) == 2
    assert len(behind[("proactivebench", "splits", "m2", "all traces")]) == 2
    assert {s.key.agent for s in behind[("chronos", "tiers", "m2", "simple")]} == {"m2"}
    # a row's session count agrees with the table's own count where it has one
    for (family, table, model, group), sessions in behind.items():
        row = next(r for f, t in opened.tables() if (f, t.id) == (family, table) for r in t.rows
                   if (r.model, r.group) == (model, group))
        if "sessions" in row.values:
            assert row.values["sessions"] == len(sessions)


async def test_model_names_are_shown_literally(folder) -> None:
    """Model names are data (a user's config): markup and escape sequences in them stay text."""
    name = "[red]m2[/]\x1b[31m"
    data = json.loads((folder / "report.json").read_text())
    data["agents"] = ["m1", name]
    for tables in data["families"].values():
        for table in tables:
            for row in table["rows"]:
                row["model"] = name if row["model"] == "m2" else row["model"]
    (folder / "report.json").write_text(json.dumps(data))
    app = ProactiveApp(report=str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(app, pilot)
        await pilot.press("m", "m")
        await settle(pilot)
        assert [r[0] for r in cells(screen)] == ["[red]m2[/]"]
        shown = "\n".join(screen_lines(app))
        assert "model [red]m2[/]" in shown and "[red]m2[/] · simple" in shown and "\x1b" not in shown


# -- who failed, the score filter, the chart's last bar ----------------------------------------

def _build_failures(out: Path) -> None:
    """Four agents; each fails its own way (or not), through the real protocols:

    - m1: ProactiveEval's guidance judge gives no usable verdict (a judge failure, "guidance score");
      ProactiveBench's user seat, its judge, gives no usable verdict on either event ("event verdict");
    - m2: ProactiveEval's agent gives no usable plan (an agent failure, "planning"); its guidance is 6;
    - m3: ProactiveEval's plan judge fails, in a record written before the record kept who failed
      (its `error_details` removed from the file: an unknown seat); its guidance is 9;
    - m4: nothing fails; guidance 6.
    """
    from engine_helpers import scripted_agent, scripted_judge, scripted_user
    from test_eval_batch import Seats, bench_agent, bench_judge, run

    from proactive_tui.core.participants import ScriptedParticipant
    from proactive_tui.core.spec import build_session
    from proactive_tui.families.proactivebench.judges import JudgeVerdict
    from proactive_tui.families.proactiveeval.judges import GuidanceJudgement, PlanDraft, PlanJudgement
    from proactive_tui.llm.errors import ModelError

    def failing(base: ScriptedParticipant, schema_to_fail: type, label: str, update: dict | None = None):
        def structured(request, schema):
            if schema is schema_to_fail:
                raise ModelError(f"{label}: no usable {schema.__name__} in 3 replies", "structured", label)
            verdict = base.structured(request, schema)
            return verdict.model_copy(update=update) if update and schema is GuidanceJudgement else verdict

        return ScriptedParticipant(base.script, structured=structured, label=base.info.label)

    class Failing(Seats):
        def __call__(self, spec, env, gateway):
            model = spec.roles.agent.model
            if env.family == "proactivebench":
                judge = failing(bench_judge(), JudgeVerdict, "scripted-judge") if model == "m1" else bench_judge()
                return build_session(spec, env, gateway, seats={"agent": bench_agent(), "user": judge})
            agent, judge = scripted_agent(), scripted_judge()
            if model == "m1":
                judge = failing(judge, GuidanceJudgement, "scripted-judge")
            elif model == "m2":
                agent = failing(agent, PlanDraft, "scripted-agent")
            elif model == "m3":
                judge = failing(judge, PlanJudgement, "scripted-judge", update={"overall": 9})
            return build_session(spec, env, gateway, seats={"agent": agent, "user": scripted_user(), "judge": judge})

    agents = [a for m in ("m1", "m2", "m3", "m4") for a in ("--agent", m)]
    run(["proactiveeval/persuasion/fair/0", "proactivebench/coding_01", *agents, "--agreeableness", "low",
         "--max-turns", "1", "--max-events", "2", "--no-store", "--concurrency", "1", "--out", str(out)], Failing())
    for path in (out / "sessions").glob("*.json"):
        data = json.loads(path.read_text())
        if data["key"]["agent"] == "m3" and data["key"]["family"] == "proactiveeval":
            assert data["record"].pop("error_details")  # as a record written before the field
            path.write_text(json.dumps(data))
    _fix_written_time(out)


@pytest.fixture
def failures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _built_copy("failures", _build_failures, tmp_path, monkeypatch)


def listed(screen: ResultsScreen) -> list[tuple[str, str]]:
    """(family, agent) of the sessions the pane lists."""
    return sorted((e.key.family, e.key.agent) for e in screen.listed)


def test_the_record_keeps_who_failed(failures) -> None:
    """The run records say which seat failed and for what; an old record loads, its seat unknown."""
    from proactive_tui.evalrun.opened import open_folder

    opened = open_folder(failures)
    who = {(s.key.family, s.key.agent): [(f.kind, f.who) for f in s.failures] for s in opened.sessions}
    assert who[("proactiveeval", "m1")] == [("judge", "guidance score · judge seat scripted-judge")]
    assert who[("proactiveeval", "m2")] == [("seat", "planning · agent seat scripted-agent")]
    assert who[("proactiveeval", "m3")] == [("unknown", "unknown seat")]
    assert who[("proactivebench", "m1")] == [("judge", "event verdict · user seat scripted-judge")] * 2
    assert who[("proactiveeval", "m4")] == who[("proactivebench", "m2")] == []
    # an event log from before `judgement` was kept names the seat only: the agent never judges,
    # a user seat may (ProactiveBench's does), so that one is not guessed
    from proactive_tui.evalrun.opened import failures_of

    record = next(s.record for s in opened.sessions if (s.key.family, s.key.agent) == ("proactivebench", "m1"))
    for detail in record.error_details:
        detail.judgement = None
    assert [(f.kind, f.who) for f in failures_of(record)][0] == (
        "unknown", "event verdict · user seat scripted-judge (judging or not: not recorded)")
    record.error_details[0].seat = "agent"
    assert failures_of(record)[0].kind == "seat"


async def test_the_model_call_that_ended_a_session_names_its_seat() -> None:
    """An error no protocol step catches still names the seat: the participant marks it."""
    from proactive_tui.core.participants import LLMParticipant, ReplyRequest, failed_seat
    from proactive_tui.llm.errors import ModelError

    class Down:
        async def complete(self, *args, **kwargs):
            raise ModelError("m: cannot reach the server", "unreachable", "m")

    class Settings:
        model = "m"

    with pytest.raises(ModelError) as raised:
        await LLMParticipant(Down(), Settings()).reply(ReplyRequest(seat="user", system="", messages=[]))
    assert failed_seat(raised.value) == "user" and failed_seat(ValueError()) is None
    # through a protocol: the simulated user's model is down, the session ends in error, and the
    # record says whose call it was (not a judgement: a dialogue seat's reply)
    from engine_helpers import collect, make_session

    from proactive_tui.core.run_record import fold

    record = fold(await collect(make_session(user=LLMParticipant(Down(), Settings()))))
    assert record.termination.reason == "error" and record.errors == ["m: cannot reach the server"]
    detail = record.error_detail(0)
    assert (detail.seat, detail.judgement, detail.fatal) == ("user", False, True)


async def test_the_failing_filter_tells_judges_from_agents(failures) -> None:
    app = ProactiveApp(report=str(failures))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(app, pilot)
        title = lambda: str(screen.sessions.border_title)  # noqa: E731
        steps = []
        for _ in range(len(screen.failing_steps)):
            await pilot.press("f")
            await pilot.pause()
            steps.append((title(), listed(screen)))
            assert not screen.query_one(BarChart).display  # the list takes the chart's half
        assert steps == [
            ("Errors · all (4)", [("proactivebench", "m1"), ("proactiveeval", "m1"), ("proactiveeval", "m2"),
                                           ("proactiveeval", "m3")]),
            ("Errors · judge failures (2)", [("proactivebench", "m1"), ("proactiveeval", "m1")]),
            ("Errors · judge failures: event verdict · user seat scripted-judge (1)", [("proactivebench", "m1")]),
            ("Errors · judge failures: guidance score · judge seat scripted-judge (1)", [("proactiveeval", "m1")]),
            ("Errors · agent/user failures (1)", [("proactiveeval", "m2")]),
            ("Errors · unknown seat or role (1)", [("proactiveeval", "m3")]),
        ]
        assert str(screen.sessions.get_row_at(0)[1]) == (
            "error, unknown seat: plan scoring failed: scripted-judge: no usable PlanJudgement in 3 replies")
        await pilot.press("F")  # back one step
        await pilot.pause()
        assert title() == "Errors · agent/user failures (1)"
        row = [str(c) for c in screen.sessions.get_row_at(0)]
        assert row[1] == "error, planning · agent seat scripted-agent: planning failed: scripted-agent: no usable PlanDraft in 3 replies"
        await pilot.press("f", "f")  # past the last step: off, the highlighted row's sessions again
        await pilot.pause()
        assert screen.failing_step is None and title().startswith("Sessions of ")
        assert screen.query_one(BarChart).display


async def test_the_score_filter_narrows_the_sessions_and_says_what_is_wrong(failures) -> None:
    app = ProactiveApp(report=str(failures))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(app, pilot)
        await to_table(pilot, screen, "consistency")  # its "overall" rows hold every session of a model
        box = screen.query_one("#results-score", Input)
        problem = screen.query_one("#results-score-problem", Static)

        async def score(text: str) -> None:
            await pilot.press("v")
            await pilot.pause()
            assert screen.focused is box
            box.value = text
            await pilot.press("enter")
            await pilot.pause()

        await pilot.press("f")  # every failing session
        await pilot.pause()
        await score("[b]>>7")  # bad input: said, shown literally, the box stays open
        assert screen.focused is box and problem.display
        assert "not a score threshold: '[b]>>7'" in str(problem.render()) and screen.score_filter is None
        box.value = "nope<1"
        await pilot.press("enter")
        await pilot.pause()
        assert "no session of the folder has a score named 'nope'" in str(problem.render())
        assert "overall" in str(problem.render()) and screen.focused is box
        await pilot.press("escape")  # closes the box, nothing set
        await pilot.pause()
        assert not box.display and not problem.display and screen.score_filter is None
        await score(">=7")
        # m3's guidance is 9; m1's guidance judge failed: its plan 7 is not taken for its headline
        assert listed(screen) == [("proactiveeval", "m3")] and not problem.display
        assert str(screen.sessions.border_title) == (
            "Errors · all · headline score (proactivebench f1, proactiveeval overall) >= 7 (1/4)")
        await score("plan>=7")  # a named score: m1's and m2's... m2 made no plan; m1's plan is 7
        assert listed(screen) == [("proactiveeval", "m1")]
        await pilot.press("f", "f", "f", "f", "f", "f")  # off: the highlighted row's sessions
        await pilot.pause()
        await score("<7")
        assert screen.failing_step is None
        at = {(r.model, r.group): i for i, r in enumerate(screen.rows)}
        screen.table.move_cursor(row=at[("m3", "overall")])  # guidance 9: none passes
        await pilot.pause()
        assert screen.listed == [] and str(screen.sessions.border_title) == (
            "Sessions of m3 · overall · headline score (proactiveeval overall) < 7 (0/1)")
        screen.table.move_cursor(row=at[("m4", "overall")])  # guidance 6
        await pilot.pause()
        assert listed(screen) == [("proactiveeval", "m4")]
        screen.table.move_cursor(row=at[("m3", "overall")])
        await pilot.pause()
        assert screen.listed == []
        await pilot.press("escape")  # clears the filter: the row's sessions again
        await pilot.pause()
        assert screen.score_filter is None and str(screen.sessions.border_title) == "Sessions of m3 · overall (1)"
        assert listed(screen) == [("proactiveeval", "m3")]
        assert app.screen is screen


async def test_the_chart_scrolls_to_its_last_bar(failures) -> None:
    """At 80x24 the chart shows a few bars of a long table (ProactiveBench's splits, 12 rows);
    focused, End reaches the last one, and the bar of the table's cursor row is kept in view."""
    app = ProactiveApp(report=str(failures))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_results(app, pilot)
        while len(screen.rows) < 12:
            await pilot.press("t")
            await pilot.pause()
        chart = screen.query_one(BarChart)
        await settle(pilot)
        first, last = chart.in_view()
        assert first == 1 and last < len(chart.rows)
        assert str(chart.border_subtitle) == f"bars 1-{last} of {len(chart.rows)} · c then ↑↓"
        await pilot.press("c")
        await pilot.pause()
        assert screen.focused is chart
        await pilot.press("end")
        await wait_for(pilot, lambda: chart.in_view()[1] == len(chart.rows))
        area = chart.content_region
        drawn = [line[area.x:area.right].strip() for line in screen_lines(app)[area.y:area.bottom]]
        assert chart.rows[-1][0] == "m4 · all traces" and drawn[-1].startswith("m4 · all")  # drawn, in view
        await pilot.press("home")
        await wait_for(pilot, lambda: chart.in_view()[0] == 1)
        screen.table.focus()
        screen.table.move_cursor(row=len(screen.rows) - 1)  # the cursor's bar comes into view
        await wait_for(pilot, lambda: chart.in_view()[1] == len(chart.rows))
        assert chart.bars.current == len(screen.rows) - 1


def test_snapshot_results_failing_judge_80x24_light(snap_compare, failures) -> None:
    """One judge's failures at 80x24 in the light theme: the list takes the chart's half, so the
    step's name and who failed are readable."""
    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ResultsScreen))
        pilot.app.theme = "proactive-light"
        await settle(pilot)
        await pilot.press("f", "f", "f", "f")  # all, judges, event verdict, guidance score
        await wait_for(pilot, lambda: "guidance score" in str(pilot.app.screen.sessions.border_title))
        await settle(pilot)

    assert snap_compare(ProactiveApp(report=str(failures)), terminal_size=(80, 24), run_before=run_before)


def test_chart_labels_drop_the_shared_prefix_and_keep_their_distinguishing_end() -> None:
    from proactive_tui.ui.widgets.bar_chart import short_labels

    assert short_labels(["openai/a · low", "openai/b · medium"]) == ["a · low", "b · medium"]
    assert short_labels(["openai/a", "anthropic/b"]) == ["openai/a", "anthropic/b"]  # nothing shared to a /
    assert short_labels(["local/smollm2"]) == ["local/smollm2"]


def test_a_long_chart_label_shortens_its_longest_part() -> None:
    from proactive_tui.ui.widgets.bar_chart import fit_label

    assert fit_label("m4 · all traces", 12) == "m4 · all tr…"
    assert fit_label("gpt-4.1-mini · medium", 14) == "gpt-… · medium"
    assert fit_label("short", 12) == "short"
