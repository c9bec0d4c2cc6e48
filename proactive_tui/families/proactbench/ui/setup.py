"""ProactBench session setup: the protocol (offline, upstream's evaluation and the default; or
online, the three-agent loop, a labelled deviation), how many trigger points (offline) or turns
(online) at most, the agent's optional system prompt, and the seats.

Offline the user's messages are the recorded ones, so the user seat is not used: its model box is
disabled with that reason beside it, and the judge seat is the neutral-mode judge. Online the judge
seat is the Planner and the user seat the User Agent (the family's seat labels say so). Playing the
user exists only online (offline nobody writes the user's messages): choosing it switches the
protocol to online and says so. Upstream's temperatures open each seat's temperature box (the
Planner's 0.1, the User Agent's and the agent's 0.7) through `EnginePart.seat_temperature`.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Grid
from textual.validation import Integer
from textual.widgets import Input, Label, RadioSet, Select, Static

from proactive_tui.families.proactbench.env import MAX_TRIGGERS
from proactive_tui.ui.screens.setup_base import SetupScreenBase

PROTOCOLS = [("offline (upstream)", "offline"), ("online (3 agents)", "online")]
PROTOCOL_NOTE = {
    "offline": "Offline: the recorded dialogue up to each trigger point; the agent answers the trigger turn, "
               "the judge rates it against the rubric without the persona (upstream's evaluation).",
    "online": "Online: the Planner (judge seat) plans each turn and writes the rubrics, the User Agent (user seat) "
              "writes the user's messages and scores each trigger reply. Not upstream's evaluation: labelled so.",
}
UNUSED_USER = "not used offline: the user's messages are the recorded ones"


class ProactBenchSetupScreen(SetupScreenBase):
    FAMILY = "proactbench"
    HELP_TITLE = "ProactBench setup"
    CSS = """
    ProactBenchSetupScreen #seats { grid-columns: 18 1fr 17 1fr; }
    ProactBenchSetupScreen #settings-grid { grid-columns: 16 1fr 16 1fr; }
    ProactBenchSetupScreen #protocol-note { color: $text-muted; height: auto; padding: 0 1; }
    ProactBenchSetupScreen #system-prompt { margin: 0 0 0 0; }
    """

    def compose_settings(self, prev: Any) -> ComposeResult:
        with Grid(id="settings-grid"):
            yield Label("protocol")
            yield Select(PROTOCOLS, value=prev.protocol, allow_blank=False, id="protocol")
            yield Label("max triggers")
            yield Input("" if prev.max_triggers is None else str(prev.max_triggers), id="max-triggers", type="integer",
                        validators=[Integer(1, MAX_TRIGGERS)], valid_empty=True, placeholder="all",
                        tooltip=f"offline: score only the dialogue's first N trigger points (1-{MAX_TRIGGERS})")
            yield Label("max turns")
            yield Input(str(prev.max_turns), id="max-turns", type="integer", validators=[Integer(1, 50)],
                        tooltip="online: turns at most (upstream's num_turns, 10)")
        yield Input(prev.system_prompt, id="system-prompt", placeholder="agent system prompt (upstream: none)",
                    tooltip="the model under test's optional system prompt; empty sends none, as upstream")
        yield Static(Text(PROTOCOL_NOTE[prev.protocol]), id="protocol-note")

    def on_mount(self) -> None:
        super().on_mount()
        self._protocol_changed()

    @property
    def protocol(self) -> str:
        return str(self.query_one("#protocol", Select).value)

    @on(Select.Changed, "#protocol")
    def _protocol_changed(self) -> None:
        """The fields and the seats the chosen protocol uses; the others are disabled, and why."""
        online = self.protocol == "online"
        self.query_one("#protocol-note", Static).update(Text(PROTOCOL_NOTE[self.protocol]))
        self.query_one("#max-triggers", Input).disabled = online
        self.query_one("#max-turns", Input).disabled = not online
        if self._human_seat() == "user":
            return
        box = self.query_one("#model-user", Input)
        box.disabled = not online
        self.query_one("#temperature-user", Input).disabled = not online
        if online:
            self._input_changed(Input.Changed(box, box.value))
        else:
            self.query_one("#key-user", Static).update(Text(UNUSED_USER, style="italic"))

    @on(RadioSet.Changed, "#mode")
    def _mode_needs_online(self) -> None:
        """Playing the user exists only online: the protocol follows (the note says so)."""
        if self._human_seat() == "user" and self.protocol != "online":
            self.query_one("#protocol", Select).value = "online"
        self.call_after_refresh(self._protocol_changed)

    def read_settings(self) -> dict[str, Any]:
        online = self.protocol == "online"
        triggers = self.query_one("#max-triggers", Input).value.strip()
        turns = self.query_one("#max-turns", Input).value.strip()
        if self._human_seat() == "user" and not online:
            raise ValueError("playing the user needs the online protocol (offline the user's messages are recorded)")
        settings: dict[str, Any] = {"protocol": self.protocol,
                                    "system_prompt": self.query_one("#system-prompt", Input).value}
        if not online and triggers:
            settings["max_triggers"] = int(triggers)
        if online and turns:
            settings["max_turns"] = int(turns)
        return settings
