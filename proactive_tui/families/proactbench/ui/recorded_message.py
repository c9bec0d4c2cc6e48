"""A message of the recorded dialogue (the dialogue file's, not this session's): dimmed, folded short.

Offline, every turn before a trigger is the curation dialogue as recorded (the curation model's
reply, 4,000-6,000 characters in the release): it is the context of the trigger replies, read
once, so it shows only its first lines, dimmed, and Enter (or a click) opens it whole. The header
says `recorded` and names the model that wrote the reply, so no recorded reply is ever taken for
one this session's agent wrote. Text is data: `plain` into rich Text, never markup.
"""

from __future__ import annotations

from rich.text import Text

from proactive_tui.textsafe import plain
from proactive_tui.ui.widgets.message_view import MessageView

HEAD_CHARS = 320
HEAD_LINES = 4


def head(body: str) -> tuple[str, int]:
    """(the first lines shown, how many characters are folded away)."""
    shown = "\n".join(body.split("\n")[:HEAD_LINES])[:HEAD_CHARS]
    return shown, len(body) - len(shown)


class RecordedMessage(MessageView):
    """One recorded message; `source`: who wrote it (the user, or the curation model's name)."""

    def __init__(self, role: str, turn: int, text: str, source: str, unit: str = "turn") -> None:
        super().__init__(f"recorded-{role}-{turn}", role, turn, source, text=text, kind="recorded", unit=unit)

    def header(self) -> Text:
        label = Text(f"{self.role} ", style="bold")
        source = f" · {plain(self.speaker)}" if self.speaker and self.speaker != self.role else ""
        label.append(f"· {self.unit} {self.number} · recorded{source}", style="dim")
        return label

    @property
    def is_folded(self) -> bool:
        return head(self.body)[1] > 0

    def _render_text(self) -> None:
        shown, more = head(self.body)
        text = Text.assemble(self.header(), "\n", Text(shown or " "))
        if more > 0:
            text.append(f"\n… {more:,} more characters · Enter or a click opens it", style="italic")
        self.update(text)

    def plain_text(self) -> str:
        return f"{self.role} ({self.unit} {self.number}, recorded, {self.speaker}): {self.body}"
