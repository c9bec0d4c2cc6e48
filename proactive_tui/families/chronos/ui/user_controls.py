"""For a person playing the Chronos user: the commands besides a typed reply, as buttons.

Each button names the ctrl key the screen binds to the same command (the key works while the
compose box has focus, so typing a reply never triggers one, and a command never needs the mouse).
The buttons share the row equally, so all of them stay visible and clickable at 80 columns.
Each posts `UserControls.Command` with the line to send.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Grid
from textual.message import Message
from textual.widgets import Button

COMMANDS = (
    ("dormant", "Dormant", "ctrl+l", "Stay dormant: don't answer; time passes (once a reminder is set)"),
    ("shift", "Shift", "ctrl+n", "Voice the change of plans (when the hint says so)"),
    ("confirm", "Confirm", "ctrl+o", "The offer meets your needs: say so explicitly"),
    ("refuse", "Refuse", "ctrl+r", "Turn the offer down / cancel the search"),
)
"""(command, label, key, what it does): the screen's bindings are built from the same rows."""


def key_label(key: str) -> str:
    """ctrl+l -> ^l, as the key bar writes it."""
    return key.replace("ctrl+", "^")


class UserControls(Grid):
    class Command(Message):
        def __init__(self, command: str) -> None:
            super().__init__()
            self.command = command

    def __init__(self, can_shift: bool, **kwargs) -> None:
        super().__init__(**kwargs)
        self.can_shift = can_shift

    def compose(self) -> ComposeResult:
        for name, label, key, tip in COMMANDS:
            if name == "shift" and not self.can_shift:
                continue
            button = Button(f"{label} {key_label(key)}", id=f"cmd-{name}", compact=True)
            button.tooltip = f"{tip} ({key_label(key)})"
            button.styles.line_pad = 0  # the label uses the whole cell (TCSS refuses `line-pad: 0`)
            yield button

    def on_mount(self) -> None:
        self.styles.grid_size_columns = len(self.children)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Command("/" + (event.button.id or "").removeprefix("cmd-")))
