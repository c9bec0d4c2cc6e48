"""Chronos session setup: the agent and user seats (a model or you), a turn-limit override, how
the monitor moves time while the user is dormant (on its own after a delay, or only when you
fast-forward with f), and how many INFO_RETRIEVALs in a row the agent gets before the turn passes
on (`ChronosSettings.max_tool_calls`), and which agent prompt runs (`prompt_variant`: the basic
one or the paper's guided variant)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Grid
from textual.validation import Integer, Number
from textual.widgets import Input, Label, Select

from proactive_tui.families.chronos.settings import ChronosSettings
from proactive_tui.ui.screens.setup_base import SetupScreenBase

PROMPT = [("standard (basic prompt)", "standard"), ("guided (extra guidance)", "guided")]
MONITOR = [("auto (after the delay)", "auto"), ("manual (f advances)", "manual")]


class ChronosSetupScreen(SetupScreenBase):
    FAMILY = "chronos"
    HELP_TITLE = "Chronos session setup"
    PLAYGROUND_DEFAULTS = {"monitor_delay_s": 1.0}
    """Watching, time should visibly pass between monitor scans (headless runs do not wait)."""

    def compose_settings(self, prev: Any) -> ComposeResult:
        limit = prev.max_turns
        delay = prev.monitor_delay_s
        with Grid(id="settings-grid"):
            yield Label("turn limit")
            yield Input("" if limit is None else str(limit), id="max-turns", type="integer", validators=[Integer(1, 200)],
                        placeholder=f"scenario: {self.env.scenario.turn_limit}", valid_empty=True)
            yield Label("monitor")
            yield Select(MONITOR, value="manual" if delay is None else "auto",
                         allow_blank=False, id="monitor")
            yield Label("scan delay (s)")
            yield Input(str(delay if delay is not None else 1.0), id="monitor-delay", type="number",
                        validators=[Number(0, 3600)])
            yield Label("checks in a row")
            checks = Input(str(prev.max_tool_calls), id="max-tool-calls", type="integer", validators=[Integer(1, 20)])
            checks.tooltip = ("INFO_RETRIEVALs in a row after which the user (or the monitor) speaks next, "
                              "so an agent that keeps checking cannot keep the user from their turn")
            yield checks
            yield Label("agent prompt")
            prompt = Select(PROMPT, value=prev.prompt_variant, allow_blank=False, id="prompt-variant")
            prompt.tooltip = "guided adds the paper's extra guidance on completion, thanks and tool observations"
            yield prompt

    def read_settings(self) -> dict[str, Any]:
        limit = self.query_one("#max-turns", Input).value.strip()
        manual = self.query_one("#monitor", Select).value == "manual"
        delay = float(self.query_one("#monitor-delay", Input).value or 0)
        checks = self.query_one("#max-tool-calls", Input).value.strip()
        return {"max_turns": int(limit) if limit else None, "monitor_delay_s": None if manual else delay,
                "max_tool_calls": int(checks) if checks else ChronosSettings().max_tool_calls,
                "prompt_variant": self.query_one("#prompt-variant", Select).value}
