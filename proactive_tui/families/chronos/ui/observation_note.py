"""An observation in the transcript (a tool result or the monitor's internal trigger): what the
agent's model was sent in place of a user message, styled apart from the dialogue. A repeated
check says so, and says when the turn passed on (to the user or the monitor) instead of back to
the agent (`ChronosSettings.max_tool_calls`)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from proactive_tui.families.chronos import prompts
from proactive_tui.textsafe import plain

SOURCE = {"tool_call": "tool result", "internal_trigger": "internal trigger (monitor)"}
NOTES = {prompts.REPEATED_CHECK: "unchanged since the last check",
         prompts.HANDOVER["user"]: "checked enough in a row: the user's turn",
         prompts.HANDOVER["monitor"]: "checked enough in a row: the monitor scans next"}


class ObservationNote(Static):
    def __init__(self, event: Any, where: str, **kwargs: Any) -> None:
        """`where`: the observation's place in the family's unit (`exchange 3`), as the screen counts."""
        kind = "obs-tool" if event.source == "tool_call" else "obs-trigger"
        self.event = event
        self.where = where
        # The text is known up front: give it to Static now. Set in on_mount instead, the height
        # measured while empty could stick (a 1-row tag), and the transcript's scroll height with it.
        super().__init__(self.render_text(), classes=f"observation {kind}", **kwargs)

    @property
    def handover(self) -> bool:
        return any(note in self.event.content for note in prompts.HANDOVER.values())

    def render_text(self) -> Text:
        e = self.event
        text = Text()
        text.append(f"◆ {SOURCE[e.source]} · {self.where} · {plain(e.clock).replace('T', ' ')}", style="bold")
        for line in e.content.splitlines():  # the listings; the task it repeats is on the task panel
            line = line.strip()
            if line in NOTES:
                text.append(f"\n{NOTES[line]}", style="italic")
            elif line.startswith("- "):
                text.append("\n" + plain(line))
        return text

    def plain_text(self) -> str:
        return f"[{SOURCE[self.event.source]}] {plain(self.event.content)}"
