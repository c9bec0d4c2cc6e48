"""The setup form: opens on the mode with visible focus, every field reachable at 80x24, the last
choices remembered per family (never a credential), the same words in every family."""

from __future__ import annotations

import pytest
from textual.widgets import Input, RadioSet

from proactive_tui.core import registry
from proactive_tui.ui import setup_memory
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.setup_base import SetupScreenBase

ENVS = {"proactiveeval": "proactiveeval/persuasion/fair/0", "proactivebench": "proactivebench/real/code_11",
        "chronos": "chronos/car-purchase/positive",
        "proactbench": "proactbench/BP_PROFESSIONAL_01_EVA__style21__531a542ff1714bb080d8f06f3cd2daff"}


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def env_of(app, family: str):
    env = app.environments.get(ENVS[family])
    if env is None:  # the ProactiveBench id depends on the bundled traces: take the first
        env = next(e for e in app.environments.environments if e.family == family)
    return env


async def open_setup(app, pilot, family: str) -> SetupScreenBase:
    app.open_setup(env_of(app, family))
    for _ in range(20):
        await pilot.pause()
        if isinstance(app.screen, SetupScreenBase):
            break
    return app.screen


@pytest.mark.parametrize("family", sorted(ENVS))
async def test_opens_on_the_mode_and_every_field_is_reachable_at_80x24(family: str) -> None:
    app = ProactiveApp()
    async with app.run_test(size=(80, 24)) as pilot:
        setup = await open_setup(app, pilot, family)
        assert isinstance(app.focused, RadioSet) and app.focused.id == "mode"
        body = setup.query_one("#setup-body")
        seen = []
        for _ in range(40):
            await pilot.press("tab")
            await pilot.pause()
            focused = app.focused
            if focused is None or focused.id in seen:
                break
            seen.append(focused.id)
            if body in focused.ancestors:
                # focusing scrolled it into the form's visible part
                assert body.content_region.contains_region(focused.region), focused.id
            assert focused.region.height > 0 and setup.region.contains_region(focused.region), focused.id
        inputs = {w.id for w in setup.query("#setup-body Input, #setup-body Select, #setup-body Switch")
                  if not w.disabled}
        assert inputs <= set(seen), inputs - set(seen)
        assert {"start", "cancel"} <= set(seen)


async def test_last_choices_are_remembered_per_family_without_credentials(monkeypatch) -> None:
    started = []
    app = ProactiveApp()
    monkeypatch.setattr(app, "start_session", lambda env, spec: started.append(spec))
    async with app.run_test(size=(100, 34)) as pilot:
        setup = await open_setup(app, pilot, "proactiveeval")
        await pilot.press("right", "space")  # the mode: Play the user
        await pilot.pause()
        assert setup.mode == "play_user"
        setup.query_one("#max-turns", Input).value = "3"
        setup.query_one("#model-agent", Input).value = "openai/gpt-4.1-mini"
        setup.query_one("#api-base", Input).value = "http://bob:s3cret@localhost:8011/v1?api-key=k3y"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SetupScreenBase)  # refused: credentials in the URL cannot be sent
        warning = str(setup.query_one("#setup-warning").render())
        assert "has credentials in it" in warning and "s3cret" not in warning and "http://localhost:8011/v1" in warning
        await pilot.press("ctrl+s")  # a second Start is refused again: it could never be sent
        await pilot.pause()
        assert not started and isinstance(app.screen, SetupScreenBase)
        setup.query_one("#api-base", Input).value = "http://localhost:8011/v1?api-key=k3y"  # a key in the query
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        if isinstance(app.screen, SetupScreenBase):  # no key for openai here: start anyway
            await pilot.press("ctrl+s")
            await pilot.pause()
        assert len(started) == 1 and started[0].seats["user"] == "human"
        stored = setup_memory.memory_file().read_text(encoding="utf-8")
        assert "s3cret" not in stored and "k3y" not in stored and "bob" not in stored
        assert "http://localhost:8011/v1" in stored

        setup = await open_setup(app, pilot, "proactiveeval")
        assert setup.mode == "play_user"
        assert setup.query_one("#max-turns", Input).value == "3"
        assert setup.query_one("#model-agent", Input).value == "openai/gpt-4.1-mini"
        assert setup.query_one("#model-user", Input).disabled  # you play it
        assert setup.query_one("#api-base", Input).value == "http://localhost:8011/v1"
        await pilot.press("escape")
        await pilot.pause()

        setup = await open_setup(app, pilot, "chronos")  # another family: its own defaults
        assert setup.mode == "watch"
        assert setup.query_one("#model-agent", Input).value == "local/smollm2"


def test_a_broken_memory_file_means_defaults(tmp_path) -> None:
    path = tmp_path / "last_setup.json"
    path.write_text("{not json", encoding="utf-8")
    assert setup_memory.load_memories(path).families == {}


