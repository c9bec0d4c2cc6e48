"""A theme is checked completely when it is loaded; the app never ends because of a theme.

Textual reads a theme's `[variables]` only when the theme is applied: before this check a value
that is not Textual CSS there passed the loader, then ended the app at start-up (a saved theme)
or on ctrl+t. The oracle here is independent of the loader's own check: it parses the CSS of
every widget class the app can show (Textual's and ours, imported and asked for their
`DEFAULT_CSS`, plus every `.tcss` file) with Textual's stylesheet parser and the variables the
app builds for the theme.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import proactive_tui
from proactive_tui.config import AppConfig, load_config, save_config
from proactive_tui.paths import builtin_themes_dir
from proactive_tui.textsafe import plain
from proactive_tui.ui.themes import ThemeError, load_theme_file, load_themes

BASE = 'name = {name}\ndark = true\nprimary = "#336699"\n'


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def theme_text(name: str, variables: dict[str, str]) -> str:
    lines = [BASE.format(name=json.dumps(name)), "[variables]"]
    lines += [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in variables.items()]
    return "\n".join(lines) + "\n"


@cache
def app_css() -> tuple[tuple[tuple[str, str], str, bool, int, str], ...]:
    """Every stylesheet source the app can parse: each DOMNode class's DEFAULT_CSS (as Textual
    adds it when the class is first mounted, with its scope) once every widget and screen module
    of Textual and of the package is imported, and every `.tcss` file in the package."""
    import textual.widgets
    from textual.dom import DOMNode

    for name in textual.widgets.__all__:
        getattr(textual.widgets, name)
    for info in pkgutil.walk_packages(proactive_tui.__path__, "proactive_tui."):
        if ".ui" in info.name:
            importlib.import_module(info.name)
    sources = []
    seen: set[type] = set()
    todo = [DOMNode]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
        css = cls.__dict__.get("DEFAULT_CSS", "")
        if css:
            scope = cls._css_type_name if cls.__dict__.get("SCOPED_CSS", True) else ""
            sources.append(((cls.__module__, f"{cls.__qualname__}.DEFAULT_CSS"), css, True, 0, scope))
    for path in sorted(Path(proactive_tui.__file__).parent.rglob("*.tcss")):
        sources.append(((str(path), ""), path.read_text(encoding="utf-8"), False, 0, ""))
    return tuple(sources)


def app_variables(theme) -> dict[str, str]:
    """The variables Textual parses the app's CSS with (`App.get_css_variables`): the app's own
    default (`$pane-border`, here any colour), the colour system, then the theme's variables."""
    return {"pane-border": "#808080", **theme.to_color_system().generate(), **theme.variables}


def app_stylesheet_problem(variables: dict[str, str]) -> str | None:
    """None when the app's whole CSS parses with these variables, else what Textual said."""
    from textual.css.stylesheet import Stylesheet

    sheet = Stylesheet(variables=variables)
    for read_from, css, is_default, tie, scope in app_css():
        sheet.add_source(css, read_from=read_from, is_default_css=is_default, tie_breaker=tie, scope=scope)
    try:
        sheet.parse()
    except Exception as exc:  # noqa: BLE001 - the oracle reports whatever Textual raises
        return f"{type(exc).__name__}: {exc}"
    return None


