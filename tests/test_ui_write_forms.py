"""Write-your-own environments (issue 32): a form per family, checked as it is filled in by the
family's own loader, saved through the "What if" save path into the user's environments folder,
listed by the picker after the reload, and playable at once.

No model and no network: the forms only write files. Every wait is on the app's state (a screen,
a loaded id), in a bounded number of pauses, never on the clock."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

import pytest
from textual.widgets import Button, Input, OptionList, Select, Static, TextArea

from proactive_tui.envs import load_paths
from proactive_tui.families.chronos.ui.write_form import STATES as CHRONOS_STATES
from proactive_tui.paths import user_envs_dir
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.picker import PickerScreen
from proactive_tui.ui.screens.setup_base import SetupScreenBase
from proactive_tui.ui.studio.write import WriteChooser, WriteForm, open_write_form
from proactive_tui.ui.widgets.description_view import DescriptionView
from ui_helpers import settle, wait_for

PERSONA = "[bold]Robin[/bold], a retired ferry pilot who distrusts apps"
"""Typed into each form: markup characters that must come through as typed."""


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


@dataclass
class Case:
    family: str
    invalid: dict[str, str]
    """Field id -> text that breaks the environment."""
    problem: str
    """The line the form must show for it (naming the field)."""
    valid: dict[str, str]
    """Field id -> text of a valid environment holding PERSONA."""
    new_id: str
    typed: Callable[[Any], str]
    """Where the loaded environment keeps PERSONA."""


CASES = {
    "proactiveeval": Case(
        "proactiveeval",
        invalid={"f-user": "   "}, problem="User information: must not be empty",
        valid={"f-user": PERSONA, "f-domain": "persuasion", "f-tier": "hard",
               "f-subtargets": "Ask about the ferry\n\nSuggest the walk"},
        new_id="proactiveeval/persuasion/hard/mine~written-1",
        typed=lambda env: env.item.environment.user_information),
    "chronos": Case(
        "chronos",
        invalid={"f-states": "2026-03-04T09:00 | no | a car\nsoon | yes | another car"},
        problem="States, line 2, time: not an ISO 8601 time: 'soon'",
        valid={"f-persona": PERSONA, "f-tier": "complex", "f-branch": "positive", "f-states": CHRONOS_STATES},
        new_id="chronos/mine~written-1",
        typed=lambda env: env.scenario.persona),
    "proactivebench": Case(
        "proactivebench",
        invalid={"f-events": "0 | The user opens a file. | no\n30 |  | no"},
        problem="Events, line 2, event: must not be empty",
        valid={"f-events": f"0 | {PERSONA} | no\n30 | The user saves the draft. | yes | Offer a summary; Check spelling",
               "f-theme": "writing"},
        new_id="proactivebench/writing_mine~written-1",
        typed=lambda env: env.events[0].observation.event),
    "proactbench": Case(
        "proactbench",
        invalid={"f-triggers": "1 | EMERGENT | acts on it | notices it | ignores it\n9 | RECOVERY | a | b | c"},
        problem="Turns: no turn record for trigger turn(s) 9",
        valid={"f-turns": f"{PERSONA} | Noted: no apps, then.\nThanks, that settles it. | Glad to help.",
               "f-triggers": "2 | RECOVERY | adds a grounded next step | a generic tip | only closes",
               "f-category": "travel_persona"},
        new_id="proactbench/mine~written-1",
        typed=lambda env: env.dialogue.turn(1).user_message),
}


async def fill(pilot, form: WriteForm, values: dict[str, str]) -> None:
    """Set fields as a person would leave them (a Select's choice, a text's content)."""
    for widget_id, text in values.items():
        widget = form.query_one(f"#{widget_id}")
        if isinstance(widget, TextArea):
            widget.load_text(text)
        elif isinstance(widget, Select):
            widget.value = text
        else:
            widget.value = text
        await pilot.pause()


async def open_form(app, pilot, family: str) -> WriteForm:
    """From the picker: `n`, then the family in the chooser."""
    await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen))
    await pilot.press("n")
    await wait_for(pilot, lambda: isinstance(app.screen, WriteChooser))
    options = app.screen.query_one(OptionList)
    options.highlighted = [options.get_option_at_index(i).id for i in range(options.option_count)].index(family)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, WriteForm))
    await pilot.pause()
    return app.screen


def problems_text(form: WriteForm) -> str:
    return str(form.query_one("#write-problems", Static).render())


@pytest.mark.parametrize("family", sorted(CASES))
async def test_a_written_environment_is_checked_saved_listed_and_playable(family: str) -> None:
    case = CASES[family]
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        form = await open_form(app, pilot, family)
        assert form.family.name == family
        assert form.checked.env is not None and not form.query_one("#write-save", Button).disabled  # defaults validate
        # the name typed key by key
        form.query_one("#f-name", Input).value = ""
        form.query_one("#f-name", Input).focus()
        await pilot.press(*"mine")
        await fill(pilot, form, case.invalid)
        assert case.problem in problems_text(form)
        assert "pydantic" not in problems_text(form) and "the form" not in problems_text(form)
        assert form.query_one("#write-save", Button).disabled and form.checked.env is None
        await pilot.press("ctrl+s")  # off while invalid: nothing is written
        await pilot.pause()
        assert not user_envs_dir().exists()

        await fill(pilot, form, case.valid)
        assert form.checked.env is not None, problems_text(form)
        assert not form.query_one("#write-save", Button).disabled
        assert PERSONA in form.query_one("#write-preview", DescriptionView).plain_text()  # literal, not bold
        assert form.query_one("#write-play", Button).disabled  # nothing saved to play yet
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: form.saved is not None)
        saved = form.saved
        assert saved.env.id == case.new_id
        assert saved.path.is_relative_to(user_envs_dir()) and saved.path.is_file()
        shown = form.query_one("#write-preview", DescriptionView).plain_text()
        assert case.new_id in shown and "your envs folder" in shown  # the saved one, where it now lives
        await wait_for(pilot, lambda: app.environments.get(case.new_id) is not None)  # the reload read it
        picker = next(s for s in app.screen_stack if isinstance(s, PickerScreen))
        listed = next(e for e in picker.index.environments if e.id == case.new_id)
        assert case.typed(listed) == PERSONA
        assert str(saved.path) in str(form.query_one("#write-status", Static).render())

        await pilot.click("#write-play")
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreenBase))
        assert app.screen.env.id == case.new_id
        assert not any(isinstance(s, WriteForm) for s in app.screen_stack)

    # the file is the family's own format: the ordinary loader reads it back from the user's folder
    back = load_paths([user_envs_dir()])
    assert not back.problems
    assert case.typed(back.get(case.new_id)) == PERSONA


async def test_saving_twice_never_overwrites_and_takes_the_next_id() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        form = await open_form(app, pilot, "chronos")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: form.saved is not None)
        first = form.saved
        await fill(pilot, form, {"f-title": "A second one"})
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: form.saved is not first)
        assert (first.env.id, form.saved.env.id) == ("chronos/my-scenario~written-1", "chronos/my-scenario~written-2")
        assert json.loads(first.path.read_text(encoding="utf-8"))["title"] == "Family car under budget"
        assert json.loads(form.saved.path.read_text(encoding="utf-8"))["title"] == "A second one"


async def test_the_chronos_shift_fields_take_input_only_in_the_complex_tier() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        form = await open_form(app, pilot, "chronos")
        assert form.query_one("#f-shift-states", TextArea).disabled
        await fill(pilot, form, {"f-tier": "complex"})
        assert not form.query_one("#f-shift-states", TextArea).disabled
        assert form.checked.env is not None and form.checked.env.scenario.intention_shift is not None
        await fill(pilot, form, {"f-shift-states": "2026-03-16T09:00 | yes | already a hybrid"})
        assert "Shift: states: complex tier: the first state after the shift must not meet" in problems_text(form)


async def test_the_proactbench_form_names_each_problem_by_its_field_and_writes_one_upstream_row() -> None:
    """What the family's loader would let through but a dialogue to score cannot have, and what its
    model refuses (two triggers at one turn), each one line naming the field; then the saved file
    is one row of upstream's format, in the form's order, that the loader reads as it is."""
    from proactive_tui.families.proactbench.env import WRITTEN_BY

    turns = "Where should I run? | The park.\nIt is dark at 7pm. | Then a lit route.\nThanks! | Bye."
    cases = [
        ({"f-triggers": "1 | URGENT | a | b | c"}, "Trigger points, line 1, type: EMERGENT, CRITICAL, RECOVERY (got 'URGENT')"),
        ({"f-triggers": "1 | EMERGENT | acts on it"}, "Trigger points, line 1: no PARTIAL or FAIL criteria"),
        ({"f-triggers": "x | EMERGENT | a | b | c"}, "Trigger points, line 1, turn: a turn number (got 'x')"),
        ({"f-triggers": "\n".join(f"{n} | CRITICAL | a | b | c" for n in range(1, 8))},
         "Trigger points: at most 6 (upstream's cap), not 7"),
        ({"f-triggers": "2 | CRITICAL | a | b | c\n2 | RECOVERY | a | b | c"},
         "Trigger points: turn 2 has more than one trigger point (a turn is scored once)"),
        ({"f-turns": " | The park.\nIt is dark. | Lit route.", "f-triggers": "1 | EMERGENT | a | b | c"},
         "Turns, line 1: turn 1 is a trigger point, so the user must say something there"),
        ({"f-turns": "Where? |\nIt is dark. | Lit route.", "f-triggers": "2 | CRITICAL | a | b | c"},
         "Turns, line 1: the recorded reply is empty, but the agent under test is shown it before the trigger at turn 2"),
        ({"f-scenario": "  "}, "Scenario: write the scenario's name"),
    ]
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        form = await open_form(app, pilot, "proactbench")
        for values, problem in cases:
            await fill(pilot, form, {"f-turns": turns, "f-scenario": "RUNNING_01", **values})
            assert problem in problems_text(form), (values, problems_text(form))
            assert form.checked.env is None and form.query_one("#write-save", Button).disabled
        await fill(pilot, form, {"f-turns": turns + " | with a | in the reply", "f-scenario": "RUNNING_01",
                                 "f-triggers": "2 | critical | a | b | c | d\n3 | RECOVERY | p | pa | f"})
        assert form.checked.env is not None, problems_text(form)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: form.saved is not None)
        row = json.loads(form.saved.path.read_text(encoding="utf-8"))
    assert form.saved.path.name == "my-dialogue~written-1.json" and form.saved.path.parent.name == "proactbench"
    assert row["unique_id_eval"] == "my-dialogue~written-1" and row["evaluated_model"] == WRITTEN_BY
    assert row["num_turns_completed"] == 3 and row["category_key"] == "professional_persona"
    assert [(t["turn"], t["user_message"], t["assistant_response"]) for t in row["turn_records"]] == [
        (1, "Where should I run?", "The park."), (2, "It is dark at 7pm.", "Then a lit route."),
        (3, "Thanks!", "Bye. | with a | in the reply")]  # the first | ends the user's part
    assert [(p["turn"], p["evaluation_rubric"]) for p in row["trigger_points"]] == [
        (2, {"type": "CRITICAL", "pass_criteria": "a", "partial_criteria": "b", "fail_criteria": "c | d"}),
        (3, {"type": "RECOVERY", "pass_criteria": "p", "partial_criteria": "pa", "fail_criteria": "f"})]
    back = load_paths([user_envs_dir()])
    assert not back.problems and back.get("proactbench/my-dialogue~written-1").title == "RUNNING_01"


async def test_the_form_is_in_the_palette_and_the_help() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen))
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Write a new environment…" in titles
        await pilot.press("f1")
        await pilot.pause()
        help_text = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "Write a new environment from scratch" in help_text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, WriteChooser))
        assert app.screen.query_one(OptionList).option_count == 4
        await pilot.press("escape")  # Escape closes the chooser
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen))


SIZES = [(120, 40), (80, 24)]
THEMES = ["proactive-dark", "proactive-light"]


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=["120x40", "80x24"])
@pytest.mark.parametrize("family", sorted(CASES))
def test_snapshot_write_form(snap_compare, family: str, size, theme: str) -> None:
    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, PickerScreen))
        pilot.app.theme = theme
        open_write_form(pilot.app, family)
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, WriteForm) and pilot.app.screen.is_mounted)
        await pilot.pause()
        if family == "proactiveeval":  # one problem on screen, to see how it reads
            await fill(pilot, pilot.app.screen, CASES[family].invalid)
        await settle(pilot)

    assert snap_compare(ProactiveApp(), terminal_size=size, run_before=run_before)
