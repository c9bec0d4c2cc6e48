"""The vote of a comparison: which side was better (A, B, ... or a tie) and why.

Asked on the compare screen (`v`) once every side has ended. The sides are named by letter only:
in a blind comparison the models are revealed after the vote, never in this modal.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static
from pydantic import BaseModel

from proactive_tui.services.compare import letter
from proactive_tui.ui.screens.modal import Modal


class VoteChoice(BaseModel):
    """What the person chose: a side's letter or "tie", and their reason."""

    winner: str
    reason: str = ""


class VoteModal(Modal[VoteChoice | None]):
    HELP_TITLE = "Vote"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    VoteModal { align: center middle; }
    #vote-box { width: 70; max-width: 95%; height: auto; border: round $accent; padding: 0 1; background: $surface; }
    #vote-buttons { height: auto; }
    #vote-buttons Button { margin: 0 1 0 0; min-width: 8; }
    #vote-reason { margin: 1 0 0 0; }
    """

    def __init__(self, sides: int = 2) -> None:
        super().__init__()
        self.sides = sides

    def compose(self) -> ComposeResult:
        with Vertical(id="vote-box") as box:
            box.border_title = "Which side was better?"
            box.border_subtitle = "esc cancels"
            yield Static("Type why (optional), then pick a side or a tie.", markup=False)
            yield Input(placeholder="reason: what made it better", id="vote-reason")
            with Horizontal(id="vote-buttons"):
                for index in range(self.sides):
                    yield Button(letter(index), id=f"vote-{letter(index)}", variant="primary")
                yield Button("Tie", id="vote-tie")

    def on_mount(self) -> None:
        self.query_one("#vote-reason", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#vote-A", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        winner = (event.button.id or "").removeprefix("vote-")
        self.dismiss(VoteChoice(winner=winner, reason=self.query_one("#vote-reason", Input).value))

    def action_cancel(self) -> None:
        self.dismiss(None)
