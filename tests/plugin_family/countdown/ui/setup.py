"""Countdown session setup: the agent and user seats, and a turn limit."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Grid
from textual.validation import Integer
from textual.widgets import Input, Label

from proactive_tui.ui.screens.setup_base import SetupScreenBase


class CountdownSetupScreen(SetupScreenBase):
    FAMILY = "countdown"
    HELP_TITLE = "Countdown setup"

    def compose_settings(self, prev: Any) -> ComposeResult:
        with Grid(id="settings-grid"):
            yield Label("turn limit")
            yield Input("" if prev.max_turns is None else str(prev.max_turns), id="max-turns", type="integer",
                        validators=[Integer(1, 50)], valid_empty=True,
                        placeholder=f"all {self.env.countdown.start + 1} numbers")

    def read_settings(self) -> dict[str, Any]:
        limit = self.query_one("#max-turns", Input).value.strip()
        return {"max_turns": int(limit) if limit else None}
