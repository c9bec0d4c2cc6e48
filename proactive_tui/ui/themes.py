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
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from textual.color import Color, ColorParseError
from textual.theme import Theme

from proactive_tui.envs.problems import field_path
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


class ThemeFile(BaseModel):
    """The TOML schema; unknown keys are errors so a misspelt colour name does not pass silently."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    dark: bool = True
    primary: str
    secondary: str | None = None
    accent: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    success: str | None = None
    warning: str | None = None
    error: str | None = None
    boost: str | None = None
    luminosity_spread: float = Field(default=0.15, ge=0.0, le=1.0)
    text_alpha: float = Field(default=0.95, ge=0.0, le=1.0)
    variables: dict[str, str] = Field(default_factory=dict)

    @field_validator(*COLOR_FIELDS)
    @classmethod
    def _check_color(cls, value: str | None) -> str | None:
        return _color(value)

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not value.strip() or any(ch.isspace() for ch in value):
            raise ValueError("must be one word without spaces (it is typed in the command palette and the config)")
        return value

    def to_theme(self) -> Theme:
        return Theme(**self.model_dump())


def _describe_errors(path: Path, exc: ValidationError) -> str:
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


def load_theme_file(path: Path | str) -> Theme:
    """Read one theme file; raises ThemeError with a one-line message naming file and field."""
    path = Path(path)
    data = read_toml(path, ThemeError)
    try:
        return ThemeFile.model_validate(data).to_theme()
    except ValidationError as exc:
        raise ThemeError(_describe_errors(path, exc)) from None


def default_theme_dirs() -> list[Path]:
    from proactive_tui.paths import builtin_themes_dir, user_themes_dir

    return [builtin_themes_dir(), user_themes_dir()]


def load_themes(dirs: Iterable[Path | str] | None = None) -> tuple[list[Theme], list[str]]:
    """Every `*.toml` theme in the folders, in order; a later theme with the same name replaces
    an earlier one (so a user's `proactive-dark.toml` overrides the built-in). Missing folders
    are fine (the user's folder usually does not exist). Returns (themes, problem lines)."""
    by_name: dict[str, Theme] = {}
    problems: list[str] = []
    for folder in default_theme_dirs() if dirs is None else [Path(d) for d in dirs]:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = load_theme_file(path)
            except ThemeError as exc:
                problems.append(str(exc))
                continue
            by_name.pop(theme.name, None)
            by_name[theme.name] = theme
    return list(by_name.values()), problems
