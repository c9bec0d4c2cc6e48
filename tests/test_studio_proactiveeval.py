"""ProactiveEval in the studio: one generated item drawn stage by stage from its run folder (a real
headless run against the fake server, tests/synth_fake.py), and the topic tree a person shapes
before a run (expanded with the model against the fake server, edited by hand, leaves chosen)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Input, Tree

from synth_fake import responder, role_args, tree
from ui_helpers import settle, wait_for
from proactive_tui.cli.main import main
from proactive_tui.core import registry
from proactive_tui.families.proactiveeval.ui.studio_view import ProactiveEvalStudioView, StageRow, diff_text
from proactive_tui.families.proactiveeval.ui.topic_tree import NameModal, TopicTreeScreen
from proactive_tui.paths import builtin_themes_dir
from proactive_tui.synth import engine
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.studio.view import SetupToolContext, StageBlock
from proactive_tui.ui.themes import load_themes

FATES = ("hard", "soften", "easy", "split", "schema")
"""hard: kept, no probe right; soften: fair after one refinement round; easy: too easy at the cap
(rejected, with its environment); split: the validators reject it; schema: no environment."""


def synth_argv(out: Path, tree_file: Path, base_url: str, *extra: str) -> list[str]:
    return ["synth", "proactiveeval", "--domain", "recommendation", "--n", str(len(FATES)), "--seed", "3",
            "--out", str(out), "--tree", str(tree_file), "--max-rounds", "1", *role_args(base_url), *extra]


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One headless run, every item finished (each test copies it before changing it)."""
    base = tmp_path_factory.mktemp("pe-studio")
    tree_file = base / "tree.json"
    tree_file.write_text(json.dumps(tree(fates=FATES)))
    with FakeOpenAIServer(responder=responder) as server:
        assert main(synth_argv(base / "run", tree_file, server.base_url)) == 0
    return base / "run"


def item_of(folder: Path, fate: str) -> str:
    """The item made from the leaf named `fate`."""
    for item in sorted((folder / "items").iterdir()):
        step = json.loads((item / "environment.json").read_text())
        if f"Topic: Recommendation / {fate}\n" in step["input"][-1]["content"]:
            return item.name
    raise AssertionError(f"no item of {fate}")


def pipeline_of(folder: Path):
    manifest = engine.read_manifest(folder)
    return registry.get("proactiveeval").generate.pipeline(manifest.options)


def plain(block: StageBlock) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(block.render())
    return console.export_text()


class Host(App):
    """The view alone, as the studio screen holds it."""

    def __init__(self, pipeline, state: engine.ItemState, live: str | None = None, theme: str | None = None) -> None:
        super().__init__()
        self.pipeline, self.item_state, self.live, self.wanted_theme = pipeline, state, live, theme
        for t in load_themes([builtin_themes_dir()])[0]:
            self.register_theme(t)

    def compose(self) -> ComposeResult:
        yield ProactiveEvalStudioView(self.pipeline, id="view")

    def on_mount(self) -> None:
        if self.wanted_theme:
            self.theme = self.wanted_theme
        self.query_one(ProactiveEvalStudioView).show(self.item_state, self.live)


def by_step(app: App) -> dict[str | None, StageBlock]:
    return {b.step: b for b in app.query(StageBlock) if b.step is not None}


def texts(app: App) -> str:
    """Every block's text and every row's title."""
    return "\n".join([plain(b) for b in app.query(StageBlock)] + [r.title for r in app.query(StageRow)])


