"""One dialogue message in the transcript: a speaker line and the text as it streams in.

The text is always a `Text` built from `plain(...)`: model output is data, so Rich markup such
as `[bold]` or `[@click=app.quit]` shows literally and terminal escapes are dropped.

A long message stays cheap to show: only its first `SHOWN_CHARS` characters (and `SHOWN_LINES`
lines) are laid out in the transcript, with a line saying how much is folded; Enter on the message
(or a click) opens the whole text in a read-only text area, which draws only what is visible. A
1 MB reply laid out in full cost seconds per key press and most of a gigabyte of memory.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static

from proactive_tui.textsafe import plain

SHOWN_CHARS = 6000
SHOWN_LINES = 120


def folded(body: str) -> tuple[str, str]:
    """(what the transcript shows, the fold note or ""): the head of a long text, cut at a line end
    where one is near, and how much more there is."""
    head = body[:SHOWN_CHARS]
    lines = head.split("\n")
    if len(lines) > SHOWN_LINES:
        head = "\n".join(lines[:SHOWN_LINES])
    elif len(body) > SHOWN_CHARS and "\n" in head[SHOWN_CHARS // 2:]:
        head = head[: head.rindex("\n")]
    if len(head) >= len(body):
        return body, ""
    rest = body[len(head):]
    return head, (f"… {len(rest):,} more characters ({rest.count(chr(10)) + 1:,} lines) folded · "
                  "Enter or a click opens the whole message")


class MessageView(Static):
    """A message; `append` adds streamed text, `finish` marks it complete (or cut off)."""

    can_focus = True
    BINDINGS = [Binding("enter", "open_full", "Whole message", show=False)]

    def __init__(self, message_id: str, role: str, turn: int, speaker: str, text: str = "", kind: str = "message",
                 unit: str = "turn", number: int | None = None) -> None:
        """`turn`: the engine's turn (what a fork names); `unit` and `number`: what the header
        says, the family's `turn_unit` and this message's number in it (`exchange 3`)."""
        super().__init__(classes=f"message {kind} role-{role}")
        self.message_id = message_id
        self.role = role
        self.turn = turn
        self.unit = unit
        self.number = turn if number is None else number
        self.speaker = speaker
        self.body = plain(text)
        self.state = "streaming" if kind == "message" else "done"

    def on_mount(self) -> None:
        self._render_text()

    def header(self) -> Text:
        label = Text(f"{self.role} ", style="bold")
        label.append(f"· {self.unit} {self.number} · {self.speaker}", style="dim")
        if self.state == "streaming":
            label.append("  waiting for you…" if self.speaker == "you" else "  typing…", style="italic dim")
        elif self.state == "partial":
            label.append("  cut off", style="italic")
        elif self.state == "discarded":
            label.append("  dropped: the target was reached first", style="italic")
        return label

    def _render_text(self) -> None:
        shown, note = folded(self.body)
        text = Text.assemble(self.header(), "\n", Text(shown or " "))
        if note:
            text.append("\n" + note, style="italic dim")
        self.update(text)

    @property
    def is_folded(self) -> bool:
        return bool(folded(self.body)[1])

    def action_open_full(self) -> None:
        if self.is_folded:
            from proactive_tui.ui.screens.message_modal import FullMessageScreen

            self.app.push_screen(FullMessageScreen(f"{self.role} · {self.unit} {self.number} · {self.speaker}", self.body))

    def on_click(self) -> None:
        self.action_open_full()

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
        return f"{self.role} ({self.unit} {self.number}, {self.speaker}): {self.body}"
