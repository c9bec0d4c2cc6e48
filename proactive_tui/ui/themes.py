"""Themes as TOML files, validated by pydantic, turned into `textual.theme.Theme`.

Why files: a person can copy a built-in theme into their own folder (`proactive-tui locate`),
change a few colours and see them without touching code (the Posting approach). Why pydantic: a
typo in a colour must become one readable line naming the file and the field, shown as a toast,
while the app still starts with the other themes. One file is one theme::

    name = "proactive-dark"
    dark = true
    primary = "#4FB3BF"          # required; every other colour is optional
    background = "#161B22"
    ...
    [variables]                   # optional: extra Textual design variables
    footer-key-foreground = "#4FB3BF"

A theme is checked completely when it is loaded, because Textual reads a theme's `[variables]`
only when the theme is applied: a value that is not Textual CSS there ends the app (at start-up
for a saved theme, or on ctrl+t). So each variable's value is tokenized as Textual tokenizes it,
and parsed in every declaration of the CSS the app runs (Textual's widgets, `app.tcss`, the
families' screens) that names it, with the theme's full set of variables, the way the app's
stylesheet will parse it. A theme that fails is refused with one line naming the file and the
key, so it is never registered and never applied.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path
from typing import Any, Iterable

from textual.color import Color, ColorParseError
from textual.theme import Theme

from proactive_tui.textsafe import field_path
from proactive_tui.tomlfile import read_toml

COLOR_FIELDS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "success",
    "warning",
    "error",
    "boost",
)


class ThemeError(Exception):
    """A theme file that cannot be used; the message names the file and the field."""


def _color(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        Color.parse(value)
    except ColorParseError:
        raise ValueError(f"not a colour: {value!r} (use #RRGGBB, rgb(...), or a colour name)") from None
    return value


def _first_unprintable(value: str) -> str:
    ch = next(ch for ch in value if not ch.isprintable())
    return f"U+{ord(ch):04X}"


def _check_name(value: str) -> str:
    if not value.strip() or any(ch.isspace() for ch in value):
        raise ValueError("must be one word without spaces (it is typed in the command palette and the config)")
    if not value.isprintable():
        # escape sequences, control and bidi characters: the name is shown in toasts, the
        # command palette and written to the config
        raise ValueError(f"must be printable text (found {_first_unprintable(value)})")
    return value


_FLOATS = {"luminosity_spread": 0.15, "text_alpha": 0.95}


def plain_theme(data: object) -> Theme | None:
    """The theme `ThemeFile` would make of `data`, checked without pydantic, when `data` is
    plainly valid (every key known, every value of exactly its type, colours that parse, the
    numbers in range, a good name); else None, and the file goes through `ThemeFile` for its
    one-line message. Why: importing pydantic and building the model cost the first frame more
    than loading every theme, and shipped and personal themes are nearly always valid. What this
    accepts `ThemeFile` accepts too, with the same values (`tests/test_themes.py` holds them
    equal)."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not isinstance(data.get("primary"), str):
        return None
    fields: dict[str, object] = {"name": data["name"], "dark": True, "primary": data["primary"], **_FLOATS,
                                 "variables": {}}
    fields.update(dict.fromkeys(COLOR_FIELDS[1:]))
    for key, value in data.items():
        if key in COLOR_FIELDS:
            if not isinstance(value, str):
                return None
        elif key == "dark":
            if not isinstance(value, bool):
                return None
        elif key in _FLOATS:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                return None
            value = float(value)
        elif key == "variables":
            if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                return None
            value = dict(value)
        elif key != "name":
            return None
        fields[key] = value
    try:
        if not fields["name"]:
            return None
        _check_name(fields["name"])  # type: ignore[arg-type]
        for key in COLOR_FIELDS:
            _color(fields[key])  # type: ignore[arg-type]
    except ValueError:
        return None
    return Theme(**fields)  # type: ignore[arg-type]


def __getattr__(name: str):
    """`ThemeFile`, the pydantic schema, lives in `ui.theme_file` and is imported on first use."""
    if name == "ThemeFile":
        from proactive_tui.ui.theme_file import ThemeFile

        return ThemeFile
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_VARIABLE_NAME = re.compile(r"[A-Za-z0-9_-]+")
"""What Textual's tokenizer reads after `$`: a key with anything else could never be used."""
_CSS_ASSIGN = re.compile(r"\s*(?::[^=\n]*)?=\s*[rR]?(\"\"\"|\'\'\'|\"|\')")
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_DECLARATION = re.compile(r"([A-Za-z][A-Za-z-]*)[ \t]*:[ \t]*([^;{}\n]*\$[A-Za-z0-9_-][^;{}\n]*?)[ \t]*(?=[;}\n])")
_REFERENCE = re.compile(r"\$([A-Za-z0-9_-]+)")