async def test_a_kept_item_shows_every_stage_in_order(run_folder: Path) -> None:
    item = item_of(run_folder, "soften")
    app = Host(pipeline_of(run_folder), engine.read_item(run_folder, item))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        blocks = by_step(app)
        shown = texts(app)
        # the topic path from the environment's request, then U and F
        assert "Recommendation / soften" in plain(list(app.query(StageBlock))[0])
        assert "A user FATE-soften who likes tea." in plain(blocks["environment"])
        # five candidates side by side in one row, each bound to its step
        rows = list(app.query(StageRow))
        candidates = [b.step for b in rows[0].blocks]
        assert candidates == [f"candidate-{k}" for k in range(1, 6)]
        assert rows[0].query_one('.stage-row-grid').styles.grid_size_columns == 3  # 120 columns hold three of them a row
        assert "help with soften" in plain(blocks["candidate-3"])
        assert "Target FATE-soften" in plain(blocks["ensemble"])
        # round 0: two probes judged the same as the reference -> refined; round 1: one -> fair
        r0 = [plain(blocks[f"probe-r0-{k}"]) for k in (1, 2, 3)]
        assert ["judge: same" in t for t in r0] == [True, True, False]
        assert "2 of 3 probes conveyed the reference: too easy: refine" in plain(blocks["judge-r0"])
        assert "1 of 3 probes conveyed the reference: fair" in plain(blocks["judge-r1"])
        # the refinement round as diffs: the noise rewrite of F added a marker to the sentence
        noise_f = plain(blocks["noise-trigger_factor-r1"])
        assert "  It is 9 am; FATE-soften happens.\n+ [r]" in noise_f and "\n- " not in noise_f
        assert "(no change)" in plain(blocks["obfuscate-user_information-r1"])
        # votes, then the verdict
        assert all("yes: the reference is the best target" in plain(blocks[f"validator-{k}"]) for k in range(1, 6))
        assert "Final check: 5 of 5 votes" in shown
        assert "kept: tier fair" in shown and "decided by a person" not in shown
        # the stages come in the pipeline's order
        order = [b.step for b in app.query(StageBlock) if b.step]
        assert order.index("environment") < order.index("candidate-1") < order.index("ensemble") \
            < order.index("probe-r0-1") < order.index("obfuscate-user_information-r1") \
            < order.index("probe-r1-1") < order.index("validator-1")


async def test_rejections_show_their_reason(run_folder: Path) -> None:
    pipeline = pipeline_of(run_folder)
    for fate, reason, detail in (("easy", "too_easy", "after 1 refinement rounds"),
                                 ("split", "validators", "2 of 5 validators"),
                                 ("schema", "schema_invalid", "EnvironmentDraft")):
        app = Host(pipeline, engine.read_item(run_folder, item_of(run_folder, fate)))
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            verdict = [b for b in app.query(StageBlock) if b.title == "Verdict"][0]
            assert f"rejected: {reason}" in plain(verdict) and detail in plain(verdict)
            assert verdict.has_class("-rejected")
            if fate == "split":
                assert "Final check: 2 of 5 votes" in texts(app)
                assert "no" in plain(by_step(app)["validator-5"]).split()
            if fate == "schema":  # the environment's reply could not be used: its block says so
                env = by_step(app)["environment"]
                assert env.has_class("-rejected") and "schema_invalid" in plain(env)


