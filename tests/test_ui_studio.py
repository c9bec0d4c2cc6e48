"""The studio (issue 32): its setup, the run under step / auto / stop, a person's edit and
re-run, keep / reject by hand, play-now, and resume both ways (studio <-> `synth resume`), for
each family on its scripted fake server; snapshots of every studio screen."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from synth_chronos_fake import ChronosFake
from synth_chronos_fake import role_args as chronos_roles
from synth_fake import responder as pe_responder
from synth_fake import role_args as pe_roles
from synth_fake import tree
from synth_helpers import files
from synth_pb_fake import make_responder
from synth_pb_fake import role_args as pb_roles
from ui_helpers import wait_for
from proactive_tui.synth import engine
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.studio.screen import StudioScreen
from proactive_tui.ui.studio.view import StageBlock

FAMILIES = ["proactiveeval", "chronos", "proactivebench"]
FIRST_STEP = {"proactiveeval": "environment", "chronos": "background", "proactivebench": "scene"}
EDIT_FIELD = {"proactiveeval": "user_information", "chronos": "persona", "proactivebench": "overview"}
MARK = " EDITED-BY-A-PERSON"


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def responder_for(family: str) -> Any:
    return {"proactiveeval": pe_responder, "chronos": ChronosFake({"car_purchase": "ok"}),
            "proactivebench": make_responder()}[family]


def synth_argv(family: str, out: Path, base_url: str, tmp_path: Path) -> list[str]:
    """The smallest run of each family that keeps its one item."""
    common = ["--n", "1", "--seed", "3", "--out", str(out), "--concurrency", "2"]
    if family == "proactiveeval":
        tree_file = tmp_path / "tree.json"
        tree_file.write_text(json.dumps(tree(fates=("fair",))))
        return ["synth", family, *common, "--domain", "recommendation", "--tree", str(tree_file), "--candidates", "2",
                "--max-rounds", "1", *pe_roles(base_url)]
    if family == "chronos":
        return ["synth", family, *common, "--template", "car_purchase", "--tier", "simple", *chronos_roles(base_url)]
    return ["synth", family, *common, "--scene", "coding", "--batches", "2", *pb_roles(base_url)]


def prepare(argv: list[str]) -> Any:
    from proactive_tui.synth import setup
    from proactive_tui.ui.studio.setup import parse_argv

    args = parse_argv(argv)
    return setup.prepare(args), args


def step_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.json") if p.parent.parent.name in ("items", "shared")
            and p.name != engine.RESULT]


def only_item(folder: Path) -> str:
    return engine.read_manifest(folder).planned[0]


class StudioApp:
    """A minimal app holding the studio screen (the real app for play-now)."""

    @staticmethod
    def make(screen: StudioScreen):
        from textual.app import App

        class _App(App):
            def on_mount(self) -> None:
                self.push_screen(screen)

        return _App()


async def run_to_end(pilot, screen: StudioScreen) -> None:
    await wait_for(pilot, lambda: screen._worker is not None and screen._worker.is_finished and screen.finished)
    await pilot.pause()


# -- step ----------------------------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
async def test_one_press_of_space_is_one_call_file_more(family: str, tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder_for(family)) as server:
        prepared, args = prepare(synth_argv(family, tmp_path / "run", server.base_url, tmp_path))
        screen = StudioScreen(prepared, args.concurrency, mode="step")
        app = StudioApp.make(screen)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: len(screen.gate.waiting) >= 1, timeout=60)
            assert step_files(prepared.folder) == []
            for k in (1, 2, 3):
                await pilot.press("space")
                await wait_for(pilot, lambda k=k: len(step_files(prepared.folder)) == k and len(screen.gate.waiting) >= 1, timeout=60)
                assert len(step_files(prepared.folder)) == k  # exactly one call per press
            status = str(screen.query_one("#studio-status").render())
            assert status.startswith("step") and "next " in status
            # the item in view shows the steps made so far as blocks
            shown = [b.step for b in screen.query(StageBlock) if b.step]
            assert len(shown) == 3
            await pilot.press("a")
            await run_to_end(pilot, screen)
    assert engine.has_result(prepared.folder, only_item(prepared.folder))


# -- edit and re-run -------------------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
async def test_editing_the_first_step_remakes_the_later_ones(family: str, tmp_path: Path) -> None:
    from textual.widgets import TextArea

    from proactive_tui.ui.studio.edit import EditStepModal

    with FakeOpenAIServer(responder=responder_for(family)) as server:
        prepared, args = prepare(synth_argv(family, tmp_path / "run", server.base_url, tmp_path))
        folder, item = prepared.folder, only_item(prepared.folder)
        screen = StudioScreen(prepared, args.concurrency, mode="auto")
        app = StudioApp.make(screen)
        async with app.run_test(size=(120, 40)) as pilot:
            await run_to_end(pilot, screen)
            before = {p.name: p.read_bytes() for p in step_files(folder)}
            first = FIRST_STEP[family]
            block = next(b for b in screen.query(StageBlock) if b.step == first)
            block.focus()
            await pilot.pause()
            await pilot.press("e")
            await wait_for(pilot, lambda: isinstance(app.screen, EditStepModal))
            modal = app.screen
            output = json.loads(modal.query_one(TextArea).text)
            output[EDIT_FIELD[family]] += MARK
            modal.query_one(TextArea).text = "{ not json"
            await pilot.pause()
            assert "not JSON" in str(modal.query_one("#edit-check").render())  # live validation
            assert modal.query_one("#edit-save").disabled
            modal.query_one(TextArea).text = json.dumps(output, indent=1)
            await pilot.pause()
            assert not modal.query_one("#edit-save").disabled
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: app.screen is screen)
            await wait_for(pilot, lambda: engine.has_result(folder, item) and screen._worker.is_finished)
            await pilot.pause()
            edited_block = next(b for b in screen.query(StageBlock) if b.step == first)
            assert edited_block.state == "edited"
    record = engine.read_item(folder, item)
    step = record.steps[first]
    assert step.edited is not None and step.edited.by == "person"
    assert step.output[EDIT_FIELD[family]].endswith(MARK)
    assert MARK not in json.dumps(step.edited.original)  # the model's output kept beside the edit
    remade = [p for p in step_files(folder) if p.stem != first and MARK in p.read_text()]
    assert remade, "no later step was made from the edit"
    assert any(p.name in before and p.read_bytes() != before[p.name] for p in remade)
    assert record.outcome is not None and record.outcome.edited_steps == [first]


# -- keep / reject by hand ---------------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
async def test_keep_and_reject_by_hand_are_a_persons_decision(family: str, tmp_path: Path) -> None:
    from proactive_tui.ui.studio.summary import StudioSummaryScreen, folder_summary

    with FakeOpenAIServer(responder=responder_for(family)) as server:
        prepared, args = prepare(synth_argv(family, tmp_path / "run", server.base_url, tmp_path))
        folder, item = prepared.folder, only_item(prepared.folder)
        screen = StudioScreen(prepared, args.concurrency, mode="auto")
        app = StudioApp.make(screen)
        async with app.run_test(size=(120, 40)) as pilot:
            await run_to_end(pilot, screen)
            pipeline_tier = engine.read_item(folder, item).outcome.tier
            assert engine.read_item(folder, item).outcome.status == "kept"
            await pilot.press("x")
            await pilot.pause()
            result = json.loads((engine.item_dir(folder, item) / "result.json").read_text())
            assert result["status"] == "rejected" and result["decision"]["by"] == "person"
            assert result["decision"]["pipeline_status"] == "kept"
            assert folder_summary(folder).decided_by_person == {"rejected": 1}
            label = str(screen.query_one("#studio-items").get_option_at_index(0).prompt)
            assert "person: rejected" in label
            await pilot.press("t")
            await wait_for(pilot, lambda: isinstance(app.screen, StudioSummaryScreen))
            summary_screen = app.screen
            assert summary_screen.summary.decided_by_person == {"rejected": 1}
            assert [r[0] for r in summary_screen.query_one("#summary-chart").rows] == ["rejected person"]
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen)
            await pilot.press("k")  # keeping it again is the pipeline's verdict again: no decision left
            await pilot.pause()
    result = json.loads((engine.item_dir(folder, item) / "result.json").read_text())
    assert result["status"] == "kept" and result["tier"] == pipeline_tier and result.get("decision") is None
    assert folder_summary(folder).decided_by_person == {}


async def test_keeping_a_rejected_item_asks_for_a_tier(tmp_path: Path) -> None:
    """ProactiveEval's too-easy item carries its environment: a person may keep it, naming the tier."""
    from proactive_tui.ui.studio.edit import TierModal

    with FakeOpenAIServer(responder=pe_responder) as server:
        argv = synth_argv("proactiveeval", tmp_path / "run", server.base_url, tmp_path)
        (tmp_path / "tree.json").write_text(json.dumps(tree(fates=("easy",))))
        prepared, args = prepare(argv)
        folder, item = prepared.folder, only_item(prepared.folder)
        screen = StudioScreen(prepared, args.concurrency, mode="auto")
        app = StudioApp.make(screen)
        async with app.run_test(size=(120, 40)) as pilot:
            await run_to_end(pilot, screen)
            outcome = engine.read_item(folder, item).outcome
            assert outcome.status == "rejected" and outcome.record is not None
            await pilot.press("k")
            await wait_for(pilot, lambda: isinstance(app.screen, TierModal))
            tier = prepared.pipeline.tiers[0]
            await pilot.click("#tier-0")
            await wait_for(pilot, lambda: app.screen is screen)
            await pilot.pause()
    result = json.loads((engine.item_dir(folder, item) / "result.json").read_text())
    assert result["status"] == "kept" and result["tier"] == tier
    assert result["decision"] == {"by": "person", "pipeline_status": "rejected", "pipeline_tier": None,
                                  "pipeline_reason": outcome.reason}


