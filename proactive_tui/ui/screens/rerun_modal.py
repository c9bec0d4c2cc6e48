"""Re-run a stored session against a new agent (History's `n`): the agent's model, and whether the
user's recorded turns are sent again verbatim (frozen) or the user model answers (simulated).
Enter starts the re-run in the family's session screen, Escape cancels (`core.rerun`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Checkbox, Input, Static

from proactive_tui.ui.screens.modal import Modal


class RerunChoice(BaseModel):
    """The new agent a person chose, and how the user's turns are given."""

    model: str
    frozen: bool = True


class RerunModal(Modal[RerunChoice | None]):
    HELP_TITLE = "Re-run against a new agent"
    CSS_PATH = Path(__file__).with_name("history.tcss")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, session_id: str, model: str, can_freeze: bool) -> None:
        super().__init__()
        self.session_id = session_id
        self.model = model
        self.can_freeze = can_freeze

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box") as box:
            box.border_title = f"Re-run session {self.session_id[:8]} against a new agent"
            box.border_subtitle = "enter starts · escape cancels"
            yield Static("Same environment, settings, user and judge; only the agent changes. "
                         "The original stays as it was.", markup=False)
            yield Static("Agent model", classes="export-label")
            yield Input(self.model, placeholder="e.g. openai/gpt-4o", id="rerun-model")
            yield Checkbox("Freeze the user: send its recorded turns again, word for word", self.can_freeze,
                           id="rerun-frozen", disabled=not self.can_freeze)
            if not self.can_freeze:
                yield Static("This family has no user turns to freeze: the user seat answers anew.", markup=False)

    def on_mount(self) -> None:
        self.query_one("#rerun-model", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        model = self.query_one("#rerun-model", Input).value.strip()
        if not model:
            self.notify("Give the new agent's model string", severity="warning", timeout=4)
            return
        self.dismiss(RerunChoice(model=model, frozen=self.query_one("#rerun-frozen", Checkbox).value))

    def action_cancel(self) -> None:
        self.dismiss(None)
