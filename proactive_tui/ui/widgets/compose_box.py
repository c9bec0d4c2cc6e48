"""Where a person types their line: Enter sends, ctrl+j (or shift+enter) adds a newline."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea


class ComposeBox(TextArea):
    class Submitted(Message):
        def __init__(self, box: "ComposeBox", text: str) -> None:
            super().__init__()
            self.box = box
            self.text = text

    PLACEHOLDER = "Type your reply here"
    HOW_TO_SEND = "Enter sends · ctrl+j new line"

    def __init__(self, placeholder: str = PLACEHOLDER, **kwargs) -> None:
        """The placeholder says what to type; the bottom border always says how to send it."""
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
                         placeholder=placeholder, **kwargs)

    def on_mount(self) -> None:
        self.border_subtitle = self.HOW_TO_SEND

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text.strip()
            if text:
                self.post_message(self.Submitted(self, text))
                self.clear()
            return
        if event.key in ("ctrl+j", "shift+enter"):
            event.stop()
            event.prevent_default()
            start, end = self.selection
            self._replace_via_keyboard("\n", start, end)
            return
        await super()._on_key(event)