# -- play it now -----------------------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
async def test_play_it_now_opens_the_session_setup_on_the_installed_item(family: str, tmp_path: Path) -> None:
    from proactive_tui.ui.app import ProactiveApp

    with FakeOpenAIServer(responder=responder_for(family)) as server:
        prepared, args = prepare(synth_argv(family, tmp_path / "run", server.base_url, tmp_path))
        folder, item = prepared.folder, only_item(prepared.folder)
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.environments is not None)
            screen = StudioScreen(prepared, args.concurrency, mode="auto")
            app.push_screen(screen)
            await run_to_end(pilot, screen)
            outcome = engine.read_item(folder, item).outcome
            want = prepared.pipeline.installed_id(outcome, prepared.manifest.run_name)
            next(b for b in screen.query(StageBlock) if b.step).focus()
            await pilot.pause()
            await pilot.press("enter")
            await wait_for(pilot, lambda: type(app.screen).__name__.endswith("SetupScreen")
                           and getattr(app.screen, "env", None) is not None)
            assert app.screen.env.id == want
            assert app.environments.get(want) is not None


# -- resume both ways ------------------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
async def test_a_stopped_studio_run_finishes_headless_as_an_uninterrupted_one(family: str, tmp_path: Path) -> None:
    from proactive_tui.cli.main import main

    with FakeOpenAIServer(responder=responder_for(family)) as server:
        prepared, args = prepare(synth_argv(family, tmp_path / "cut", server.base_url, tmp_path))
        screen = StudioScreen(prepared, args.concurrency, mode="step")
        app = StudioApp.make(screen)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: len(screen.gate.waiting) >= 1, timeout=60)
            for k in (1, 2):
                await pilot.press("space")
                await wait_for(pilot, lambda k=k: len(step_files(prepared.folder)) == k and len(screen.gate.waiting) >= 1, timeout=60)
            await pilot.press("s")
            await wait_for(pilot, lambda: screen._worker.is_finished)
            assert "stopped" in str(screen.query_one("#studio-status").render())
        assert len(step_files(prepared.folder)) == 2 and not engine.has_result(prepared.folder, only_item(prepared.folder))
        assert await asyncio.to_thread(main, ["synth", "resume", str(prepared.folder)]) == 0
        whole = synth_argv(family, tmp_path / "whole", server.base_url, tmp_path)
        assert await asyncio.to_thread(main, whole) == 0
    assert files(prepared.folder) == files(tmp_path / "whole")


