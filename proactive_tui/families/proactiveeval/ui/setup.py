"""ProactiveEval session setup: the three seats (agent, user, judge) and the protocol settings
(agreeableness, turns, memory window, target planning, live judging, early stopping)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Grid
from textual.validation import Integer
from textual.widgets import Input, Label, Select, Static, Switch

from proactive_tui.families.proactiveeval.settings import ProactiveEvalSettings
from proactive_tui.ui.screens.setup_base import SetupScreenBase

EARLY_STOP_OFF_NOTE = (
    "stop at target is off: the embedded judge declares the target reached at turn 1, "
    "so the whole dialogue is shown; switch it on to stop when the judge says so"
)


def early_stop_default(judge_model: str) -> bool:
    """What `early_stop=None` means for this judge (the session decides the same way)."""
    return not judge_model.strip().startswith("local/")


class ProactiveEvalSetupScreen(SetupScreenBase):
    FAMILY = "proactiveeval"
    HELP_TITLE = "ProactiveEval setup"
    PLAYGROUND_DEFAULTS = {"live_judging": True}
    """Watching, a person wants the judges live; headless runs score once at the end."""

    def compose_settings(self, prev: Any) -> ComposeResult:
        """Agreeableness, turns, memory, planning, live judging and early stopping."""
        judge = self.initial_model("judge")
        early_stop = early_stop_default(judge) if prev.early_stop is None else prev.early_stop
        self._early_stop_chosen = prev.early_stop is not None
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
            yield Label("stop at target")
            yield Switch(early_stop, id="early-stop")
        yield Static(self._early_stop_note(judge, early_stop), id="early-stop-note")

    def _early_stop_note(self, judge: str, early_stop: bool) -> Text:
        if not early_stop and not early_stop_default(judge):
            return Text(EARLY_STOP_OFF_NOTE, style="italic")
        return Text("")

    def _judge_model(self) -> str:
        return self.query_one("#model-judge", Input).value

    @on(Input.Changed, "#model-judge")
    def _judge_changed(self) -> None:
        """Until the person sets it, early stopping follows the judge: off for the embedded one."""
        switch = self.query_one("#early-stop", Switch)
        if not self._early_stop_chosen:
            with switch.prevent(Switch.Changed):
                switch.value = early_stop_default(self._judge_model())
        self.query_one("#early-stop-note", Static).update(self._early_stop_note(self._judge_model(), switch.value))

    @on(Switch.Changed, "#early-stop")
    def _early_stop_changed(self, event: Switch.Changed) -> None:
        self._early_stop_chosen = True
        self.query_one("#early-stop-note", Static).update(self._early_stop_note(self._judge_model(), event.value))

    def read_settings(self) -> dict[str, Any]:
        """Protocol settings from the form; `validate_settings` reports bad values first.

        Early stopping the person has not set, or set as the judge implies, is sent as None (the
        session decides from the judge), so a remembered setup does not carry the embedded judge's
        "off" over to a real judge, and a judge typed just before Start is still the one that counts."""
        early_stop: bool | None = self.query_one("#early-stop", Switch).value
        if not self._early_stop_chosen or early_stop == early_stop_default(self._judge_model()):
            early_stop = None
        return {
            "agreeableness": self.query_one("#agreeableness", Select).value,
            "max_turns": int(self.query_one("#max-turns", Input).value or ProactiveEvalSettings().max_turns),
            "memory_turns": int(self.query_one("#memory-turns", Input).value or ProactiveEvalSettings().memory_turns),
            "planning": self.query_one("#planning", Switch).value,
            "live_judging": self.query_one("#live", Switch).value,
            "early_stop": early_stop,
        }
