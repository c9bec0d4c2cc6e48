"""Chronos session setup: the agent and user seats (a model or you), a turn-limit override, how
the monitor moves time while the user is dormant (on its own after a delay, or only when you
fast-forward with f), and how many INFO_RETRIEVALs in a row the agent gets before the turn passes
on (`ChronosSettings.max_tool_calls`), and which agent prompt runs (`prompt_variant`: the basic
one or the paper's guided variant), who plays the simulated user when no person does
(`user_simulator`: the user seat's model, or the scripted persona as the offline fallback) and what
reads the user's reply to an offer (`confirmation_reader`: the judge seat's model, or the keyword
check). A seat that will not be used has its model box disabled, with the reason beside it."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Grid
from textual.validation import Integer, Number
from textual.widgets import Input, Label, RadioSet, Select, Static

from proactive_tui.families.chronos.settings import ChronosSettings
from proactive_tui.ui.screens.setup_base import SetupScreenBase

PROMPT = [("standard (basic prompt)", "standard"), ("guided (extra guidance)", "guided")]
MONITOR = [("auto (after the delay)", "auto"), ("manual (f advances)", "manual")]
USER_SIM = [("the user seat's model", "model"), ("scripted persona (offline)", "scripted")]
READER = [("the judge seat's model", "judge"), ("keyword check (offline)", "keywords")]
UNUSED = {"user": "not used: the scripted persona plays the user", "judge": "not used: the keyword check reads replies"}


class ChronosSetupScreen(SetupScreenBase):
    FAMILY = "chronos"
    HELP_TITLE = "Chronos session setup"
    PLAYGROUND_DEFAULTS = {"monitor_delay_s": 1.0}
    """Watching, time should visibly pass between monitor scans (headless runs do not wait)."""

    def compose_settings(self, prev: Any) -> ComposeResult:
        limit = prev.max_turns
        delay = prev.monitor_delay_s
        with Grid(id="settings-grid"):
            yield Label("exchange limit")
            yield Input("" if limit is None else str(limit), id="max-turns", type="integer", validators=[Integer(1, 200)],
                        placeholder=f"scenario: {self.env.scenario.turn_limit}", valid_empty=True,
                        tooltip="the scenario's turn limit, which counts exchanges: an agent turn answering "
                                "its own INFO_RETRIEVAL continues its exchange")
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
            yield Label("user simulator")
            sim = Select(USER_SIM, value=prev.user_simulator, allow_blank=False, id="user-simulator")
            sim.tooltip = "the scripted persona says exactly what the user's brief asks, in fixed words (no model)"
            yield sim
            yield Label("reply read by")
            reader = Select(READER, value=prev.confirmation_reader, allow_blank=False, id="confirmation-reader")
            reader.tooltip = ("what decides whether the user's reply to an offer confirms it, refuses it, or neither: "
                              "the judge seat's model or the documented keyword check")
            yield reader

    def on_mount(self) -> None:
        super().on_mount()
        self._seats_in_use()

    @on(Select.Changed, "#user-simulator, #confirmation-reader")
    def _seats_in_use(self) -> None:
        """Disable the model box of a seat the chosen settings leave empty, and say why."""
        unused = {"user": self.query_one("#user-simulator", Select).value == "scripted" and self._human_seat() != "user",
                  "judge": self.query_one("#confirmation-reader", Select).value == "keywords"}
        for role, off in unused.items():
            if role == self._human_seat():
                continue
            box = self.query_one(f"#model-{role}", Input)
            box.disabled = off
            self.query_one(f"#temperature-{role}", Input).disabled = off
            if off:
                self.query_one(f"#key-{role}", Static).update(Text(UNUSED[role], style="italic"))
            else:
                self._input_changed(Input.Changed(box, box.value))

    @on(RadioSet.Changed, "#mode")
    def _mode_changed_seats(self) -> None:
        """After the base form has set the seats for the mode (it re-enables the user's box)."""
        self.call_after_refresh(self._seats_in_use)

    def read_settings(self) -> dict[str, Any]:
        limit = self.query_one("#max-turns", Input).value.strip()
        manual = self.query_one("#monitor", Select).value == "manual"
        delay = float(self.query_one("#monitor-delay", Input).value or 0)
        checks = self.query_one("#max-tool-calls", Input).value.strip()
        return {"max_turns": int(limit) if limit else None, "monitor_delay_s": None if manual else delay,
                "max_tool_calls": int(checks) if checks else ChronosSettings().max_tool_calls,
                "prompt_variant": self.query_one("#prompt-variant", Select).value,
                "user_simulator": self.query_one("#user-simulator", Select).value,
                "confirmation_reader": self.query_one("#confirmation-reader", Select).value}
