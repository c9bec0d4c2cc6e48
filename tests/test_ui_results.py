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
    report = json.loads((out / "report.json").read_text())
    report["timing"]["generated_at"] = WRITTEN  # a fixed time, so the snapshots are stable
    (out / "report.json").write_text(json.dumps(report, indent=2))


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The report folder as `report` in the test's own working folder (shown as given: stable)."""
    if "report" not in _BUILT:
        built = tmp_path / "built"
        _build(built)
        _BUILT["report"] = built
    target = tmp_path / "work" / "report"
    shutil.copytree(_BUILT["report"], target)
    monkeypatch.chdir(target.parent)
    return Path("report")


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
        assert cells(screen) == [["m1", "6.00 ± 0.00", "6.00 ± 0.00"], ["m2", "9.00", "9.00"]]
        md = (folder / "report.md").read_text()
        assert "| m1 | 6.00 ± 0.00 | 6.00 ± 0.00 |" in md and "| m2 | 9.00 | 9.00 |" in md
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
        assert row[0].startswith("proactiveeval/persuasion/fair/0 r1") and "failed: " in row[1] and row[2] == "m2"
        assert "Failing sessions (1)" in str(screen.sessions.border_title)
        await pilot.press("enter")  # a failure with no record: why it failed, and the file
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        assert "the judge went away" in str(app.screen.sections)


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