def _css_texts() -> Iterable[str]:
    """The CSS the app can parse: every `DEFAULT_CSS`/`CSS` string in Textual and in our package
    (widgets, screens, the families' screens), and every `.tcss` file (app.tcss). Read as text:
    importing every widget to ask for its CSS would cost start-up time."""
    import textual

    import proactive_tui

    for root in (Path(textual.__file__).parent, Path(proactive_tui.__file__).parent):
        for path in sorted(root.rglob("*.tcss")):
            yield path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(root.rglob("*.py")):
            text = path.read_text(encoding="utf-8", errors="replace")
            if "CSS" in text and "$" in text:
                yield from _css_strings(text)


def _css_strings(source: str) -> Iterable[str]:
    """The string literals assigned to `CSS`/`DEFAULT_CSS` in Python source: each name found by
    `str.find`, its opening quote by a small anchored pattern, its closing quote by `str.find`
    (a regex searched over whole files was most of the scan's time)."""
    at = 0
    while (found := source.find("CSS", at)) >= 0:
        at = found + 3
        before = source[found - 1] if found else " "
        if (before.isalnum() or before == "_") and not source.endswith("DEFAULT_", 0, found):
            continue
        match = _CSS_ASSIGN.match(source, at)
        if match is None:
            continue
        quote = match.group(1)
        end = source.find(quote, match.end())
        if end < 0:
            return
        yield source[match.end():end]
        at = end + len(quote)


@functools.cache
def css_uses() -> dict[str, tuple[str, ...]]:
    """Each design variable -> the declarations (`border: tall $primary`) that name it in the CSS
    the app parses. Only real style properties are kept, so prose in a comment is not taken
    for CSS. Computed once per process (about 20 ms)."""
    from textual.css._styles_builder import StylesBuilder

    uses: dict[str, set[str]] = {}
    for css in _css_texts():
        for prop, value in _DECLARATION.findall(_CSS_COMMENT.sub("", css)):
            if not hasattr(StylesBuilder, "process_" + prop.replace("-", "_")):
                continue
            for name in _REFERENCE.findall(value):
                uses.setdefault(name, set()).add(f"{prop}: {value.strip()}")
    return {name: tuple(sorted(found)) for name, found in uses.items()}


def app_variable_defaults(theme: Theme) -> dict[str, str]:
    """Our own design variables (`$pane-border`), derived from the theme unless it sets them.

    The theme's `[variables]` may override `foreground`/`background` with any Textual CSS
    (`auto 87%`); the blend needs real colours, so then the theme's own colour fields are used."""
    def blend(colors: dict[str, str]) -> str:
        foreground = Color.parse(colors["foreground"])
        background = Color.parse(colors["background"])
        return background.blend(foreground.with_alpha(1.0), 0.35).hex

    try:
        return {"pane-border": blend(theme.to_color_system().generate())}
    except ColorParseError:
        return {"pane-border": blend(dataclasses.replace(theme, variables={}).to_color_system().generate())}


def css_variables(theme: Theme) -> dict[str, str]:
    """The variables the app's stylesheet is parsed with for `theme`, as `App.get_css_variables`
    builds them: ours, then Textual's colour system, then the theme's `[variables]`."""
    return {**app_variable_defaults(theme), **theme.to_color_system().generate(), **theme.variables}


def _css_error(exc: Exception) -> str:
    """The first problem of a Textual CSS error, as one line of plain text."""
    from rich.text import Text

    errors = getattr(exc, "errors", None)
    for rule in getattr(errors, "rules", ()):
        for _token, message in rule.errors:
            summary = getattr(message, "summary", message)
            try:
                text = Text.from_markup(str(summary)).plain
            except Exception:  # noqa: BLE001 - a summary that is not markup is shown as written
                text = str(summary)
            return " ".join(text.split())
    # a TokenError: the first sentence (Textual adds a hint about semicolons meant for .tcss files)
    text = " ".join(str(exc).split()).split("; Did you forget", 1)[0].rstrip(".")
    return text or type(exc).__name__