async def test_an_edited_step_is_a_persons_and_a_rerun_remakes_what_follows(run_folder: Path, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(run_folder, folder)
    pipeline = pipeline_of(folder)
    item = item_of(folder, "hard")
    engine.edit_step(folder, pipeline, item, "candidate-2", {"target": "a person's target", "sub_targets": ["mine"]})
    app = Host(pipeline, engine.read_item(folder, item), live="ensemble")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        blocks = by_step(app)
        edited = blocks["candidate-2"]
        assert edited.has_class("-edited") and "(edited by a person)" in plain(edited)
        assert "a person's target" in plain(edited)
        assert blocks["ensemble"].has_class("-live") and "(calling…)" in plain(blocks["ensemble"])
        assert "probe-r0-1" not in blocks and "Verdict" not in texts(app)  # the edit forgot what followed
        # re-run the item: the later stages come back, and the verdict names the person's step
        manifest = engine.read_manifest(folder)
        with FakeOpenAIServer(responder=responder) as server:
            roles = engine_roles(pipeline, server.base_url)
            from proactive_tui.llm.gateway import Gateway

            await engine.run_pipeline(pipeline, manifest, engine.Run(folder, roles, Gateway(stream_replies=False), 3, 2),
                                      items=[item])
        view = app.query_one(ProactiveEvalStudioView)
        blocks["candidate-2"].focus()
        await pilot.pause()
        view.show(engine.read_item(folder, item))
        await settle(pilot)
        shown = texts(app)
        assert "kept: tier hard" in shown and "steps a person rewrote: candidate-2" in shown
        assert by_step(app)["candidate-2"].has_class("-edited")
        assert app.focused is by_step(app)["candidate-2"]  # focus stays on the block a person was reading


def engine_roles(pipeline, base_url: str):
    from proactive_tui.synth.setup import resolve_roles

    return resolve_roles([r.name for r in pipeline.roles], role_args(base_url)[3::2], base_url, None)


async def test_a_persons_decision_is_shown_beside_the_pipelines(run_folder: Path, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(run_folder, folder)
    item = item_of(folder, "easy")
    engine.decide(folder, item, "kept", tier="fair")
    app = Host(pipeline_of(folder), engine.read_item(folder, item))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        verdict = plain([b for b in app.query(StageBlock) if b.title == "Verdict"][0])
        assert "kept: tier fair" in verdict and "decided by a person; the pipeline had rejected (too_easy)" in verdict


async def test_before_the_environment_the_planned_topic_and_the_live_call_show(run_folder: Path) -> None:
    item = item_of(run_folder, "split")
    app = Host(pipeline_of(run_folder), engine.ItemState(item=item, steps={}), live="environment")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        blocks = list(app.query(StageBlock))
        assert "Recommendation / split" in plain(blocks[0])  # derived from the given tree as the pipeline does
        assert [b.step for b in blocks[1:]] == ["environment"] and blocks[1].has_class("-live")


def test_diff_marks_removed_and_added_pieces_literally() -> None:
    out = diff_text("Kenji walks. He likes [bold]tea[/bold].", "Kenji walks. He likes coffee.")
    lines = out.plain.splitlines()
    assert lines == ["  Kenji walks.", "- He likes [bold]tea[/bold].", "+ He likes coffee."]
    assert out.plain.count("[bold]") == 1  # markup in model text stays text


# -- the topic tree --------------------------------------------------------------------------------

class TreeHost(App):
    def __init__(self, context: SetupToolContext, theme: str | None = None) -> None:
        super().__init__()
        self.context, self.wanted_theme = context, theme
        self.result: list[str] | None | str = "open"
        for t in load_themes([builtin_themes_dir()])[0]:
            self.register_theme(t)

    def on_mount(self) -> None:
        if self.wanted_theme:
            self.theme = self.wanted_theme

        def done(value: list[str] | None) -> None:
            self.result = value

        self.push_screen(TopicTreeScreen(self.context), done)


def tree_context(tmp_path: Path, base_url: str) -> SetupToolContext:
    from proactive_tui.synth.setup import resolve_roles

    roles = resolve_roles(["generator"], ["generator=openai/gen"], base_url, None)
    return SetupToolContext("proactiveeval", ["recommendation"], roles, tmp_path / "run")


async def name_it(pilot, app: App, text: str) -> None:
    await wait_for(pilot, lambda: isinstance(app.screen, NameModal))
    box = app.screen.query_one(Input)
    box.value = text
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, TopicTreeScreen))


def test_the_family_hands_the_studio_its_view_and_topic_tree() -> None:
    view = registry.get("proactiveeval").screen("studio_view")
    assert view is ProactiveEvalStudioView and view.setup_tool() == ("Topic tree…", TopicTreeScreen)


