""""What if…" before a session (issue 17): edit the environment for one session, nothing written;
a bad edit keeps the editor open; "Save as new environment" writes a file the loader reads back.

Every session here is seated with scripted participants (no model, no network); every wait is on
the screen's state, never on the clock."""

from __future__ import annotations

import hashlib
import json

import pytest
from textual.widgets import Button, Input, Static, TextArea

from proactive_tui.core import registry
from proactive_tui.core.events import SessionStarted
from proactive_tui.core.participants import HumanParticipant
from proactive_tui.core.spec import build_session
from proactive_tui.envs import load_default, load_paths
from proactive_tui.envs.what_if import WHAT_IF_SUFFIX
from proactive_tui.export import load_formats
from proactive_tui.export.registry import export
from proactive_tui.paths import user_envs_dir
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.setup_base import SetupScreenBase
from proactive_tui.ui.screens.what_if import WhatIfScreen
from plugin_helpers import countdown_plugin  # noqa: F401  (a fixture)
from ui_helpers import scripted_factory, wait_for

ENVS = {"proactiveeval": "proactiveeval/persuasion/fair/0", "proactivebench": "proactivebench/real/code_11",
        "chronos": "chronos/car-purchase/positive",
        "proactbench": "proactbench/BP_PROFESSIONAL_01_EVA__style21__531a542ff1714bb080d8f06f3cd2daff"}
PERSONA = "[bold]Robin[/bold], a retired ferry pilot who distrusts apps"
"""The edit: with markup in it, which must come through as the characters typed."""


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def edit(family: str, data: dict) -> dict:
    """Change what the family's session shows the seats: a persona, or a trace's first observation."""
    if family == "proactiveeval":
        data["item"]["environment"]["user_information"] = PERSONA
    elif family == "proactivebench":
        data["events"][0]["observation"]["event"] = PERSONA
    elif family == "proactbench":  # the first trigger turn's user message, which the agent is sent
        data["dialogue"]["turn_records"][0]["user_message"] = PERSONA
    else:
        data["scenario"]["persona"] = PERSONA
    return data


def edited_text(family: str, env) -> str:
    """What the environment holds where `edit` wrote."""
    if family == "proactiveeval":
        return env.item.environment.user_information
    if family == "proactivebench":
        return env.events[0].observation.event
    if family == "proactbench":
        return env.dialogue.turn(1).user_message
    return env.scenario.persona


def source_file(env):
    """The file an environment was read from (its `source`: a path, maybe with ` record N`, or
    ProactBench's `<path>:<line>`)."""
    import re
    from pathlib import Path

    return Path(re.sub(r":\d+$", "", env.source.split(" record ")[0])).resolve()


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def open_setup(app, pilot, family: str) -> SetupScreenBase:
    app.open_setup(app.environments.get(ENVS[family]))
    await wait_for(pilot, lambda: isinstance(app.screen, SetupScreenBase))
    return app.screen


async def open_what_if(app, pilot) -> WhatIfScreen:
    await pilot.press("w")  # the form opens with the focus on the mode, where `w` is no text
    await wait_for(pilot, lambda: isinstance(app.screen, WhatIfScreen))
    await pilot.pause()
    return app.screen


async def back_on(pilot, app, setup, editor) -> None:
    """Wait for the editor to close; if it stays (an error it shows), fail saying what it says.
    (The bound is counted in pauses, a hang guard: no timing is asserted.)"""
    try:
        await wait_for(pilot, lambda: app.screen is setup, timeout=20)
    except AssertionError:
        raise AssertionError(str(editor.query_one("#what-if-error", Static).render())) from None


async def type_edit(pilot, editor: WhatIfScreen, family: str) -> None:
    area = editor.query_one("#what-if-editor", TextArea)
    area.load_text(json.dumps(edit(family, json.loads(area.text)), indent=2))
    await pilot.pause()