@pytest.mark.parametrize("family", FAMILIES)
async def test_a_headless_run_stopped_midway_opens_in_the_studio_and_finishes(family: str, tmp_path: Path) -> None:
    from textual.widgets import Input

    from proactive_tui.cli.main import main
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.ui.studio.setup import StudioSetupScreen

    with FakeOpenAIServer(responder=responder_for(family)) as server:
        prepared, args = prepare(synth_argv(family, tmp_path / "cut", server.base_url, tmp_path))
        ended = 0
        task: asyncio.Task | None = None

        def on_event(event: engine.Event) -> None:
            nonlocal ended
            ended += event.kind == "call_end"
            if ended == 2 and task is not None:
                task.cancel()  # like Ctrl-C

        run = engine.Run(prepared.folder, prepared.roles, Gateway(stream_replies=False), args.seed, 1, on_event=on_event)
        task = asyncio.create_task(engine.run_pipeline(prepared.pipeline, prepared.manifest, run))
        with pytest.raises(asyncio.CancelledError):
            await task
        item = only_item(prepared.folder)
        assert not engine.has_result(prepared.folder, item) and step_files(prepared.folder)

        from textual.app import App

        class _App(App):
            def on_mount(self) -> None:
                self.push_screen(StudioSetupScreen())

        app = _App()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            setup_screen = app.screen
            setup_screen.query_one("#setup-open-folder", Input).value = str(prepared.folder)
            setup_screen.action_open()
            await wait_for(pilot, lambda: isinstance(app.screen, StudioScreen))
            studio = app.screen
            await pilot.press("a")
            await run_to_end(pilot, studio)
        whole = synth_argv(family, tmp_path / "whole", server.base_url, tmp_path)
        assert await asyncio.to_thread(main, whole) == 0
    assert engine.has_result(prepared.folder, item)
    assert files(prepared.folder) == files(tmp_path / "whole")  # steps, results, out/, summary


