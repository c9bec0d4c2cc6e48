"""The playground's first screen: picker, preview, spoiler toggle, detail modal, help, snapshots.

Pilot tests assert on widget state; snapshot tests (pytest-textual-snapshot) pin the look of the
picker at two sizes, the help modal and every built-in theme. Regenerate snapshots after an
intended change with `pytest tests/test_ui_picker.py --snapshot-update` and look at the diffs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from textual.widgets import Static

from conftest import ROOT, SAMPLE_DIRS
from ui_helpers import burst_then_settle
from proactive_tui.envs import load_default
from proactive_tui.paths import builtin_themes_dir
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.detail import EnvironmentDetailScreen
from proactive_tui.ui.screens.help import HelpScreen
from proactive_tui.ui.screens.picker import PickerScreen

BUILTIN_THEMES = sorted(p.stem for p in builtin_themes_dir().glob("*.toml"))
MARKUP_TITLE = "Sneaky [bold]x[/] title"
MARKUP_PERSONA = "Clicks [@click=app.quit]here[/] and [red]paints[/red]"
ESCAPES = "\x1b[2J\x1b]0;pwned\x07\x1b[31m"  # clear screen, set window title, colour


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")
    monkeypatch.delenv("PROACTIVE_TUI_READY_FILE", raising=False)


def shown_text(widget) -> str:
    """What the Static widgets inside `widget` display, as plain text."""
    return "\n".join(static.visual.plain for static in widget.query(Static))


async def highlight(pilot, env_id: str) -> None:
    tree = pilot.app.screen.tree
    node = next(n for n in tree.leaves() if n.data.id == env_id)
    tree.move_cursor(node)
    await pilot.pause()


def leaf_ids(app) -> list[str]:
    return [node.data.id for node in app.screen.tree.leaves()]


# -- picker -------------------------------------------------------------------------------------


async def test_picker_lists_every_sample_environment() -> None:
    expected = load_default().environments
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        assert sorted(leaf_ids(app)) == sorted(env.id for env in expected)
        assert app.title == "proactive-tui"
        assert app.sub_title == f"{len(expected)} environments"
        labels = [str(node.label) for node in app.screen.tree.root.children]
        assert any(label.startswith("proactiveeval (") for label in labels)
        domain_labels = [str(n.label) for fam in app.screen.tree.root.children for n in fam.children]
        recommendation = len([e for e in expected if e.domain == "recommendation"])
        assert f"recommendation ({recommendation})" in domain_labels


async def test_proactiveeval_nests_by_tier() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        family = next(n for n in app.screen.tree.root.children if str(n.label).startswith("proactiveeval"))
        domain = family.children[0]
        assert [str(t.label).split(" ")[0] for t in domain.children] == ["fair", "hard"]


async def test_filter_narrows_and_escape_restores() -> None:
    total = len(load_default().environments)
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"chronos")
        await pilot.pause()
        ids = leaf_ids(app)
        assert len(ids) == 18 and all(i.startswith("chronos/") for i in ids)  # 9 samples, 2 branches each
        assert app.screen.tree.border_title.endswith(f"18/{total}")
        family = app.screen.tree.root.children
        assert [str(n.label) for n in family] == ["chronos (18)"]
        await pilot.press("escape")
        await pilot.pause()
        assert len(leaf_ids(app)) == total


async def test_filter_matches_words_from_the_description() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"jimny", "enter")  # a listing only the negative branch holds
        await pilot.pause()
        assert leaf_ids(app) == ["chronos/car-purchase-towing/negative"]
        # the only match is highlighted and previewed
        assert "chronos/car-purchase-towing/negative" in shown_text(app.screen.preview)
        await pilot.press("slash", "ctrl+a", *"zzzz-nothing")
        await pilot.pause()
        assert leaf_ids(app) == []
        assert "No environment matches" in shown_text(app.screen.preview)


async def test_selecting_an_environment_shows_its_preview() -> None:
    env = load_default().get("chronos/house-hunting/positive")
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await highlight(pilot, env.id)
        text = shown_text(app.screen.preview)
        assert env.id in text and env.title in text and env.scenario.persona in text


async def test_r_hides_the_reference_target() -> None:
    env = load_default().get("proactiveeval/recommendation/fair/0")
    target = env.item.target
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await highlight(pilot, env.id)
        assert target in shown_text(app.screen.preview)
        assert "reference shown" in app.screen.preview.border_title
        await pilot.press("r")
        await pilot.pause()
        text = shown_text(app.screen.preview)
        assert "(hidden)" in text and target not in text
        assert "reference hidden" in app.screen.preview.border_title
        # the spoiler setting follows the cursor and into the detail modal
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, EnvironmentDetailScreen)
        assert target not in shown_text(app.screen)
        await pilot.press("escape", "r")
        await pilot.pause()
        assert target in shown_text(app.screen.preview)


async def test_d_opens_detail_modal_and_escape_closes() -> None:
    env = load_default().get("proactivebench/coding_01")
    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await highlight(pilot, env.id)
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, EnvironmentDetailScreen)
        assert app.screen.env.id == env.id
        assert env.events[0].observation.event in shown_text(app.screen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        assert app.screen.tree.cursor_node.data.id == env.id


async def test_start_session_hook_replaces_the_modal() -> None:
    chosen = []
    app = ProactiveApp()
    app.start_session_hook = chosen.append
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await highlight(pilot, "chronos/ticket-booking/positive")
        await pilot.press("enter")
        await pilot.pause()
        assert [env.id for env in chosen] == ["chronos/ticket-booking/positive"]
        assert isinstance(app.screen, PickerScreen)


async def test_first_click_highlights_second_click_opens() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        tree = app.screen.tree
        target = tree.leaves()[1]
        offset = (10, target.line - tree.scroll_offset.y + 1)  # +1: the tree's top border
        await pilot.click(tree, offset=offset)
        await pilot.pause()
        assert tree.cursor_node is target and isinstance(app.screen, PickerScreen)
        await pilot.click(tree, offset=offset)
        await pilot.pause()
        from proactive_tui.ui.screens.setup_base import SetupScreenBase as SetupScreen

        # a ProactiveEval environment: opening it means setting up a session
        assert target.data.family == "proactiveeval" and isinstance(app.screen, SetupScreen)


async def test_title_bar_and_key_bar() -> None:
    from proactive_tui.ui.widgets.key_bar import KeyBar
    from proactive_tui.ui.widgets.title_bar import TitleBar

    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        title = app.screen.query_one(TitleBar).visual.plain
        assert "proactive-tui" in title and f"{len(load_default().environments)} environments" in title
        bar = app.screen.query_one(KeyBar)
        hints = bar.visual.plain
        assert "r Reference" in hints and "f1 Help" in hints and "esc Clear" not in hints
        assert "h History" in hints
        await pilot.click(bar, offset=(hints.index("r Reference") + 1, 0))  # +1: left padding
        await pilot.pause()
        assert app.screen.reveal_reference is False
        await pilot.press("slash", "x")
        await pilot.pause()
        hints = bar.visual.plain
        assert "esc Clear" in hints and "r Reference" not in hints  # typing: r goes to the input


async def test_key_bar_keeps_the_screens_keys_and_palette_at_80_columns() -> None:
    from proactive_tui.ui.widgets.key_bar import KeyBar

    app = ProactiveApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *"car", "down")  # a filter: Clear joins the screen's keys
        await pilot.pause()
        bar = app.screen.query_one(KeyBar)
        hints = bar.visual.plain
        for hint in ("⏎ Open", "/ Filter", "r Reference", "d Details", "h History", "esc Clear", "^p palette"):
            assert hint in hints, hints
        assert len(hints) <= bar.content_region.width  # nothing cut at the edge: app-wide keys gave way
        await pilot.click(bar, offset=(hints.index("h History") + 1, 0))
        await pilot.pause()
        from proactive_tui.ui.screens.history import HistoryScreen

        assert isinstance(app.screen, HistoryScreen)


async def test_preview_follows_the_cursor_after_a_quick_filter_and_down() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # no pause between the keys: a person typing fast
        await pilot.press("slash", *"house", "down", "down", "down", "up", "down")
        for _ in range(5):
            await pilot.pause()
        from proactive_tui.envs.describe import describe
        from proactive_tui.ui.env_index import Group
        from proactive_tui.ui.screens.picker import group_sections

        node = app.screen.tree.cursor_node
        assert node is not None and node.data is not None
        expected = (group_sections(node.data) if isinstance(node.data, Group)
                    else describe(node.data, reveal_reference=True))
        assert app.screen.preview.sections == tuple(expected)


async def test_a_filter_with_no_match_says_so() -> None:
    total = len(load_default().environments)
    app = ProactiveApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *"zzzz-nothing")
        await pilot.pause()
        tree = app.screen.tree
        assert tree.border_title == f"No match (0/{total})" and "Escape" in tree.border_subtitle
        assert "No environment matches 'zzzz-nothing'" in shown_text(app.screen.preview)
        await pilot.press("escape")
        await pilot.pause()
        assert tree.border_title == f"Environments ({total})" and not tree.border_subtitle


async def test_environment_count_comes_back_after_a_session() -> None:
    from proactive_tui.ui.widgets.title_bar import TitleBar

    total = len(load_default().environments)
    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("h")  # the history says "session history"
        await pilot.pause()
        assert "session history" in app.screen.query_one(TitleBar).visual.plain
        await pilot.press("escape")
        await pilot.pause()
        from ui_helpers import PE_ENV, fake_spec, scripted_factory
        from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen

        env = app.environments.get(PE_ENV)
        app.push_screen(ProactiveEvalSessionScreen(env, fake_spec(PE_ENV, "http://unused", max_turns=1),
                                                   scripted_factory()))
        await pilot.pause()
        assert PE_ENV in app.screen.query_one(TitleBar).visual.plain  # the session's own subtitle
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        assert f"{total} environments" in app.screen.query_one(TitleBar).visual.plain


async def test_hidden_reference_hides_the_chronos_branch_and_notes() -> None:
    env = load_default().get("chronos/car-purchase-towing/negative")
    notes = [s.note for s in env.scenario.timeline if s.note]
    assert notes  # the sample has authors' notes to hide
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await highlight(pilot, env.id)
        text = shown_text(app.screen.preview)
        assert "negative branch" in text and notes[0] in text
        await pilot.press("r")
        await pilot.pause()
        text = shown_text(app.screen.preview)
        assert "branch" not in text and "meets needs" not in text
        assert not any(note in text for note in notes)
        assert env.scenario.persona in text  # the rest stays


# -- untrusted text -----------------------------------------------------------------------------


def markup_env_folder(root: Path) -> Path:
    folder = root / "mine" / "chronos"
    folder.mkdir(parents=True)
    data = json.loads((SAMPLE_DIRS["chronos"] / "car-purchase.json").read_text(encoding="utf-8"))
    data["title"] = MARKUP_TITLE + ESCAPES
    data["persona"] = MARKUP_PERSONA + ESCAPES
    (folder / "markup-test.json").write_text(json.dumps(data), encoding="utf-8")
    return root / "mine"


async def test_environment_text_is_never_markup_nor_escapes(tmp_path: Path) -> None:
    app = ProactiveApp(extra_envs=[markup_env_folder(tmp_path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "chronos/markup-test/positive" in leaf_ids(app)
        await highlight(pilot, "chronos/markup-test/positive")
        node = app.screen.tree.cursor_node
        assert node.label.plain == f"positive: {MARKUP_TITLE}"  # the branch first, then the title as written
        text = shown_text(app.screen.preview)
        assert MARKUP_TITLE in text and MARKUP_PERSONA in text
        assert "\x1b" not in text and "\x07" not in text and "pwned" not in text
        screenshot = app.export_screenshot()
        assert "[bold]x[/]" in screenshot and "[@click=app.quit]" in screenshot
        await pilot.press("d")
        await pilot.pause()
        assert MARKUP_PERSONA in shown_text(app.screen)
        # Clicking the persona line must not run the smuggled action.
        persona = next(s for s in app.screen.query(Static) if MARKUP_PERSONA in s.visual.plain)
        await pilot.click(persona, offset=(9, 0))
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, EnvironmentDetailScreen)


async def test_environment_problems_are_one_notification(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    (bad / "chronos").mkdir(parents=True)
    (bad / "chronos" / "broken.json").write_text("{not json", encoding="utf-8")
    (bad / "chronos" / "empty.json").write_text("{}", encoding="utf-8")
    app = ProactiveApp(extra_envs=[bad])
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        notes = [n.message for n in app._notifications if "loading environments" in n.message]
        assert len(notes) == 1
        assert notes[0].startswith(f"{len(app.environments.problems)} problem(s) loading environments: first problem ")
        assert "broken.json" in notes[0] and notes[0].endswith("run `proactive-tui envs validate`")
        assert len(leaf_ids(app)) == len(load_default().environments)


# -- help, start-up hooks -----------------------------------------------------------------------


@pytest.mark.parametrize("key", ["f1", "question_mark"])
async def test_help_lists_the_bindings(key: str) -> None:
    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = shown_text(app.screen)
        for description in ("filter", "reference solution", "Clear the filter", "Open the highlighted", "list of keys", "Next theme", "Quit", "Command palette"):
            assert description in text
        assert "^t" in text and "f1, ?" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)


async def test_ready_file_and_preload_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from proactive_tui.llm import gateway

    called = threading.Event()
    monkeypatch.setattr(gateway, "preload", called.set)
    monkeypatch.delenv("PROACTIVE_TUI_NO_PRELOAD")
    ready = tmp_path / "ready"
    monkeypatch.setenv("PROACTIVE_TUI_READY_FILE", str(ready))
    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert called.wait(5)
        assert float(ready.read_text()) > 0


async def test_no_preload_when_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    from proactive_tui.llm import gateway

    called = threading.Event()
    monkeypatch.setattr(gateway, "preload", called.set)
    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
    assert not called.is_set()


def test_ui_app_import_leaves_model_layer_out() -> None:
    code = (
        "import sys, json, proactive_tui.ui.app; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'litellm', 'llama_cpp', 'openai'})))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_run_app_builds_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from proactive_tui.cli import app_cmd

    seen = {}

    def fake_run(self, *args, **kwargs):
        seen["extra"] = self.extra_envs

    monkeypatch.setattr(ProactiveApp, "run", fake_run)
    monkeypatch.setattr(app_cmd, "has_terminal", lambda: True)  # pytest's captured streams are no tty
    assert app_cmd.run_app(argparse.Namespace(envs=["somewhere"])) == 0
    assert seen["extra"][0] == "somewhere"


# -- snapshots ----------------------------------------------------------------------------------


def test_snapshot_picker_120x40(snap_compare) -> None:
    assert snap_compare(ProactiveApp(), terminal_size=(120, 40))


def test_snapshot_picker_80x24(snap_compare) -> None:
    assert snap_compare(ProactiveApp(), terminal_size=(80, 24))


def test_snapshot_picker_filtered_hidden_reference_80x24(snap_compare) -> None:
    assert snap_compare(ProactiveApp(), terminal_size=(80, 24), press=["slash", *"ticket", "enter", "r"])


def test_snapshot_help(snap_compare) -> None:
    assert snap_compare(ProactiveApp(), terminal_size=(80, 24), press=["f1"])


def test_snapshot_detail(snap_compare) -> None:
    assert snap_compare(ProactiveApp(), terminal_size=(80, 24), press=["d"])


@pytest.mark.parametrize("theme", BUILTIN_THEMES)
def test_snapshot_theme(snap_compare, theme: str) -> None:
    def apply(pilot) -> None:
        pilot.app.theme = theme

    assert snap_compare(ProactiveApp(), terminal_size=(100, 30), run_before=apply)


async def test_key_bar_on_a_crowded_screen_says_where_the_rest_are() -> None:
    from ui_helpers import PE_ENV, fake_spec, scripted_factory
    from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen
    from proactive_tui.ui.widgets.key_bar import MORE, KeyBar

    app = ProactiveApp()
    async with app.run_test(size=(60, 24)) as pilot:
        env = app.environments.get(PE_ENV)
        app.push_screen(ProactiveEvalSessionScreen(env, fake_spec(PE_ENV, "http://unused", max_turns=2),
                                                   scripted_factory(hold_agent_at=1)))  # stays running
        for _ in range(10):
            await pilot.pause()
        bar = app.screen.query_one(KeyBar)
        hints = bar.visual.plain
        assert len(hints) <= bar.content_region.width, hints
        assert hints.endswith("^p palette") and MORE in hints


async def test_the_palette_screenshot_writes_a_file_and_names_it(isolated_dirs: Path) -> None:
    """Textual's own "Screenshot" (delivered to a downloads folder a terminal may lack) is not
    offered; ours saves into the data folder."""
    from proactive_tui.paths import data_dir

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Screenshot" not in titles and "Screenshot to SVG" in titles
        [command] = [c for c in app.get_system_commands(app.screen) if c.title == "Screenshot to SVG"]
        command.callback()
        await pilot.pause()
        saved = list((data_dir() / "screenshots").glob("*.svg"))
        assert len(saved) == 1 and "<svg" in saved[0].read_text(encoding="utf-8")


# -- a large environment file (issue 15) --------------------------------------------------------

LARGE = 5_000
NEEDLE = "zyxquokka"  # in one record's user information only
NEEDLE_INDEX = 4_321
WORDS = ("climbing", "piano", "yoga", "garden", "camera", "violin", "museum", "recipe", "tennis", "coffee")


def large_env_folder(root: Path, count: int = LARGE) -> Path:
    """`count` ProactiveEval records in `<root>/big/recommendation/fair.json`; record NEEDLE_INDEX
    alone has NEEDLE, and only in its user information (not in id, title, summary or target)."""
    records = []
    for i in range(count):
        a, b = WORDS[i % len(WORDS)], WORDS[(i * 7 + 3) % len(WORDS)]
        person = f"Person {i} enjoys {a} and {b} on weekends."
        if i == NEEDLE_INDEX:
            person += f" Keeps a pet {NEEDLE}."
        records.append({"environment": {"user_information": person, "trigger_factor": f"User {i} searched for {b} deals."},
                        "target": f"Recommend a {a} option.", "sub_target": [f"Ask about {a}", f"Suggest {b}"],
                        "topic": f"{a} / {b} #{i}"})
    folder = root / "big" / "recommendation"
    folder.mkdir(parents=True)
    (folder / "fair.json").write_text(json.dumps(records), encoding="utf-8")
    return root / "big"


async def filter_applied(pilot) -> None:
    """Wait (bounded) for a filter held back by the debounce to apply, then for the repaint."""
    screen = pilot.app.screen
    for _ in range(400):
        if not screen.filter_pending:
            break
        await pilot.pause(0.05)
    assert not screen.filter_pending
    await pilot.pause()


def big_group(app):
    """The tree node of the recommendation / fair branch, which holds the large file (in the branch
    of its own folder, `big:proactiveeval`, beside the built-in samples')."""
    family = next(n for n in app.screen.tree.root.children if str(n.label).startswith("big:proactiveeval"))
    domain = next(n for n in family.children if str(n.label).startswith("recommendation"))
    return next(n for n in domain.children if str(n.label).startswith("fair"))


async def test_large_file_branch_lists_200_then_one_more_line(tmp_path: Path) -> None:
    import gc

    from proactive_tui.ui.env_index import LEAVES_PER_GROUP, MoreEnvironments

    frozen = gc.get_freeze_count()
    app = ProactiveApp(extra_envs=[large_env_folder(tmp_path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert gc.get_freeze_count() > frozen  # thousands of environments: kept out of the GC's scans
        total = len(app.environments.environments)
        in_group = len([e for e in app.environments.environments
                        if e.domain == "recommendation" and e.tier == "fair" and e.origin.name == "big"])
        assert in_group > LEAVES_PER_GROUP
        node = big_group(app)
        assert str(node.label) == f"fair ({in_group})"  # the count stays exact
        assert len(node.children) == LEAVES_PER_GROUP + 1
        more = node.children[-1]
        assert isinstance(more.data, MoreEnvironments) and more.data.count == in_group - LEAVES_PER_GROUP
        assert more.label.plain == f"… {in_group - LEAVES_PER_GROUP:,} more: type to filter"
        assert app.screen.tree.border_title == f"Environments ({total})"
        assert app.sub_title == f"{total} environments"
        assert len(leaf_ids(app)) < total  # the "more" line is not an environment
    assert gc.get_freeze_count() == 0  # and given back when the app ends (gc.unfreeze: all of it)


async def test_selecting_the_more_line_starts_nothing(tmp_path: Path) -> None:
    chosen = []
    app = ProactiveApp(extra_envs=[large_env_folder(tmp_path)])
    app.start_session_hook = chosen.append
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        tree = app.screen.tree
        more = big_group(app).children[-1]
        tree.move_cursor(more)
        await pilot.pause()
        assert "more environment(s) not listed here" in shown_text(app.screen.preview)
        await pilot.press("enter")
        await pilot.pause()
        assert chosen == [] and isinstance(app.screen, PickerScreen)
        await pilot.press("r")  # the spoiler toggle re-renders the preview: nothing to describe here
        await pilot.pause()
        assert app.screen.reveal_reference is False and tree.cursor_node is more
        offset = (10, more.line - tree.scroll_offset.y + 1)  # a second click opens a leaf: not this one
        await pilot.click(tree, offset=offset)
        await pilot.click(tree, offset=offset)
        await pilot.pause()
        assert chosen == [] and isinstance(app.screen, PickerScreen)


async def test_large_file_filter_finds_a_word_only_in_the_description_and_escape_clears(tmp_path: Path) -> None:
    app = ProactiveApp(extra_envs=[large_env_folder(tmp_path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        total = len(app.environments.environments)
        await pilot.press("slash", *NEEDLE)
        await filter_applied(pilot)
        wanted = f"proactiveeval/recommendation/fair/{NEEDLE_INDEX}"
        assert leaf_ids(app) == [wanted]
        assert app.screen.tree.border_title == f"Environments 1/{total}"
        assert wanted in shown_text(app.screen.preview)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.query_one("#filter").value == "" and app.screen.query_text == ""
        assert app.screen.tree.border_title == f"Environments ({total})"
        assert str(big_group(app).children[-1].label).startswith("… ")


async def test_large_file_filter_waits_for_a_pause_but_the_field_does_not(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PickerScreen, "DEBOUNCE_S", 600.0)  # the pause never comes: Enter applies
    app = ProactiveApp(extra_envs=[large_env_folder(tmp_path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        total = len(app.environments.environments)
        await pilot.press("slash", *"pian")
        await pilot.pause()
        screen = app.screen
        assert screen.query_one("#filter").value == "pian"  # every key shows at once
        assert screen.filter_pending and screen.query_text == ""
        assert screen.tree.border_title == f"Environments ({total})"
        assert screen.check_action("clear_filter", ()) is True  # Escape can drop the waiting text
        await pilot.press("enter")
        await pilot.pause()
        assert not screen.filter_pending and screen.query_text == "pian"
        assert screen.tree.border_title.startswith("Environments ") and screen.tree.border_title.endswith(f"/{total}")
        await pilot.press("slash", "o", "escape")  # a key still waiting, then Escape: nothing applies later
        await pilot.pause()
        assert not screen.filter_pending and screen.query_text == ""
        assert screen.tree.border_title == f"Environments ({total})"


async def test_large_file_query_typed_letter_by_letter_matches_typed_at_once(tmp_path: Path) -> None:
    from proactive_tui.ui.env_index import EnvironmentIndex

    app = ProactiveApp(extra_envs=[large_env_folder(tmp_path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("slash")
        typed = ""
        # narrowing letters, a second word, one letter too many (no match), then a backspace: a
        # wider query, which must not search only the previous (empty) matches
        for key in [*"piano", "space", *"climbs", "backspace"]:
            await pilot.press(key)
            typed = screen.query_one("#filter").value
            screen.apply_filter()  # apply every prefix, as a slow typist would
            await pilot.pause()
            at_once = EnvironmentIndex(app.environments.environments).matches(typed)
            assert [e.id for e in screen.shown] == [e.id for e in at_once], typed
        assert typed == "piano climb" and screen.shown
        fresh = EnvironmentIndex(app.environments.environments)
        assert [e.id for e in screen.shown] == [e.id for e in fresh.matches("piano climb")]


def test_index_narrowing_rule_and_haystack_text() -> None:
    """The incremental search reuses the previous matches only when the new query cannot match
    more; the haystack is the id/title/summary text plus every word describe() shows."""
    from proactive_tui.envs.describe import describe
    from proactive_tui.ui.env_index import EnvironmentIndex, narrows

    assert narrows(["pian"], ["piano"]) and narrows(["piano"], ["piano", "y"]) and narrows(["a", "b"], ["ab"])
    assert not narrows(["piano"], ["pian"]) and not narrows(["piano", "y"], ["piano"])
    envs = load_default().environments
    index = EnvironmentIndex(envs)
    assert index.matches("jimny") == [e for e in envs if "jimny" in
                                      f"{e.search_text()} {' '.join(b for _, b in describe(e)).lower()}"]
    for env, hay in index._haystacks():
        assert hay == f"{env.search_text()} {' '.join(b for _, b in describe(env, reveal_reference=True)).lower()}"



async def test_ctrl_r_lists_environments_written_since_start_and_keeps_the_filter(isolated_dirs: Path) -> None:
    """`synth` (or anything else) writes into the environments folder while the app runs: ctrl+r
    reads every source again and lists the new ones without a restart, keeping the filter."""
    from ui_helpers import wait_for
    from proactive_tui.paths import user_envs_dir

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        before = len(app.screen.index)
        folder = user_envs_dir() / "proactiveeval" / "synth-0123abcd" / "persuasion"
        folder.mkdir(parents=True)
        item = {"environment": {"user_information": "A nurse on night shifts.", "trigger_factor": "Asks about sleep."},
                "target": "Persuade them to keep a sleep diary", "sub_target": ["Ask about their week"],
                "topic": "sleep"}
        (folder / "fair.json").write_text(json.dumps([item]))
        await pilot.press("slash", *"persuasion", "enter")
        await pilot.pause()
        shown_before = len(app.screen.shown)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: len(app.screen.index) == before + 1)
        assert app.screen.filter_input.value == "persuasion" and len(app.screen.shown) == shown_before + 1
        ours = [e for e in app.screen.shown if "sleep diary" in e.model_dump_json()]
        # the picker lists catalog entries (envs.catalog); the app's set gives the parsed environment
        assert len(ours) == 1 and app.environments.get(ours[0].id) is ours[0].full()


# -- keys that arrive together (a loaded machine) ---------------------------------------------

LIFESTYLE = "proactiveeval/recommendation/hard/0"
"""The one environment the word `lifestyle` finds (none of its letters is a picker key)."""


@pytest.mark.parametrize("keys", [("slash", *"lifestyle", "enter", "enter"),
                                  ("slash", *"lifestyle", "down", "enter")], ids=["enter-enter", "down-enter"])
async def test_a_burst_of_keys_opens_the_environment_the_filter_finds(keys) -> None:
    """`/lifestyle⏎⏎` typed faster than the app handles keys opened the environment highlighted
    before the filter (twice): the letters went to the list, not the filter."""
    chosen = []
    app = ProactiveApp()
    app.start_session_hook = chosen.append
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.tree.cursor_node.data.id != LIFESTYLE
        await burst_then_settle(pilot, *keys)
        assert screen.filter_input.value == "lifestyle" and screen.query_text == "lifestyle"
        assert [e.id for e in chosen] == [LIFESTYLE]
        assert screen.tree.cursor_node.data.id == LIFESTYLE and screen.reveal_reference is True


async def test_enter_on_the_list_applies_a_filter_still_waiting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large list filters after a pause in typing; Enter on the list before the pause opens what
    the filter finds (the list is filtered first), not the row highlighted before it."""
    monkeypatch.setattr(PickerScreen, "DEBOUNCE_S", 600.0)  # the pause never comes
    chosen = []
    app = ProactiveApp(extra_envs=[large_env_folder(tmp_path)])
    app.start_session_hook = chosen.append
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("slash", *NEEDLE)
        await pilot.pause()
        assert screen.filter_pending
        await pilot.press("tab")  # to the list (a click would do the same): the filter has not applied
        await pilot.pause()
        assert app.focused is screen.tree and screen.filter_pending
        await pilot.press("enter")
        await pilot.pause()
        wanted = f"proactiveeval/recommendation/fair/{NEEDLE_INDEX}"
        assert [e.id for e in chosen] == [wanted] and leaf_ids(app) == [wanted]


async def test_slash_typed_in_the_filter_is_a_character() -> None:
    """`/` focuses the filter as a priority binding (taken before the keys behind it are routed);
    in the filter it is text, and Down still filters and goes to the list."""
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("slash", "a", "slash", "b")
        await pilot.pause()
        assert screen.filter_input.value == "a/b" and app.focused is screen.filter_input
        await pilot.press("down")
        await pilot.pause()
        assert app.focused is screen.tree and screen.query_text == "a/b"


async def test_two_enters_on_the_write_chooser_open_one_form_and_keep_the_app() -> None:
    """`n⏎⏎` faster than the app handles keys: both Enters reached the chooser's list, and the
    second dismissed the chooser again, which popped the form the first had opened (or, with
    none, raised ScreenStackError and ended the app). A modal is dismissed once (ui.screens.modal)."""
    from proactive_tui.ui.studio.write import WriteChooser, WriteForm
    from ui_helpers import wait_for

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, WriteChooser))
        await burst_then_settle(pilot, "enter", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, WriteForm))
        await pilot.pause()
        stack = app.screen_stack
        assert isinstance(stack[0], PickerScreen) and len(stack) == 2 and isinstance(stack[1], WriteForm)


async def test_a_modal_dismissed_twice_answers_once_and_leaves_the_screen_below() -> None:
    from proactive_tui.ui.screens.confirm import ConfirmModal
    from ui_helpers import wait_for

    answers: list[bool] = []
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        picker = app.screen
        modal = ConfirmModal("Go on", "Go on?")
        app.push_screen(modal, answers.append)
        await wait_for(pilot, lambda: app.screen is modal and modal.is_mounted)
        await pilot.pause()
        modal.dismiss(True)
        modal.dismiss(False)
        await pilot.pause()
        assert answers == [True] and app.screen is picker and app.screen_stack == [picker]
