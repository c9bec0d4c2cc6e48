"""What the seat a person plays would be told: the persona card (user) or context card (agent).

The hidden target stays hidden until asked for (a player should not be steered by it)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from proactive_tui.textsafe import plain


class ContextCard(Static):
    def __init__(self, title: str, sections: list[tuple[str, str]], hidden: list[tuple[str, str]] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.title = title
        self.sections = sections
        self.hidden = hidden or []
        self.revealed = False

    def on_mount(self) -> None:
        self.border_title = self.title
        self._redraw()

    def toggle_hidden(self) -> None:
        self.revealed = not self.revealed
        self._redraw()

    def _redraw(self) -> None:
        text = Text()
        parts = self.sections + (self.hidden if self.revealed else [])
        for i, (heading, body) in enumerate(parts):
            text.append(heading + "\n", style="bold")
            text.append(plain(body) + ("\n\n" if i < len(parts) - 1 else ""))
        if self.hidden and not self.revealed:
            text.append("\n\n(hidden target: press t to show)", style="dim italic")
        self.border_subtitle = "t hides the target" if self.revealed and self.hidden else ""
        self.update(text)
