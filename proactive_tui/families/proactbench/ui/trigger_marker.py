"""The mark a trigger point puts in the transcript: its index, turn and type, before the reply
it scores (the rubric itself is in the side panel, hidden from a person playing the agent until
they have answered)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

TYPE_MEANING = {
    "EMERGENT": "infer an unstated need from one disclosed fact",
    "CRITICAL": "combine several disclosed facts into a new, unrequested step",
    "RECOVERY": "add grounded value after the task is done",
}
"""What each trigger type asks of the assistant (the kit's SCHEMA.md, in short)."""


class TriggerMarker(Static):
    def __init__(self, index: int, turn: int, kind: str, total: int | None = None, unit: str = "turn") -> None:
        super().__init__(classes=f"trigger-marker trigger-{kind.lower()}")
        self.index, self.turn, self.kind, self.total = index, turn, kind, total

    def render_text(self) -> Text:
        of = f"/{self.total}" if self.total else ""
        text = Text(f"◆ trigger {self.index}{of} · turn {self.turn} · {self.kind}", style="bold")
        meaning = TYPE_MEANING.get(self.kind)
        if meaning:
            text.append(f" · {meaning}", style="dim")
        return text

    def on_mount(self) -> None:
        self.update(self.render_text())