def test_the_same_words_for_the_same_thing_in_every_family() -> None:
    labels: dict[str, set[str]] = {}
    for family in registry.families().values():
        for key, label in family.play_modes.items():
            labels.setdefault(key, set()).add(label)
    assert labels["watch"] == {"Watch models"}
    assert labels["play_user"] == {"Play the user"}
    assert labels.get("play_agent", {"Play the agent"}) == {"Play the agent"}


async def test_proactiveeval_early_stopping_is_off_and_says_why_with_the_embedded_judge() -> None:
    from textual.widgets import Static, Switch

    app = ProactiveApp()
    async with app.run_test(size=(100, 50)) as pilot:
        setup = await open_setup(app, pilot, "proactiveeval")
        switch, note = setup.query_one("#early-stop", Switch), setup.query_one("#early-stop-note", Static)
        assert setup.query_one("#model-judge", Input).value.startswith("local/")
        assert switch.value is False and "embedded judge" in str(note.render())
        assert setup.read_settings()["early_stop"] is None  # left to the judge: the session records False
        setup.query_one("#model-judge", Input).value = "openai/gpt-4.1"
        await pilot.pause()
        assert switch.value is True and str(note.render()) == ""
        setup.query_one("#model-judge", Input).value = "local/smollm2"
        await pilot.pause()
        assert switch.value is False
        switch.value = True  # the person turns it back on: kept, whatever the judge
        await pilot.pause()
        assert setup.read_settings()["early_stop"] is True
        setup.query_one("#model-judge", Input).value = "openai/gpt-4.1"
        await pilot.pause()
        assert switch.value is True


async def test_an_api_base_that_is_no_url_is_refused_at_start(monkeypatch) -> None:
    """The form says why and keeps the person on it; nothing starts that would be retried as a 500."""
    from textual.widgets import Static

    started = []
    app = ProactiveApp()
    monkeypatch.setattr(app, "start_session", lambda env, spec: started.append(spec))
    async with app.run_test(size=(100, 34)) as pilot:
        setup = await open_setup(app, pilot, "proactiveeval")
        setup.query_one("#api-base", Input).value = "localhost:8000"
        await pilot.pause()  # the edit's Changed message clears old warnings; let it land first
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert started == [] and isinstance(app.screen, SetupScreenBase)
        warning = setup.query_one("#setup-warning", Static).visual.plain
        assert "api base 'localhost:8000' is not a URL" in warning and "http://localhost:8000" in warning
        assert app.focused is setup.query_one("#api-base", Input)


def test_cut_middle_keeps_the_start_and_the_end() -> None:
    from proactive_tui.ui.widgets.id_line import cut_middle

    pb = ENVS["proactbench"]
    assert cut_middle(pb, len(pb)) == pb  # fits: whole
    cut = cut_middle(pb, 63)
    assert len(cut) == 63 and cut.count("…") == 1
    assert cut.startswith("proactbench/BP_PROFESSIONAL_01_EVA__style21__") and cut.endswith(pb[-12:])
    assert cut_middle(pb + "~whatif-2", 40).endswith("~whatif-2")  # an edited environment still says so
    assert cut_middle("abcdefghij", 5) == "ab…ij"  # narrow: the end gets no more than the start
    assert cut_middle("abc", 1) == "…" and cut_middle("abc", 0) == ""
    wide = cut_middle("家族/" + "字" * 40, 20)  # double-width characters: counted in cells
    from rich.cells import cell_len

    assert cell_len(wide) <= 20 and wide.startswith("家族/") and "…" in wide


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_a_long_environment_id_stays_on_one_line(size) -> None:
    """ProactBench's 78-character id wrapped at 80 columns (a lone `f` on the next line): the id
    line is one row, shows the id's start and end, and the title follows right under it. At 120
    columns the whole id fits and is shown uncut."""
    from textual.geometry import Offset
    from textual.selection import Selection

    from proactive_tui.ui.widgets.id_line import IdLine
    from ui_helpers import screen_lines

    app = ProactiveApp()
    async with app.run_test(size=size) as pilot:
        setup = await open_setup(app, pilot, "proactbench")
        env_id = setup.env.id
        assert len(env_id) > 70  # the long kind this is about
        await pilot.pause()
        lines = screen_lines(app)
        row = next(i for i, line in enumerate(lines) if "New session" in line)
        id_row = lines[row]
        assert env_id[:40] in id_row and env_id[-8:] in id_row
        assert setup.env.title in lines[row + 1]  # nothing of the id spilled onto the next row
        line = setup.query_one("#setup-id", IdLine)
        assert line.region.height == 1
        assert (env_id in id_row) == (size[0] >= 120) and ("…" in id_row) == (size[0] < 120)
        assert str(line.tooltip) == env_id  # the whole id, on hover
        picked = line.get_selection(Selection(Offset(0, 0), Offset(line.size.width, 0)))
        assert picked is not None and env_id in picked[0]  # a selection copies the whole id, cut or not
        line.set_id(env_id + "~whatif")  # what the form shows after a what-if edit
        await pilot.pause()
        shown = line.render().plain
        assert shown.endswith("~whatif") and "~whatif" in screen_lines(app)[row] and line.region.height == 1
