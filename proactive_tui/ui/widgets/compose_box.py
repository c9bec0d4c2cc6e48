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

    def __init__(self, **kwargs) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)

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
