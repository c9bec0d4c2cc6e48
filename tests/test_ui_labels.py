"""The Verdicts modal (L) on every session screen and on History rows, and the judge agreement
panel (A): labelling with a, d, n, x; the table, confusion and drill-down; snapshots of the
panel from fixed data."""

from __future__ import annotations

import asyncio

import pytest

from family_runs import RUNS, run_in_process
from test_ui_call_inspector import SETTINGS, screen_class
from ui_helpers import fake_spec, history_screen, settle, wait_for
from proactive_tui.core.verdicts import ORACLE
from proactive_tui.services.labels import agreement
from proactive_tui.store.db import LabelRow
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.agreement import AgreementScreen, DisagreementsModal
from proactive_tui.ui.screens.labels_modal import LabelForm, LabelsModal
from textual.widgets import DataTable, Input, OptionList


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


async def open_labels(pilot, app) -> LabelsModal:
    await pilot.press("L")
    await wait_for(pilot, lambda: isinstance(app.screen, LabelsModal))
    await settle(pilot, app.screen)
    return app.screen


def highlight(modal: LabelsModal, key: str) -> None:
    modal.query_one("#verdict-list", OptionList).highlighted = next(
        i for i, v in enumerate(modal.verdicts) if v.key == key)


@pytest.mark.parametrize("family", sorted(RUNS))
async def test_label_verdicts_from_the_session_screen(family) -> None:
    run = RUNS[family]
    with FakeOpenAIServer(responder=run.responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(140, 40)) as pilot:
            env = app.environments.get(run.env_id)
            app.push_screen(screen_class(family)(env, fake_spec(env.id, server.base_url, **SETTINGS[family])))
            screen = app.screen
            await wait_for(pilot, lambda: screen.ended is not None)
            await settle(pilot)
            assert screen.check_action("labels", ())
            assert "Verdicts and labels…" in [title for title, _h, _c in screen.palette_commands()]
            modal = await open_labels(pilot, app)
            session_id = screen.session_id
            assert modal.verdicts, "every family lists verdicts"
            first = modal.verdicts[0]
            if family == "chronos":
                assert first.judge == ORACLE
            # a: agree
            await pilot.press("a")
            await settle(pilot, modal)
            (row,) = app.store.labels(session_id)
            assert (row.verdict, row.agree, row.value) == (first.key, True, first.value)
            option = modal.query_one("#verdict-list", OptionList).get_option_at_index(0)
            assert "✓ agree" in option.prompt.plain
            # d: disagree, the form asks the corrected value and a note
            wrong = {"bool": "yes" if first.value is False else "no", "score": "1" if first.value != 1 else "2",
                     "proposal": "rejected" if first.value == "accepted" else "accepted",
                     "grade": "FAIL" if first.value != "FAIL" else "PASS"}[first.value_type]
            await pilot.press("d")
            await wait_for(pilot, lambda: isinstance(app.screen, LabelForm))
            form = app.screen
            await settle(pilot, form)
            form.query_one("#label-value", Input).value = "not a value"
            form.query_one("#label-note", Input).value = "[b]literal[/b]"
            form.query_one("#label-note", Input).focus()
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.screen is modal)
            await settle(pilot, modal)
            assert app.store.labels(session_id)[0].agree is True  # a bad value is refused, the label kept
            await pilot.press("d")
            await wait_for(pilot, lambda: isinstance(app.screen, LabelForm))
            form = app.screen
            await settle(pilot, form)
            form.query_one("#label-value", Input).value = wrong
            form.query_one("#label-note", Input).value = "[b]literal[/b]"
            form.query_one("#label-note", Input).focus()
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.screen is modal)
            await settle(pilot, modal)
            (row,) = app.store.labels(session_id)
            assert row.agree is False and row.note == "[b]literal[/b]"
            prompt = modal.query_one("#verdict-list", OptionList).get_option_at_index(0).prompt.plain
            assert "✗ disagree" in prompt and "[b]literal[/b]" in prompt  # notes shown literally
            # n: the note alone
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(app.screen, LabelForm))
            form = app.screen
            await settle(pilot, form)
            form.query_one("#label-note", Input).value = "second thoughts"
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.screen is modal)
            await settle(pilot, modal)
            assert app.store.labels(session_id)[0].note == "second thoughts"
            # x: clear
            await pilot.press("x")
            await settle(pilot, modal)
            assert app.store.labels(session_id) == []
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen)


