"""For a person playing the Chronos user: the commands besides a typed reply, as buttons (the
screen binds keys to the same commands). Each posts `UserControls.Command` with the line to send."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button

COMMANDS = (
    ("dormant", "Stay dormant (d)"),
    ("shift", "Voice the shift (v)"),
    ("confirm", "Confirm (y)"),
    ("refuse", "Refuse (n)"),
)


class UserControls(Horizontal):
    class Command(Message):
        def __init__(self, command: str) -> None:
            super().__init__()
            self.command = command

    def __init__(self, can_shift: bool, **kwargs) -> None:
        super().__init__(**kwargs)
        self.can_shift = can_shift

    def compose(self) -> ComposeResult:
        for name, label in COMMANDS:
            if name == "shift" and not self.can_shift:
                continue
            yield Button(label, id=f"cmd-{name}", compact=True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Command("/" + (event.button.id or "").removeprefix("cmd-")))
