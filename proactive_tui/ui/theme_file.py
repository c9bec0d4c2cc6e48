"""The theme file's schema (`ui.themes` says what a theme file is): a pydantic model, kept apart so
the first frame checks valid themes without importing pydantic (`themes.plain_theme`); a file
that check does not pass comes here for its one-line message."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator
from textual.theme import Theme

from proactive_tui.ui.themes import COLOR_FIELDS, _check_name, _color


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
        return _check_name(value)

    def to_theme(self) -> Theme:
        return Theme(**self.model_dump())