# -- setup -----------------------------------------------------------------------------------

async def test_the_setup_builds_the_command_and_refuses_in_one_line(tmp_path: Path, monkeypatch) -> None:
    from textual.app import App
    from textual.widgets import Input, Select, SelectionList, Static

    from proactive_tui.ui.studio.setup import StudioSetupScreen

    class _App(App):
        def on_mount(self) -> None:
            self.push_screen(StudioSetupScreen("proactivebench"))

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    app = _App()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        roles = [w.id for w in screen.query(".role-model")]
        assert roles == ["role-environment", "role-user", "role-agent"]
        screen.query_one("#role-agent", Input).value = "openai/gpt-x"
        await pilot.pause()
        assert "key: env" in str(screen.query_one("#key-agent", Static).render())
        screen.query_one("#setup-targets", SelectionList).select("coding")
        screen.query_one("#setup-folder", Input).value = str(tmp_path / "r")
        argv = screen.argv()
        assert argv[:2] == ["synth", "proactivebench"] and "--role" in argv and "agent=openai/gpt-x" in argv
        assert argv[-2:] == ["--scene", "coding"]
        screen.query_one("#setup-n", Input).value = "0"
        screen.action_start()
        await pilot.pause()
        assert str(screen.query_one("#setup-error", Static).render()) == "--n must be at least 1"
        assert not (tmp_path / "r").exists() and app.screen is screen  # nothing started
        screen.query_one("#setup-family", Select).value = "chronos"
        await pilot.pause()
        await pilot.pause()
        assert "role-user_critic" in [w.id for w in screen.query(".role-model")]


# -- snapshots -------------------------------------------------------------------------------

SIZES = [(120, 40), (80, 24)]
THEMES = ["proactive-dark", "proactive-light"]


def themed_app(make_screen: Any, theme: str):
    from textual.app import App

    from proactive_tui.paths import builtin_themes_dir
    from proactive_tui.ui.app import ProactiveApp
    from proactive_tui.ui.themes import load_themes

    class _App(App):
        """The app's stylesheet and design variables, without its start-up (environments, store)."""

        CSS_PATH = ProactiveApp.CSS_PATH
        get_theme_variable_defaults = ProactiveApp.get_theme_variable_defaults

        def on_mount(self) -> None:
            for t in load_themes([builtin_themes_dir()])[0]:
                self.register_theme(t)
            self.theme = theme
            self.push_screen(make_screen())

    return _App()


@pytest.fixture
def pe_folder(tmp_path: Path) -> Path:
    """A finished one-item ProactiveEval run under the data folder (`synth/pe-run`)."""
    from proactive_tui import paths
    from proactive_tui.cli.main import main

    out = paths.data_dir() / "synth" / "pe-run"
    with FakeOpenAIServer(responder=pe_responder) as server:
        assert main(synth_argv("proactiveeval", out, server.base_url, tmp_path) + ["--out-only"]) == 0
    return out


def finished_studio(folder: Path) -> StudioScreen:
    from proactive_tui.synth import setup
    from proactive_tui.ui.studio.screen import open_args

    args = open_args(folder)
    return StudioScreen(setup.prepare(args), args.concurrency, start=False)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=["120x40", "80x24"])
def test_snapshot_studio_setup(snap_compare, size, theme, pe_folder, monkeypatch) -> None:
    from proactive_tui.ui.studio import setup as studio_setup

    monkeypatch.setattr(studio_setup, "default_folder",
                        lambda family, now=None: Path("~/.local/share/proactive-tui/synth") / f"{family}-20260101-120000")
    app = themed_app(lambda: studio_setup.StudioSetupScreen("proactiveeval"), theme)

    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=["120x40", "80x24"])
def test_snapshot_studio_finished_item(snap_compare, size, theme, pe_folder) -> None:
    app = themed_app(lambda: finished_studio(pe_folder), theme)

    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=["120x40", "80x24"])