async def test_an_edited_persona_reaches_the_session_and_no_file_changes(monkeypatch, tmp_path) -> None:
    app = ProactiveApp()
    sessions = []

    def start_session(env, spec) -> None:  # the real screen, seated with scripted participants
        screen = registry.get(env.family).screen("session_screen")(env, spec, scripted_factory())
        sessions.append(screen)
        app.push_screen(screen)

    monkeypatch.setattr(app, "start_session", start_session)
    async with app.run_test(size=(110, 36)) as pilot:
        original = app.environments.get(ENVS["proactiveeval"])
        sample = source_file(original)
        before = digest(sample)
        setup = await open_setup(app, pilot, "proactiveeval")
        assert "w" in setup.active_bindings and setup.active_bindings["w"].binding.show  # in the key bar
        editor = await open_what_if(app, pilot)
        shown = json.loads(editor.query_one("#what-if-editor", TextArea).text)
        assert shown == original.model_dump(mode="json")  # the family's own JSON, as the record keeps it
        await type_edit(pilot, editor, "proactiveeval")
        await pilot.press("ctrl+s")
        await back_on(pilot, app, setup, editor)
        label = setup.query_one("#what-if-label", Static)
        assert label.display and "what if: edited" in str(label.render())
        assert setup.env.id == original.id + WHAT_IF_SUFFIX and setup.original_env is original
        setup.query_one("#max-turns", Input).value = "2"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: bool(sessions) and sessions[0].ended is not None)
        record = sessions[0].builder.record
        assert record.env_id == original.id + WHAT_IF_SUFFIX
        assert record.environment["item"]["environment"]["user_information"] == PERSONA
        assert record.environment["id"] == original.id + WHAT_IF_SUFFIX
        rows = app.store.sessions(env_id=original.id + WHAT_IF_SUFFIX)  # the history keeps the edit too
        assert len(rows) == 1
        first = json.loads(app.store.event_rows(rows[0].id)[0][2])
        assert first["type"] == "session_started" and PERSONA in json.dumps(first["environment"])
    assert digest(sample) == before  # nothing written: the sample is as it was
    assert not user_envs_dir().exists()
    assert edited_text("proactiveeval", load_default().get(original.id)) != PERSONA
    # an export names the edit too, and reads back as its own environment, not the benchmark item
    out = tmp_path / "export"
    load_formats()
    export([record], "proactiveeval", out)
    exported = json.loads((out / original.domain / f"{original.tier}.json").read_text(encoding="utf-8"))
    assert exported[0]["meta"]["env_id"] == original.id + WHAT_IF_SUFFIX
    assert exported[0]["environment"]["user_information"] == PERSONA
    back = load_paths([out]).environments
    assert [e.id for e in back] == [f"{original.id}{WHAT_IF_SUFFIX}@{record.id}"]


@pytest.mark.parametrize("family", ["proactivebench", "chronos"])
async def test_every_family_starts_on_its_edited_environment(family: str, monkeypatch) -> None:
    app = ProactiveApp()
    started = []
    monkeypatch.setattr(app, "start_session", lambda env, spec: started.append((env, spec)))
    async with app.run_test(size=(110, 36)) as pilot:
        original = app.environments.get(ENVS[family])
        setup = await open_setup(app, pilot, family)
        editor = await open_what_if(app, pilot)
        await type_edit(pilot, editor, family)
        await pilot.click("#what-if-apply")
        await back_on(pilot, app, setup, editor)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: bool(started))
    env, spec = started[0]
    assert spec.env_id == env.id == original.id + WHAT_IF_SUFFIX
    seats = {seat: HumanParticipant() for seat in ("agent", "user", "judge")}
    session = build_session(spec, env, gateway=None, seats=seats)
    events = session.events()
    first = await anext(events)
    await events.aclose()
    assert isinstance(first, SessionStarted) and first.env_id == original.id + WHAT_IF_SUFFIX
    assert edited_text(family, registry.get(family).environments.validate_env(first.environment)) == PERSONA


