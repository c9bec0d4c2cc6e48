"""The playground's first frame from the previous start's snapshot (envs.first_frame): the same
environments, ids, sources, problems and preview as the usual load; a snapshot is never trusted
once anything it was made of changed; and the app drawn from it behaves as the usual one (the
import contract that it loads neither pydantic nor a family is in test_import_contracts.py)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from conftest import SAMPLE_DIRS
from proactive_tui.envs import first_frame, load_default
from proactive_tui.envs.catalog import Entry
from proactive_tui.envs.describe import describe
from proactive_tui.paths import user_envs_dir

SAMPLE_FAIR = SAMPLE_DIRS["proactiveeval"] / "persuasion" / "fair.json"


def _mine(tmp: Path) -> list[str]:
    """Your environments folder holding a sample's file (its ids shared with the built-ins), and an
    `--envs` folder with a bad record, an unreadable file and a duplicate of your folder's file."""
    records = json.loads(SAMPLE_FAIR.read_text(encoding="utf-8"))
    own = user_envs_dir() / "persuasion"
    own.mkdir(parents=True)
    (own / "fair.json").write_text(json.dumps(records[:2]), encoding="utf-8")
    extra = tmp / "extra" / "persuasion"
    extra.mkdir(parents=True)
    (extra / "fair.json").write_text(json.dumps([*records, {"environment": 3}]), encoding="utf-8")
    (extra / "hard.json").write_text("{not json", encoding="utf-8")
    return [str(tmp / "extra")]


def _usual(extra: list[str]) -> tuple[object, first_frame.Seen]:
    seen = first_frame.Seen()
    return load_default(extra, lazy=True, seen_by=seen), seen


def _keep(extra: list[str]) -> object:
    loaded, seen = _usual(extra)
    first = loaded.environments[0]
    env = first.full()
    assert first_frame.write(extra, loaded, seen, (first.id, describe(env, True), describe(env, False)))
    return loaded


def test_the_snapshot_lists_what_the_usual_load_lists(tmp_path: Path) -> None:
    extra = _mine(tmp_path)
    eager = load_default(extra)
    assert eager.problems and eager.shared  # the case has both, or it proves little
    _keep(extra)
    frame = first_frame.read(extra)
    assert frame is not None
    assert [e.id for e in frame.environments] == [e.id for e in eager.environments]
    assert [p.render() for p in frame.problems] == [p.render() for p in eager.problems]
    assert any(e.id.startswith("builtin:") for e in frame.environments)  # the shared ids, qualified
    settled = frame.environment_set()
    assert settled.shared == eager.shared and settled.problems == eager.problems
    assert settled.files_read == eager.files_read
    for entry, env in zip(frame.environments, eager.environments):
        assert isinstance(entry, Entry)
        assert (entry.title, entry.list_label, entry.family, entry.domain, entry.tier, entry.source, entry.origin) == \
            (env.title, env.list_label, env.family, env.domain, env.tier, env.source, env.origin)
        parsed = entry.parse()  # the family's environment, its companions read only now
        assert parsed == env and parsed.id == env.id and parsed._file == env._file
    first_id, sections = frame.first_preview()
    first = eager.get(first_id)
    assert sections[True] == describe(first, True) and sections[False] == describe(first, False)


def test_the_families_order_is_the_registrys(tmp_path: Path) -> None:
    from proactive_tui.core import registry

    _keep([])
    frame = first_frame.read([])
    assert frame is not None
    assert frame.families == list(registry.families())
    assert frame.by_tier == {name for name, fam in registry.families().items() if fam.group_by_tier}


def _touch_later(path: Path) -> None:
    later = time.time_ns() + 5_000_000_000
    os.utime(path, ns=(later, later))


@pytest.mark.parametrize("change", ["file edited", "file added", "folder appeared", "folder gone", "config envs",
                                    "index rewritten", "snapshot corrupt", "snapshot of other code"])
