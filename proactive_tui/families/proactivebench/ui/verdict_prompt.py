"""The accept / reject prompt of a person playing the user: a small notification-like card docked
in the screen's bottom-right corner, showing what the assistant offers for the latest event.

Buttons (mouse) and the screen's a / r / i keys both post `VerdictPrompt.Chosen` with "a", "r"
or "s" (ignore = skip: the event is not counted), which the screen hands to the HumanParticipant.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from proactive_tui.textsafe import plain


class VerdictPrompt(Vertical):
    class Chosen(Message):
        def __init__(self, code: str) -> None:
            super().__init__()
            self.code = code

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="prompt-body")
        with Horizontal(id="prompt-buttons"):
            yield Button("Accept (a)", variant="success", id="prompt-accept", compact=True)
            yield Button("Reject (r)", variant="error", id="prompt-reject", compact=True)
            yield Button("Ignore (i)", id="prompt-ignore", compact=True)

    def on_mount(self) -> None:
        self.border_title = "Assistant"
        self.border_subtitle = "a accept · r reject · i ignore"

    def ask(self, index: int, task: str | None, response: str | None, candidate: int | None = None,
            of: int = 1) -> None:
        """Show the offer for event `index` (task None: the assistant offers nothing)."""
        body = Text()
        if task is None:
            body.append("No offer: the assistant thinks you need no help.\n", style="bold")
            body.append("Accept if that is right, reject if you wanted help.", style="dim")
        else:
            if response:
                body.append(plain(response) + "\n", style="italic")
            body.append("Task: ", style="bold")
            body.append(plain(task))
        self.border_title = f"Assistant · event {index}" + (f" · offer {candidate + 1}/{of}" if candidate is not None and of > 1 else "")
        self.query_one("#prompt-body", Static).update(body)
        self.display = True

    def hide(self) -> None:
        self.display = False

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        code = {"prompt-accept": "a", "prompt-reject": "r", "prompt-ignore": "s"}.get(event.button.id or "")
        if code:
            event.stop()
            self.post_message(self.Chosen(code))