# -- the loader refuses what the app could not use --------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("footer-key-foreground", "#zzzzzz"),      # not a token at all: ended the app on ctrl+t
        ("footer-key-foreground", "bold"),         # a token, not a colour where Footer uses it
        ("block-cursor-text-style", "red"),        # a colour where a text style is parsed
        ("border", "not a colour"),
        ("primary", "red;"),                       # would end the declaration it is put in
        ("pane-border", "}"),                      # ours (app.tcss)
        ("text", "url(x)"),
        ("accent", ""),
    ],
)
def test_a_variable_the_app_cannot_parse_is_refused_naming_file_and_key(tmp_path: Path, key: str, value: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(theme_text("bad", {"block-cursor-text-style": "bold", key: value}), encoding="utf-8")
    with pytest.raises(ThemeError) as info:
        load_theme_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: field variables.{key}: "), message
    assert "\n" not in message and plain(message) == message


@pytest.mark.parametrize("name", ["\x1b]0;pwned\x07", "evil\u202etxt", "a\x9bb", "tab\x7f", "nul\x00"])
def test_a_theme_name_must_be_printable(tmp_path: Path, name: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(theme_text(name, {}), encoding="utf-8")
    with pytest.raises(ThemeError) as info:
        load_theme_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: field name: must be printable text"), message
    assert plain(message) == message and "\n" not in message


def test_builtin_themes_and_good_variables_load_and_parse_the_whole_app_css(tmp_path: Path) -> None:
    themes, problems = load_themes([builtin_themes_dir()])  # shipped: not checked at start-up, so here
    assert problems == [] and len(themes) >= 4
    for path in sorted(builtin_themes_dir().glob("*.toml")):
        load_theme_file(path)  # and the loader's own check passes them too
    good = tmp_path / "good.toml"
    good.write_text(theme_text("good", {"footer-key-foreground": "#FF00FF", "text": "auto 90%", "border": "red 50%",
                                        "block-cursor-text-style": "bold underline", "pane-border": "ansi_red",
                                        "my-own-name": "anything 1 2"}), encoding="utf-8")
    themes.append(load_theme_file(good))
    for theme in themes:
        assert app_stylesheet_problem(app_variables(theme)) is None, theme.name


def test_textuals_own_themes_pass_the_check() -> None:
    """The check also guards themes applied from the command palette: no false refusal there."""
    from textual.theme import BUILTIN_THEMES

    from proactive_tui.ui.themes import variable_problems

    assert {name: variable_problems(theme) for name, theme in BUILTIN_THEMES.items()} == \
        {name: [] for name in BUILTIN_THEMES}


def test_a_long_bad_value_is_quoted_short(tmp_path: Path) -> None:
    path = tmp_path / "long.toml"
    path.write_text(theme_text("long", {"border": "not " * 2000}), encoding="utf-8")
    with pytest.raises(ThemeError) as info:
        load_theme_file(path)
    assert len(str(info.value)) < 400 + len(str(path)) and "variables.border" in str(info.value)


def test_the_usage_map_finds_textuals_and_our_declarations() -> None:
    from proactive_tui.ui.themes import css_uses

    uses = css_uses()
    assert "color: $footer-key-foreground" in uses["footer-key-foreground"]
    assert any(decl.startswith("text-style:") for decl in uses["block-cursor-text-style"])
    assert uses["pane-border"]  # app.tcss


# -- the app: a saved bad theme at start-up, ctrl+t through every theme --------------------------


async def test_app_starts_with_a_saved_bad_theme_and_ctrl_t_never_ends_it(tmp_path: Path) -> None:
    from proactive_tui.ui.app import ProactiveApp
    from proactive_tui.ui.screens.picker import PickerScreen

    (tmp_path / "bad.toml").write_text(theme_text("bad", {"footer-key-foreground": "#zzzzzz"}), encoding="utf-8")
    (tmp_path / "odd.toml").write_text(theme_text("odd", {"block-cursor-text-style": "red"}), encoding="utf-8")
    save_config(AppConfig(theme="bad"))
    app = ProactiveApp(theme_dirs=[builtin_themes_dir(), tmp_path])
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, PickerScreen)
        assert app.theme == "proactive-dark"
        assert "bad" not in app.available_themes and "odd" not in app.available_themes
        notes = [n.message for n in app._notifications if "theme file" in n.message]
        assert len(notes) == 1, [n.message for n in app._notifications]
        assert "bad.toml" in notes[0] and "variables.footer-key-foreground" in notes[0]
        assert "odd.toml" in notes[0] and "variables.block-cursor-text-style" in notes[0]
        seen = []
        for _ in range(len(app.file_themes) + 1):
            await pilot.press("ctrl+t")
            await pilot.pause()
            assert app.is_running and app.return_code is None
            seen.append(app.theme)
        assert set(seen) == set(app.file_themes)
        assert isinstance(app.screen, PickerScreen)
    assert app.return_code in (None, 0)
    assert load_config().theme == app.theme


async def test_a_theme_registered_in_code_that_cannot_parse_is_refused_not_fatal() -> None:
    """The loader's check also guards themes that reach the app another way (a plugin)."""
    from textual.theme import Theme

    from proactive_tui.ui.app import ProactiveApp

    app = ProactiveApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        app.register_theme(Theme(name="plugin-bad", primary="#123456", variables={"footer-key-foreground": "#zz"}))
        app.theme = "plugin-bad"
        for _ in range(5):
            await pilot.pause()
        assert app.is_running and app.theme == "proactive-dark"
        assert any("plugin-bad" in n.message and "footer-key-foreground" in n.message for n in app._notifications)
    assert app.return_code in (None, 0)
    assert load_config().theme == "proactive-dark"


# -- property: any [variables] table is refused in one line or parses everywhere the app uses it --

KNOWN = sorted({"footer-key-foreground", "block-cursor-text-style", "border", "primary", "text", "pane-border",
                "foreground", "background", "scrollbar", "link-style", "surface", "accent-muted"})
TOKENS = ["red", "#123456", "#12", "#zzzzzz", "auto", "87%", "200%", "bold", "not", "underline", "tall", "$primary",
          ";", "}", "{", "(", ")", "rgb(1,2,3)", "hsl(10,50%,50%)", "ansi_red", "transparent", "initial", "1fr", "0",
          "-1", "url(x)", "'q'", '"q"', "\\", "/*", "*/", "\n", "\x1b[2J", "\u202e", "é", "", " "]
VALUES = st.lists(st.sampled_from(TOKENS), min_size=0, max_size=4).map(" ".join) | st.text(max_size=12)
KEYS = st.sampled_from(KNOWN) | st.text(min_size=1, max_size=10)


@settings(derandomize=True, max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(variables=st.dictionaries(KEYS, VALUES, min_size=1, max_size=3))
def test_any_variables_are_refused_in_one_line_or_parse_in_all_the_app_css(tmp_path_factory, variables) -> None:
    folder = tmp_path_factory.mktemp("th")
    path = folder / "t.toml"
    path.write_text(theme_text("t", variables), encoding="utf-8")
    try:
        theme = load_theme_file(path)
    except ThemeError as exc:
        message = str(exc)
        assert message.startswith(f"{path}: ") and "\n" not in message, message
        assert "field variables." in message or "invalid TOML" in message, message
        assert plain(message) == message
        return
    assert app_stylesheet_problem(app_variables(theme)) is None, variables