def test_a_stale_or_corrupt_snapshot_is_never_used_and_the_next_start_rebuilds_it(tmp_path: Path, change: str,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    extra = _mine(tmp_path)
    _keep(extra)
    assert first_frame.read(extra) is not None
    target = tmp_path / "extra" / "persuasion" / "fair.json"
    path = first_frame.snapshot_path(first_frame.inputs(extra))
    if change == "file edited":
        target.write_text(target.read_text(encoding="utf-8").replace("[", "[ ", 1), encoding="utf-8")
    elif change == "file added":
        (tmp_path / "extra" / "persuasion" / "eval.json").write_text("[]", encoding="utf-8")
    elif change == "folder appeared":
        (tmp_path / "extra" / "persuasion" / "more").mkdir()
        (tmp_path / "extra" / "persuasion" / "more" / "x.json").write_text("[]", encoding="utf-8")
    elif change == "folder gone":
        import shutil

        shutil.rmtree(user_envs_dir())
    elif change == "config envs":
        extra = extra + [str(tmp_path / "elsewhere")]
    elif change == "index rewritten":
        stored = json.loads(path.read_text(encoding="utf-8"))
        index = Path(stored["files"][0]["index"])
        data = json.loads(index.read_text(encoding="utf-8"))
        data["key"]["mtime_ns"] += 1
        index.write_text(json.dumps(data), encoding="utf-8")
    elif change == "snapshot corrupt":
        path.write_text(path.read_text(encoding="utf-8")[:-40], encoding="utf-8")
    elif change == "snapshot of other code":
        monkeypatch.setattr(first_frame, "code_key", lambda: {"code": "another release", "path": []})
    assert first_frame.read(extra) is None
    if change == "snapshot of other code":
        return
    eager = load_default(extra)
    _keep(extra)  # the start that found it stale leaves a current one
    frame = first_frame.read(extra)
    assert frame is not None and [e.id for e in frame.environments] == [e.id for e in eager.environments]
    assert [p.render() for p in frame.problems] == [p.render() for p in eager.problems]


def test_a_new_broken_link_target_makes_it_stale(tmp_path: Path) -> None:
    extra = _mine(tmp_path)
    link = tmp_path / "extra" / "persuasion" / "hard2.json"
    link.symlink_to(tmp_path / "nowhere.json")
    _keep(extra)
    assert first_frame.read(extra) is not None
    (tmp_path / "nowhere.json").write_text("[]", encoding="utf-8")
    assert first_frame.read(extra) is None


def test_stored_problems_render_as_load_problems() -> None:
    from proactive_tui.envs.problems import LoadProblem

    for problem in [LoadProblem(file="a.json", message="m"), LoadProblem(file="a.json", record=3, field="x.y", message="m"),
                    LoadProblem(file="a.jsonl", record=3, line=9, message="m"), LoadProblem(file="b", field="f", message="m")]:
        assert first_frame.StoredProblem(problem.model_dump(exclude_none=True)).render() == problem.render()


# -- the app drawn from a snapshot ----------------------------------------------------------------

async def _picker_state(app) -> dict:
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        tree = screen.tree
        labels = [str(node.label) for node in tree.leaves()]
        shown = screen.preview.plain_text()
        await pilot.press("r")
        await pilot.pause()
        hidden = screen.preview.plain_text()
        await pilot.press("down", "down")
        await pilot.pause()
        moved = screen.preview.plain_text()
        await pilot.press("slash", *"meeting")  # the filter, over the first frame's entries
        await pilot.pause(0.3)
        filtered = [node.data.id for node in tree.leaves()]
        await pilot.press("escape")
        await pilot.pause()
        chosen = []
        app.start_session_hook = chosen.append
        await pilot.press("enter")
        await pilot.pause()
        return {"labels": labels, "shown": shown, "hidden": hidden, "moved": moved, "filtered": filtered,
                "chosen": [(type(env).__name__, env.id) for env in chosen], "sub_title": app.sub_title,
                "theme": app.theme, "problems": [p.render() for p in app.environments.problems],
                "first_frame": app._first_frame is not None}


async def test_the_picker_from_a_snapshot_shows_and_does_what_the_usual_one_does(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from proactive_tui.ui.app import ProactiveApp

    monkeypatch.setenv("PROACTIVE_TUI_PRELOAD", "off")
    extra = _mine(tmp_path)
    usual = await _picker_state(ProactiveApp(extra_envs=extra))  # leaves the snapshot when it settles
    assert not usual["first_frame"] and first_frame.read(extra) is not None
    drawn = await _picker_state(ProactiveApp(extra_envs=extra))
    assert drawn["first_frame"]
    assert {**drawn, "first_frame": None} == {**usual, "first_frame": None}
    assert drawn["shown"] != drawn["hidden"] and drawn["chosen"] and drawn["chosen"][0][0] != "Entry"


def _config_with_folder(tmp_path: Path, home: Path, tail: str = "") -> Path:
    folder = tmp_path / "cfg-envs" / "persuasion"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fair.json").write_text(SAMPLE_FAIR.read_text(encoding="utf-8"), encoding="utf-8")
    path = home / "config.toml"
    path.write_text(f'theme = "proactive-light"\nenvs = ["{tmp_path / "cfg-envs"}"]\n{tail}', encoding="utf-8")
    return path


async def _settled_state(app) -> dict:
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for _ in range(60):
            # settled after the first paint (not forced here), and a refused config's folders gone
            if app._settled and (app._config_ok or not any(e.origin.yours for e in app.screen.index.environments)):
                break
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        return {"notes": [n.message for n in app._notifications if "Config file" in n.message], "theme": app.theme,
                "ok": app.config_ok, "listed_yours": any(e.origin.yours for e in app.screen.index.environments)}


async def test_a_refused_config_is_checked_before_the_first_frame_as_it_always_was(
        tmp_path: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A config file that never passed the model's check is checked at once: its theme and folders
    never show, and the message is the one it always was."""
    from proactive_tui.ui.app import ProactiveApp

    monkeypatch.setenv("PROACTIVE_TUI_PRELOAD", "off")
    _config_with_folder(tmp_path, isolated_dirs, 'colour = "blue"\n')
    app = ProactiveApp()
    assert app.theme == "proactive-dark" and app.config_ok is False and app.extra_envs == []
    state = await _settled_state(app)
    assert state["theme"] == "proactive-dark" and not state["listed_yours"] and state["ok"] is False
    assert len(state["notes"]) == 1 and state["notes"][0].startswith("Config file not used (defaults apply): ")
    assert "colour: unknown setting" in state["notes"][0]


async def test_a_config_that_passed_is_checked_after_the_first_frame(tmp_path: Path, isolated_dirs: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The first start checks a new config at once and remembers that it passed; the next start
    draws its first frame from the plain TOML (the theme right from the first frame) and checks
    it after; an edited file is checked at once again."""
    from proactive_tui.ui.app import ProactiveApp

    monkeypatch.setenv("PROACTIVE_TUI_PRELOAD", "off")
    path = _config_with_folder(tmp_path, isolated_dirs)
    first = ProactiveApp()
    assert first._config is not None and first.theme == "proactive-light"
    assert (await _settled_state(first))["ok"]
    second = ProactiveApp()
    assert second._config is None and second.theme == "proactive-light" and second.extra_envs == [str(tmp_path / "cfg-envs")]
    state = await _settled_state(second)
    assert state == {"notes": [], "theme": "proactive-light", "ok": True, "listed_yours": True}
    path.write_text(path.read_text(encoding="utf-8") + "local_threads = 2\n", encoding="utf-8")
    assert ProactiveApp()._config is not None


async def test_a_config_refused_after_the_first_frame_gives_way_to_the_defaults(tmp_path: Path, isolated_dirs: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Should a file the start took as checked be refused after the first frame (its bytes changed
    with its size and time kept), the message is the usual one and the defaults apply then: the
    default theme, and the config's folders no longer listed."""
    from proactive_tui.ui.app import ProactiveApp

    monkeypatch.setenv("PROACTIVE_TUI_PRELOAD", "off")
    path = _config_with_folder(tmp_path, isolated_dirs, "local_threads = 1\n")
    assert ProactiveApp()._config is not None  # checked, and remembered as passed
    st = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace("local_threads = 1", "local_threads = 0"), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    app = ProactiveApp()
    assert app._config is None and app.theme == "proactive-light"  # the first frame's, from the plain TOML
    state = await _settled_state(app)
    assert state["theme"] == "proactive-dark" and not state["listed_yours"] and state["ok"] is False
    assert len(state["notes"]) == 1 and "local_threads" in state["notes"][0]
    assert state["notes"][0].startswith("Config file not used (defaults apply): ")
    assert ProactiveApp()._config is not None  # no longer taken as checked: the next start checks it first


def test_plain_theme_check_agrees_with_the_model(tmp_path: Path) -> None:
    """What the pydantic-free check accepts, the model accepts with the same theme; anything it
    doubts goes to the model, whose message is the one shown."""
    from proactive_tui.paths import builtin_themes_dir
    from proactive_tui.tomlfile import read_toml
    from proactive_tui.ui.theme_file import ThemeFile
    from proactive_tui.ui.themes import ThemeError, load_theme_file, plain_theme

    for path in sorted(builtin_themes_dir().glob("*.toml")):
        data = read_toml(path, ThemeError)
        assert plain_theme(data) == ThemeFile.model_validate(data).to_theme()
    ok = {"name": "mine", "primary": "#112233", "dark": False, "text_alpha": 1, "variables": {"pane-border": "red"}}
    assert plain_theme(ok) == ThemeFile.model_validate(ok).to_theme()
    assert isinstance(plain_theme(ok).text_alpha, float)
    for bad in [{**ok, "primary": "nope"}, {**ok, "colour": "x"}, {**ok, "text_alpha": 2}, {**ok, "dark": "yes"},
                {**ok, "name": "two words"}, {**ok, "variables": {"a": 1}}, {"name": "x"}]:
        assert plain_theme(bad) is None
    path = tmp_path / "bad.toml"
    path.write_text('name = "bad"\nprimary = "nope"\n', encoding="utf-8")
    with pytest.raises(ThemeError, match="field primary: not a colour"):
        load_theme_file(path)