def fixed_rows() -> list:
    """Labels of three judges, fixed (no clock in them): the panel's snapshot data."""
    def label(session: str, verdict: str, kind: str, judge: str, judge_value, value, note: str = "") -> LabelRow:
        return LabelRow(session_id=session, verdict=verdict, kind=kind, judge=judge, judge_value=judge_value,
                        agree=judge_value == value, value=value, note=note, created_at="2026-01-01T00:00:00+00:00")

    rows = [label(f"aaaa{i:08d}", f"turn_check:{i}", "turn check", "openai/judge-m", a, b,
                  "the agent never asked" if a != b else "")
            for i, (a, b) in enumerate([(True, True)] * 4 + [(True, False)] * 2 + [(False, True)] + [(False, False)] * 3)]
    rows += [label("bbbb00000001", "dimension:tone", "dimension score", "openai/judge-m", 7, 7),
             label("bbbb00000002", "dimension:tone", "dimension score", "openai/judge-m", 8, 6, "[red]pushy[/red]"),
             label("bbbb00000003", "dimension:tone", "dimension score", "openai/judge-m", 6, 6)]
    rows += [label("cccc00000001", "proposal:1:0:0", "proposal verdict", "openai/reward-m", "accepted", "accepted"),
             label("cccc00000001", "proposal:2:0:0", "proposal verdict", "openai/reward-m", "accepted", "rejected")]
    rows += [label("dddd00000001", "action_check:2", "action check", ORACLE, True, True)]
    return agreement(rows)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_snapshot_agreement_panel(snap_compare, size) -> None:
    from textual.app import App

    class Panel(App):
        def on_mount(self) -> None:
            self.push_screen(AgreementScreen(fixed_rows()))

    async def run_before(pilot) -> None:
        await settle(pilot)

    assert snap_compare(Panel(), terminal_size=size, run_before=run_before)


async def test_the_panel_shows_the_highlighted_confusion_and_drills_down() -> None:
    from textual.app import App

    opened: list[str] = []

    class Panel(App):
        def on_mount(self) -> None:
            self.push_screen(AgreementScreen(fixed_rows()))

    app = Panel()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        panel = app.screen
        assert isinstance(panel, AgreementScreen)
        table = panel.query_one("#agreement-table", DataTable)
        assert table.row_count == 4
        turn = next(i for i, r in enumerate(panel.rows) if r.kind == "turn check")
        table.move_cursor(row=turn)
        await settle(pilot, panel)
        assert panel.current.kind == "turn check" and panel.current.kappa == pytest.approx(0.4)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DisagreementsModal))
        modal = app.screen
        await settle(pilot, modal)
        options = modal.query_one("#disagreement-list", OptionList)
        assert options.option_count == 3
        assert "the agent never asked" in options.get_option_at_index(0).prompt.plain

        import proactive_tui.ui.screens.history as history

        original = history.open_stored
        history.open_stored = lambda app_, session_id, **kw: opened.append(session_id) or True
        try:
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.screen is panel)
            await settle(pilot, panel)
        finally:
            history.open_stored = original
    assert opened == [panel.rows[turn].disagreements[0].session_id]


async def test_history_labels_a_row_and_opens_the_agreement_panel(tmp_path) -> None:
    # a family History shows as text: labelling works all the same
    with FakeOpenAIServer(responder=RUNS["proactivebench"].responder) as server:
        session_id = await asyncio.to_thread(run_in_process, "proactivebench", server.base_url, tmp_path / "r.json")
    app = ProactiveApp()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        history = await history_screen(app, pilot)
        assert {"Verdicts and labels…", "Judge agreement"} <= {t for t, _h, _c in history.palette_commands()}
        modal = await open_labels(pilot, app)
        assert modal.session_id == session_id
        first = modal.verdicts[0]
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, LabelForm))
        form = app.screen
        await settle(pilot, form)
        form.query_one("#label-value", Input).value = "rejected" if first.value == "accepted" else "accepted"
        form.query_one("#label-note", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is modal)
        await settle(pilot, modal)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is history)
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(app.screen, AgreementScreen))
        panel = app.screen
        await settle(pilot, panel)
        (row,) = panel.rows
        assert (row.kind, row.n, row.accuracy) == ("proposal verdict", 1, 0.0)
        assert row.disagreements[0].session_id == session_id
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is history)
