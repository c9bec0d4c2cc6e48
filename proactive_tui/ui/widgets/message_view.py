"""One dialogue message in the transcript: a speaker line and the text as it streams in.

The text is always a `Text` built from `plain(...)`: model output is data, so Rich markup such
as `[bold]` or `[@click=app.quit]` shows literally and terminal escapes are dropped.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from proactive_tui.textsafe import plain


class MessageView(Static):
    """A message; `append` adds streamed text, `finish` marks it complete (or cut off)."""

    can_focus = True

    def __init__(self, message_id: str, role: str, turn: int, speaker: str, text: str = "", kind: str = "message") -> None:
        super().__init__(classes=f"message {kind} role-{role}")
        self.message_id = message_id
        self.role = role
        self.turn = turn
        self.speaker = speaker
        self.body = plain(text)
        self.state = "streaming" if kind == "message" else "done"

    def on_mount(self) -> None:
        self._render_text()

    def header(self) -> Text:
        label = Text(f"{self.role} ", style="bold")
        label.append(f"· turn {self.turn} · {self.speaker}", style="dim")
        if self.state == "streaming":
            label.append("  waiting for you…" if self.speaker == "you" else "  typing…", style="italic dim")
        elif self.state == "partial":
            label.append("  cut off", style="italic")
        elif self.state == "discarded":
            label.append("  dropped: the target was reached first", style="italic")
        return label

    def _render_text(self) -> None:
        self.update(Text.assemble(self.header(), "\n", Text(self.body or " ")))

    def append(self, text: str) -> None:
        self.body += plain(text)
        self._render_text()

    def finish(self, content: str, partial: bool = False) -> None:
        self.body = plain(content)
        self.state = "partial" if partial else "done"
        self._render_text()

    def discard(self) -> None:
        self.state = "discarded"
        self.add_class("discarded")
        self._render_text()

    def plain_text(self) -> str:
        return f"{self.role} (turn {self.turn}, {self.speaker}): {self.body}"