async def test_topic_tree_expand_edit_choose_and_use(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as server:
        app = TreeHost(tree_context(tmp_path, server.base_url))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, TopicTreeScreen))
            screen = app.screen
            widget = screen.query_one(Tree)
            widget.focus()
            root = widget.root
            assert "(openai/gen, the generator seat)" in str(screen.query_one("#keys").render())
            await pilot.press("x")  # the first level from the model
            await wait_for(pilot, lambda: len(root.children) == 3)
            assert [c.data.topic for c in root.children] == ["Home cooking", "Travel planning", "Personal finance"]
            sent = server.chat_requests()[-1].body
            assert "List 3 distinct first-level sub-topics" in json.dumps(sent["messages"])
            home = root.children[0]
            widget.move_cursor(home)
            await pilot.press("x")  # the fake gives the same three again: all near-duplicates, dropped
            await wait_for(pilot, lambda: len(server.chat_requests()) == 2 and not screen.expanding)
            assert "Topic: Recommendation > Home cooking" in json.dumps(server.chat_requests()[-1].body["messages"])
            assert len(home.children) == 0 and len(root.children) == 3
            await pilot.press("a")
            await name_it(pilot, app, "Weeknight   meals")
            assert [c.data.topic for c in home.children] == ["Weeknight meals"]
            widget.move_cursor(root.children[1])
            await pilot.press("r")
            await name_it(pilot, app, "Train travel")
            widget.move_cursor(root.children[2])
            await pilot.press("d")
            await pilot.pause()
            assert [c.data.topic for c in root.children] == ["Home cooking", "Train travel"]
            widget.move_cursor(home)
            await pilot.press("space")  # not a leaf any more: refused
            await pilot.pause()
            assert not home.data.chosen
            widget.move_cursor(home.children[0])
            await pilot.press("space")
            await pilot.pause()
            assert home.children[0].data.chosen and str(home.children[0].label).startswith("● ")
            await pilot.press("u")
            await wait_for(pilot, lambda: app.result != "open")
    path = (tmp_path / "run" / "topic-tree.json").resolve()
    assert app.result == ["--tree", str(path), "--leaf", "recommendation/Recommendation / Home cooking / Weeknight meals"]
    assert json.loads(path.read_text()) == {"recommendation": {"topic": "Recommendation", "children": [
        {"topic": "Home cooking", "children": [{"topic": "Weeknight meals", "children": []}]},
        {"topic": "Train travel", "children": []}]}}
    # the arguments are the real command's: the pipeline takes them and draws from the chosen leaf
    from proactive_tui.cli.main import build_parser

    args = build_parser().parse_args(["synth", "proactiveeval", "--domain", "recommendation", "--n", "1", "--out",
                                      str(tmp_path / "run"), *app.result])
    family = registry.get("proactiveeval")
    pipeline = family.generate.pipeline(family.generate.options(args))
    assert pipeline.chosen == {"recommendation": ["Recommendation / Home cooking / Weeknight meals"]}


async def test_topic_tree_cancel_and_an_empty_tree_are_refused(tmp_path: Path) -> None:
    app = TreeHost(SetupToolContext("proactiveeval", ["recommendation"], {}, tmp_path / "run"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TopicTreeScreen))
        app.screen.query_one(Tree).focus()
        await pilot.press("x")  # no generator seat: one clear note, nothing asked
        await pilot.press("u")  # nothing below the root: refused, the screen stays
        await pilot.pause()
        assert isinstance(app.screen, TopicTreeScreen) and app.result == "open"
        assert not (tmp_path / "run" / "topic-tree.json").exists()
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.result != "open")
    assert app.result is None


# -- snapshots -------------------------------------------------------------------------------------

THEMES = [pytest.param(None, id="dark"), pytest.param("proactive-light", id="light")]
SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES)
def test_snapshot_item_view(snap_compare, run_folder: Path, size, theme) -> None:
    state = engine.read_item(run_folder, item_of(run_folder, "soften"))
    app = Host(pipeline_of(run_folder), state, theme=theme)

    async def run_before(pilot) -> None:
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES)
def test_snapshot_item_view_refinement(snap_compare, run_folder: Path, size, theme) -> None:
    """Scrolled to the refinement round's diffs and the verdict."""
    state = engine.read_item(run_folder, item_of(run_folder, "soften"))
    app = Host(pipeline_of(run_folder), state, theme=theme)

    async def run_before(pilot) -> None:
        await settle(pilot)
        by_step(app)["noise-trigger_factor-r1"].focus()
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES)
def test_snapshot_topic_tree(snap_compare, tmp_path: Path, size, theme) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "topic-tree.json").write_text(json.dumps({"recommendation": {"topic": "Recommendation", "children": [
        {"topic": "Home cooking", "children": [{"topic": "Weeknight meals", "children": []},
                                               {"topic": "[bold]Batch[/bold] baking", "children": []}]},
        {"topic": "Travel planning", "children": []}]}}))
    app = TreeHost(SetupToolContext("proactiveeval", ["recommendation"], {}, folder), theme=theme)

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: isinstance(app.screen, TopicTreeScreen))
        widget = app.screen.query_one(Tree)
        widget.focus()
        widget.move_cursor(widget.root.children[0].children[0])
        await pilot.press("space")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