def test_snapshot_studio_edit_modal(snap_compare, size, theme, pe_folder) -> None:
    app = themed_app(lambda: finished_studio(pe_folder), theme)

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: any(b.step == "environment" for b in pilot.app.screen.query(StageBlock)))
        next(b for b in pilot.app.screen.query(StageBlock) if b.step == "environment").focus()
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=["120x40", "80x24"])
def test_snapshot_studio_summary(snap_compare, size, theme, pe_folder) -> None:
    app = themed_app(lambda: finished_studio(pe_folder), theme)

    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.press("t")
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


# -- entry points ----------------------------------------------------------------------------

async def test_the_studio_opens_from_the_picker_key_the_palette_and_is_in_f1() -> None:
    from proactive_tui.ui.app import ProactiveApp
    from proactive_tui.ui.screens.help import collect_groups
    from proactive_tui.ui.screens.picker import PickerScreen
    from proactive_tui.ui.studio.setup import StudioSetupScreen

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen))
        rows = [row for _title, group in collect_groups(app, app.screen) for row in group]
        assert any(key == "g" and "studio" in text for key, text in rows)
        titles = {c.title: c for c in app.get_system_commands(app.screen)}
        assert "Studio: generate environments" in titles
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, StudioSetupScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen))
        app.call_later(titles["Studio: generate environments"].callback)  # as the palette runs it
        await wait_for(pilot, lambda: isinstance(app.screen, StudioSetupScreen))
        assert "Studio: generate environments" not in {c.title for c in app.get_system_commands(app.screen)}


async def test_a_family_setup_tool_adds_its_arguments_to_the_command(monkeypatch) -> None:
    """A family view's `setup_tool()` (ProactiveEval's topic tree) is a button on the setup; what
    its screen returns joins the command line."""
    from textual.app import App
    from textual.screen import ModalScreen
    from textual.widgets import Button

    from proactive_tui.core import registry
    from proactive_tui.ui.studio.setup import StudioSetupScreen
    from proactive_tui.ui.studio.step_list import StepListView
    from proactive_tui.ui.studio.view import SetupToolContext

    seen: list[SetupToolContext] = []

    class Tool(ModalScreen):
        def __init__(self, context: SetupToolContext) -> None:
            super().__init__()
            seen.append(context)

        def on_mount(self) -> None:
            self.dismiss(["--batches", "3"])

    class WithTool(StepListView):
        @classmethod
        def setup_tool(cls):
            return ("Plan batches", Tool)

    family = registry.get("proactivebench")
    own_screen = family.screen
    monkeypatch.setattr(family, "screen", lambda which: WithTool if which == "studio_view" else own_screen(which))

    class _App(App):
        def on_mount(self) -> None:
            self.push_screen(StudioSetupScreen("proactivebench"))

    app = _App()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        button = screen.query_one("#setup-tool", Button)
        assert button.display and str(button.label) == "Plan batches"
        button.press()
        await wait_for(pilot, lambda: screen.extra_args == ["--batches", "3"])
        assert seen[0].family == "proactivebench" and "coding" in seen[0].targets
        assert set(seen[0].roles) == {"environment", "user", "agent"}
        assert screen.argv()[-2:] == ["--batches", "3"]
        assert "--batches 3" in str(screen.query_one("#setup-extra").render())


def test_item_status_words_and_the_run_folder_list(pe_folder: Path) -> None:
    from proactive_tui.synth.engine import Outcome, PersonDecision
    from proactive_tui.ui.studio.screen import item_status
    from proactive_tui.ui.studio.setup import run_folders

    assert item_status(None) == "pending" and item_status(None, running=True) == "running"
    assert item_status(None, failed="server error 503") == "failed: server error 503"
    kept = Outcome(item="a", status="kept", tier="fair")
    assert item_status(kept) == "kept fair"
    rejected = Outcome(item="a", status="rejected", reason="too_easy")
    assert item_status(rejected) == "rejected too_easy"
    by_person = kept.model_copy(update={"decision": PersonDecision(pipeline_status="rejected")})
    assert item_status(by_person) == "person: kept fair"
    (pe_folder.parent / "not-a-run").mkdir()
    (pe_folder.parent / "broken").mkdir()
    (pe_folder.parent / "broken" / "manifest.json").write_text("{")
    listed = run_folders()
    assert [(r.path.name, r.family, r.planned, r.done, r.kept) for r in listed] == [("pe-run", "proactiveeval", 1, 1, 1)]
