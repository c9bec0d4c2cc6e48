"""Set up a comparison from the picker (palette: "Compare agents on: ENV"): two agent models, blind or not.

The user and judge seats (and their api base) come from the config, as for a session: the same
for both sides, which is the point of a comparison. The family's protocol settings are its
defaults.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label

from pydantic import BaseModel

from proactive_tui.ui.screens.modal import Modal


class CompareChoice(BaseModel):
    agents: list[str]
    blind: bool = True


class CompareSetupModal(Modal[CompareChoice | None]):
    HELP_TITLE = "Compare agents"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    CompareSetupModal { align: center middle; }
    #compare-setup { width: 70; max-width: 95%; height: auto; border: round $accent; padding: 0 1; background: $surface; }
    #compare-setup Input { margin: 0 0 1 0; }
    #compare-setup-buttons { height: auto; }
    """

    def __init__(self, env_id: str, default_model: str) -> None:
        super().__init__()
        self.env_id = env_id
        self.default_model = default_model

    def compose(self) -> ComposeResult:
        with Vertical(id="compare-setup") as box:
            box.border_title = f"Compare agents on {self.env_id}"
            box.border_subtitle = "esc cancels"
            yield Label("First agent's model")
            yield Input(value=self.default_model, id="compare-agent-a")
            yield Label("Second agent's model")
            yield Input(placeholder="e.g. openai/gpt-4o-mini", id="compare-agent-b")
            yield Checkbox("Blind: shuffle A and B, hide the models until I vote", value=True, id="compare-blind")
            with Horizontal(id="compare-setup-buttons"):
                yield Button("Compare", id="compare-start", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#compare-agent-b", Input).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self._start()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._start()

    def _start(self) -> None:
        agents = [self.query_one(f"#compare-agent-{x}", Input).value.strip() for x in "ab"]
        if not all(agents):
            self.notify("Both agents need a model", severity="warning", markup=False)
            return
        self.dismiss(CompareChoice(agents=agents, blind=self.query_one("#compare-blind", Checkbox).value))

    def action_cancel(self) -> None:
        self.dismiss(None)
