"""ProactiveBench session setup: the agent proposing, the user seat as the reward judge (a model or
you), and the protocol settings (retries after a rejection, candidates, verdict feedback, max events,
beside the seats, the agent's temperature).

The defaults are upstream's evaluation. Verdict feedback is labelled as what it is, the paper's
ablation (GPT-4o F1 64.60 -> 56.00 with it), so nobody turns it on thinking it is the benchmark.
The agent's temperature (beside its model, as every seat's) opens on upstream's 0.5 unless the
agent's model settings (config or environment) chose one (`EnginePart.seat_temperature`); what it holds
is what the session uses and records as `agent_temperature`.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Grid
from textual.validation import Integer
from textual.widgets import Input, Label, Select, Static, Switch

from proactive_tui.families.proactivebench.settings import AGENT_TEMPERATURE
from proactive_tui.ui.screens.setup_base import SetupScreenBase

FEEDBACK_NOTE = ("Verdict feedback is the paper's ablation (GPT-4o F1 64.60 -> 56.00 with it): "
                 "upstream's evaluation has none, so its numbers do not compare.")


class ProactiveBenchSetupScreen(SetupScreenBase):
    FAMILY = "proactivebench"
    HELP_TITLE = "ProactiveBench setup"
    CSS = """
    ProactiveBenchSetupScreen #seats { grid-columns: 13 1fr 17 1fr; }
    ProactiveBenchSetupScreen #settings-grid { grid-columns: 22 1fr 16 1fr; }
    ProactiveBenchSetupScreen #seat-note, ProactiveBenchSetupScreen #feedback-note { color: $text-muted; height: auto; padding: 0 1; }
    """

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#temperature-agent", Input).tooltip = (
            f"the agent model's temperature, 0 to 2; upstream's evaluation runs it at {AGENT_TEMPERATURE}")

    def compose_settings(self, prev: Any) -> ComposeResult:
        yield Static(Text("The user seat is the reward judge: it accepts or rejects each proposal "
                          "(accepting \"no help\" means none was needed)."), id="seat-note")
        max_events = prev.max_events
        with Grid(id="settings-grid"):
            yield Label("retries after reject")
            yield Input(str(prev.retries), id="retries", validators=[Integer(0, 5)], type="integer")
            yield Label("candidates")
            yield Select([("1", 1), ("3 (ablation)", 3)], value=int(prev.candidates), allow_blank=False, id="candidates")
            yield Label("verdict feedback (ablation)")
            yield Switch(prev.feedback, id="feedback")
            yield Label("max events")
            yield Input("" if max_events is None else str(max_events), id="max-events", validators=[Integer(1, 10_000)],
                        type="integer", valid_empty=True, placeholder="all")
        yield Static(Text(FEEDBACK_NOTE), id="feedback-note")

    def read_settings(self) -> dict[str, Any]:
        max_events = self.query_one("#max-events", Input).value.strip()
        return {
            "retries": int(self.query_one("#retries", Input).value or 0),
            "candidates": int(self.query_one("#candidates", Select).value),  # type: ignore[arg-type]
            "feedback": self.query_one("#feedback", Switch).value,
            "max_events": int(max_events) if max_events else None,
            "agent_temperature": self.seat_temperature_value("agent"),
        }
