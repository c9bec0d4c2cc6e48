"""Theme files: every built-in loads, broken ones become one readable line, choices persist."""

from __future__ import annotations

from pathlib import Path

import pytest

from proactive_tui.config import AppConfig, load_config, save_config
from proactive_tui.paths import builtin_themes_dir
from proactive_tui.ui.themes import ThemeError, load_theme_file, load_themes

BUILTIN = sorted(builtin_themes_dir().glob("*.toml"))
GOOD = 'name = "tmp-good"\ndark = true\nprimary = "#336699"\nbackground = "#101010"\n'


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def test_builtin_themes_exist_and_load() -> None:
    names = {load_theme_file(path).name for path in BUILTIN}
    assert {"proactive-dark", "proactive-light", "high-contrast", "solarized-dusk"} <= names
    themes, problems = load_themes([builtin_themes_dir()])
    assert problems == []
    assert {t.name for t in themes} == names


def test_builtin_theme_kinds() -> None:
    by_name = {t.name: t for t in load_themes([builtin_themes_dir()])[0]}
    assert by_name["proactive-light"].dark is False
    contrast = by_name["high-contrast"]
    assert contrast.dark and contrast.background.upper() == "#000000"
    assert contrast.foreground.upper() == "#FFFFFF"


def test_theme_names_match_file_names() -> None:
    for path in BUILTIN:
        assert load_theme_file(path).name == path.stem


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('name = "x"\nprimary = "#123456\n', "invalid TOML"),
        ('name = "x"\nprimary = "#123456"\nbackground = "not-a-colour"\n', "field background: not a colour"),
        ('primary = "#123456"\n', "field name: missing required field"),
        ('name = "x"\nprimary = "#123456"\nprimray = "#000000"\n', "field primray: unknown field"),
        ('name = "x"\n', "field primary: missing required field"),
        ('name = "two words"\nprimary = "#123456"\n', "field name: must be one word"),
    ],
)
def test_broken_theme_is_one_readable_line(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ThemeError) as info:
        load_theme_file(path)
    message = str(info.value)
    assert str(path) in message and expected in message
    assert "\n" not in message


def test_load_themes_skips_broken_and_keeps_good(tmp_path: Path) -> None:
    (tmp_path / "good.toml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad.toml").write_text('name = "bad"\nprimary = "blurple"\n', encoding="utf-8")
    themes, problems = load_themes([tmp_path, tmp_path / "missing-folder"])
    assert [t.name for t in themes] == ["tmp-good"]
    assert len(problems) == 1 and "bad.toml" in problems[0] and "primary" in problems[0]


def test_user_theme_overrides_builtin_with_same_name(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('name = "proactive-dark"\nprimary = "#FF0000"\n', encoding="utf-8")
    themes, _ = load_themes([builtin_themes_dir(), tmp_path])
    dark = [t for t in themes if t.name == "proactive-dark"]
    assert len(dark) == 1 and dark[0].primary == "#FF0000"


async def test_app_starts_with_broken_theme_and_says_so(tmp_path: Path) -> None:
    from proactive_tui.ui.app import ProactiveApp
    from proactive_tui.ui.screens.picker import PickerScreen

    (tmp_path / "bad.toml").write_text('name = "bad"\nprimary = "#12"\n', encoding="utf-8")
    (tmp_path / "worse.toml").write_text("this is = = not toml", encoding="utf-8")
    app = ProactiveApp(theme_dirs=[builtin_themes_dir(), tmp_path])
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        assert app.theme == "proactive-dark"
        messages = [n.message for n in app._notifications]
        theme_notes = [m for m in messages if "theme file" in m]
        assert len(theme_notes) == 1, messages
        assert "bad.toml" in theme_notes[0] and "primary" in theme_notes[0] and "worse.toml" in theme_notes[0]


async def test_theme_choice_persists_to_config() -> None:
    from proactive_tui.ui.app import ProactiveApp

    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.theme == "proactive-dark"
        app.theme = "solarized-dusk"  # what the command palette's theme picker does
        await pilot.pause()
        assert load_config().theme == "solarized-dusk"
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.theme != "solarized-dusk"
        assert load_config().theme == app.theme
    # The next start uses the saved theme.
    again = ProactiveApp()
    async with again.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert again.theme == load_config().theme


async def test_saving_theme_keeps_other_settings() -> None:
    from proactive_tui.ui.app import ProactiveApp

    save_config(AppConfig(recent_models=["openai/gpt-4.1"]))
    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        app.theme = "high-contrast"
        await pilot.pause()
    config = load_config()
    assert config.theme == "high-contrast" and config.recent_models == ["openai/gpt-4.1"]


async def test_broken_config_is_one_notification_and_never_overwritten(isolated_dirs: Path) -> None:
    from proactive_tui.paths import config_file
    from proactive_tui.ui.app import ProactiveApp

    config_file().parent.mkdir(parents=True, exist_ok=True)
    config_file().write_text('theme = "proactive-light"\nnot_a_setting = 1\n', encoding="utf-8")
    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.theme == "proactive-dark"  # defaults apply
        notes = [n.message for n in app._notifications if "Config file" in n.message]
        assert len(notes) == 1 and "not_a_setting" in notes[0]
        app.theme = "solarized-dusk"
        await pilot.pause()
    assert "not_a_setting" in config_file().read_text(encoding="utf-8")


async def test_unknown_configured_theme_falls_back() -> None:
    from proactive_tui.ui.app import ProactiveApp

    save_config(AppConfig(theme="no-such-theme"))
    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.theme == "proactive-dark"
        assert any("no-such-theme" in n.message for n in app._notifications)