async def test_a_bad_edit_says_where_and_keeps_the_editor_open_with_the_text() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(110, 36)) as pilot:
        setup = await open_setup(app, pilot, "proactiveeval")
        editor = await open_what_if(app, pilot)
        area = editor.query_one("#what-if-editor", TextArea)
        shown = area.text
        broken = shown.replace('"user_information": ', '"user_information": ,', 1)
        area.load_text(broken)
        await pilot.press("ctrl+s")
        await pilot.pause()
        error = str(editor.query_one("#what-if-error", Static).render())
        assert app.screen is editor and area.text == broken
        assert "not valid JSON" in error and "line" in error
        data = json.loads(shown)
        data["item"]["environment"]["user_information"] = ""
        data["item"]["sub_target"] = []
        area.load_text(json.dumps(data))
        await pilot.click("#what-if-apply")
        await pilot.pause()
        error = str(editor.query_one("#what-if-error", Static).render())
        assert app.screen is editor
        assert "item.environment.user_information: must not be empty" in error
        assert "item.sub_target" in error and "pydantic" not in error and "http" not in error
        data["item"]["environment"]["user_information"] = "x"
        data["item"]["sub_target"] = ["ask"]
        data["id"] = "proactiveeval/mine"
        area.load_text(json.dumps(data))
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is editor and "id: stays" in str(editor.query_one("#what-if-error", Static).render())
        await pilot.press("escape")  # cancel: the setup keeps the environment as loaded
        await wait_for(pilot, lambda: app.screen is setup)
        assert setup.env is setup.original_env and str(setup.query_one("#what-if-label", Static).render()) == ""


@pytest.mark.parametrize("family", sorted(ENVS))
async def test_save_as_new_environment_writes_a_file_that_loads_back(family: str) -> None:
    app = ProactiveApp()
    async with app.run_test(size=(110, 36)) as pilot:
        original = app.environments.get(ENVS[family])
        sample = source_file(original)
        before = digest(sample)
        setup = await open_setup(app, pilot, family)
        editor = await open_what_if(app, pilot)
        assert not editor.query_one("#what-if-save", Button).disabled
        await type_edit(pilot, editor, family)
        await pilot.click("#what-if-save")
        await back_on(pilot, app, setup, editor)
        saved_id = original.id + "~whatif-1"
        assert setup.env.id == saved_id and setup.original_env is setup.env
        label = str(setup.query_one("#what-if-label", Static).render())
        assert "saved as a new environment" in label and saved_id in label
        written = [p for p in user_envs_dir().rglob("*.json")]
        assert len(written) == 1 and str(written[0]) in label.replace("\n", "")
        await pilot.pause()
        picker = app.screen_stack[0]
        assert saved_id in [node.data.id for node in picker.tree.leaves()]  # listed at once
        assert app.environments.get(saved_id) is not None

        editor = await open_what_if(app, pilot)  # a second save never overwrites the first file
        first_bytes = written[0].read_bytes()
        area = editor.query_one("#what-if-editor", TextArea)
        area.load_text(area.text.replace(PERSONA, PERSONA + " (again)"))
        await pilot.click("#what-if-save")
        await back_on(pilot, app, setup, editor)
        assert written[0].read_bytes() == first_bytes
        assert len(list(user_envs_dir().rglob("*.json"))) == 2
        assert setup.env.id == original.id + "~whatif-2"  # a sibling, not a variant of the variant
    assert digest(sample) == before
    back = load_paths([user_envs_dir()])
    assert not back.problems
    loaded = back.get(saved_id)
    assert loaded is not None and edited_text(family, loaded) == PERSONA
    everything = load_default()  # beside the samples: no duplicate, the sample itself unchanged
    assert not [p for p in everything.problems if "duplicate" in p.message]
    assert everything.get(saved_id) is not None and edited_text(family, everything.get(original.id)) != PERSONA



async def test_a_family_that_cannot_write_files_says_so_and_still_edits(countdown_plugin, monkeypatch) -> None:
    """The plug-in `countdown` family has no `environment_file`: Save is disabled with the reason,
    and an edit for the session still works (validated by the family's own model)."""
    app = ProactiveApp()
    started = []
    monkeypatch.setattr(app, "start_session", lambda env, spec: started.append((env, spec)))
    async with app.run_test(size=(110, 36)) as pilot:
        app.open_setup(app.environments.get("countdown/three"))
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreenBase))
        setup = app.screen
        editor = await open_what_if(app, pilot)
        assert editor.query_one("#what-if-save", Button).disabled
        assert "cannot be written back as files" in str(editor.query_one("#what-if-save-note", Static).render())
        area = editor.query_one("#what-if-editor", TextArea)
        area.load_text(json.dumps({**json.loads(area.text), "title": PERSONA}))
        await pilot.press("ctrl+s")
        await back_on(pilot, app, setup, editor)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: bool(started))
    env, spec = started[0]
    assert env.title == PERSONA and spec.env_id == "countdown/three" + WHAT_IF_SUFFIX
    assert not user_envs_dir().exists()
