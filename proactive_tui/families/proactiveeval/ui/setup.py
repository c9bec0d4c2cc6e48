"""ProactiveEval session setup: the three seats (agent, user, judge) and the protocol settings
(agreeableness, turns, memory window, target planning, live judging)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Grid
from textual.validation import Integer
from textual.widgets import Input, Label, Select, Switch

from proactive_tui.families.proactiveeval.settings import ProactiveEvalSettings
from proactive_tui.ui.screens.setup_base import SetupScreenBase


class ProactiveEvalSetupScreen(SetupScreenBase):
    FAMILY = "proactiveeval"
    HELP_TITLE = "ProactiveEval setup"
    PLAYGROUND_DEFAULTS = {"live_judging": True}
    """Watching, a person wants the judges live; headless runs score once at the end."""

    def compose_settings(self, prev: Any) -> ComposeResult:
        """Agreeableness, turns, memory, planning and live judging."""
        with Grid(id="settings-grid"):
            yield Label("agreeableness")
            yield Select([(v, v) for v in ("low", "medium", "high")], value=prev.agreeableness, allow_blank=False, id="agreeableness")
            yield Label("turn limit")
            yield Input(str(prev.max_turns), id="max-turns", validators=[Integer(1, 50)], type="integer")
            yield Label("memory turns")
            yield Input(str(prev.memory_turns), id="memory-turns", validators=[Integer(1, 50)], type="integer")
            yield Label("agent plans")
            yield Switch(prev.planning, id="planning")
            yield Label("live judging")
            yield Switch(prev.live_judging, id="live")

    def read_settings(self) -> dict[str, Any]:
        """Protocol settings from the form; `validate_settings` reports bad values first."""
        return {
            "agreeableness": self.query_one("#agreeableness", Select).value,
            "max_turns": int(self.query_one("#max-turns", Input).value or ProactiveEvalSettings().max_turns),
            "memory_turns": int(self.query_one("#memory-turns", Input).value or ProactiveEvalSettings().memory_turns),
            "planning": self.query_one("#planning", Switch).value,
            "live_judging": self.query_one("#live", Switch).value,
        }
