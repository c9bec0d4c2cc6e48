"""Which judge re-grades a stored session (History's `g`): its model and api base, prefilled with
the judge that graded it. Enter re-grades, Escape cancels."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from proactive_tui.ui.screens.modal import Modal


class RegradeChoice(BaseModel):
    """The new judge a person chose."""

    model: str
    api_base: str | None = None


class RegradeModal(Modal[RegradeChoice | None]):
    HELP_TITLE = "Re-grade"
    CSS_PATH = Path(__file__).with_name("history.tcss")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, session_id: str, model: str, api_base: str | None, what: str) -> None:
        """`what`: one line saying what the judge will grade (shown literally)."""
        super().__init__()
        self.session_id = session_id
        self.model = model
        self.api_base = api_base or ""
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box") as box:
            box.border_title = f"Re-grade session {self.session_id[:8]}"
            box.border_subtitle = "enter re-grade · escape cancel"
            yield Static(self.what, id="regrade-what", markup=False)
            yield Static("Judge model", classes="export-label")
            yield Input(self.model, placeholder="e.g. openai/gpt-4o-mini", id="regrade-model")
            yield Static("API base (empty: the provider's own)", classes="export-label")
            yield Input(self.api_base, placeholder="http://localhost:8000/v1", id="regrade-api-base")

    def on_mount(self) -> None:
        self.query_one("#regrade-model", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        model = self.query_one("#regrade-model", Input).value.strip()
        if not model:
            self.notify("Give the judge's model string", severity="warning", timeout=4)
            return
        base = self.query_one("#regrade-api-base", Input).value.strip() or None
        self.dismiss(RegradeChoice(model=model, api_base=base))

    def action_cancel(self) -> None:
        self.dismiss(None)