def _shown(value: str, limit: int = 60) -> str:
    """A value as quoted in a problem line: repr (controls escaped), cut to `limit` characters."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


def variable_problems(theme: Theme) -> list[tuple[str, str]]:
    """(key, what is wrong) for each of the theme's `[variables]` that the app could not use.

    Each value is tokenized as Textual tokenizes every variable when a theme is applied, then
    parsed in each declaration of the app's CSS that names it, with the values the theme gives
    the variables that declaration names (ours, Textual's colour system, then `[variables]`)."""
    from textual.css.stylesheet import Stylesheet
    from textual.css.tokenize import tokenize_value

    problems: list[tuple[str, str]] = []
    for key, value in theme.variables.items():
        if not _VARIABLE_NAME.fullmatch(key):
            problems.append((key, "not a variable name (letters, digits, - and _ only)"))
            continue
        try:
            list(tokenize_value(value, ("theme", key)))
        except Exception as exc:  # noqa: BLE001 - TokenError and kin: the value is not CSS
            problems.append((key, f"{_shown(value)} is not Textual CSS: {_css_error(exc)}"))
    # Textual tokenizes every variable before any declaration, so the declarations are parsed
    # without the values already refused: each problem is named once, against its own key.
    refused = {key for key, _ in problems}
    usable = {key: value for key, value in theme.variables.items() if key not in refused}
    try:
        variables = css_variables(dataclasses.replace(theme, variables=usable))
    except Exception as exc:  # noqa: BLE001 - Textual's colour system refused a value
        return problems + [("(all)", f"the colour system cannot be built: {_css_error(exc)}")]
    for key in usable:
        for declaration in css_uses().get(key, ()):
            # only the variables the declaration names: Textual tokenizes every variable it is
            # given on each parse, and the declaration's meaning depends on these alone
            named = {name: variables[name] for name in _REFERENCE.findall(declaration) if name in variables}
            sheet = Stylesheet(variables=named)
            sheet.add_source(f"* {{ {declaration}; }}", read_from=("theme", key))
            try:
                sheet.parse()
            except Exception as exc:  # noqa: BLE001 - StylesheetParseError, TokenError
                problems.append((key, f"{_shown(usable[key])} does not fit `{declaration}`: {_css_error(exc)}"))
                break
    return problems


def _describe_errors(path: Path, exc: Any) -> str:

    parts = []
    for err in exc.errors(include_url=False):
        where = field_path(tuple(err.get("loc", ()))) or "(top level)"
        kind = err.get("type")
        if kind == "missing":
            msg = "missing required field"
        elif kind == "extra_forbidden":
            msg = "unknown field"
        else:
            msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"field {where}: {msg}")
    return f"{path}: " + "; ".join(parts)


def load_theme_file(path: Path | str, check_variables: bool = True) -> Theme:
    """Read one theme file; raises ThemeError with a one-line message naming file and field.
    `check_variables=False` skips parsing `[variables]` against the app's CSS: only for the
    themes shipped in the package, which `tests/test_theme_validation.py` parses against the
    whole app CSS, so start-up does not pay for the scan (about 25 ms) without a user theme."""
    path = Path(path)
    data = read_toml(path, ThemeError)
    theme = plain_theme(data)
    if theme is None:
        from pydantic import ValidationError

        from proactive_tui.ui.theme_file import ThemeFile

        try:
            theme = ThemeFile.model_validate(data).to_theme()
        except ValidationError as exc:
            raise ThemeError(_describe_errors(path, exc)) from None
    problems = variable_problems(theme) if check_variables else []
    if problems:
    
        raise ThemeError(f"{path}: " + "; ".join(f"field variables.{field_path((key,))}: {why}" for key, why in problems))
    return theme


def default_theme_dirs() -> list[Path]:
    from proactive_tui.paths import builtin_themes_dir, user_themes_dir

    return [builtin_themes_dir(), user_themes_dir()]


def load_themes(dirs: Iterable[Path | str] | None = None) -> tuple[list[Theme], list[str]]:
    """Every `*.toml` theme in the folders, in order; a later theme with the same name replaces
    an earlier one (so a user's `proactive-dark.toml` overrides the built-in). Missing folders
    are fine (the user's folder usually does not exist). Returns (themes, problem lines)."""
    from proactive_tui.paths import builtin_themes_dir

    by_name: dict[str, Theme] = {}
    problems: list[str] = []
    shipped = builtin_themes_dir().resolve()
    for folder in default_theme_dirs() if dirs is None else [Path(d) for d in dirs]:
        if not folder.is_dir():
            continue
        check = folder.resolve() != shipped
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = load_theme_file(path, check_variables=check)
            except ThemeError as exc:
                problems.append(str(exc))
                continue
            by_name.pop(theme.name, None)
            by_name[theme.name] = theme
    return list(by_name.values()), problems
