"""What the seat a person plays would be told: the persona card (user) or context card (agent).

A card can hold more than fits (a persona, a trigger, guidance, a need list), so it scrolls: the
wheel, or the arrow keys once focused. The hidden part (ProactiveEval's target, Chronos' change of
plans) stays hidden until asked for, since a player should not be steered by it, but the card always
says in its bottom border how to show it, so the hint is never scrolled out of sight. A screen may
replace the sections as the situation changes (`set_sections`, e.g. after an intention shift).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from proactive_tui.textsafe import plain

Sections = list[tuple[str, str]]


class ContextCard(VerticalScroll):
    can_focus = True

    def __init__(self, title: str, sections: Sections, hidden: Sections | None = None,
                 hidden_name: str = "target", **kwargs) -> None:
        super().__init__(**kwargs)
        self.title = title
        self.sections = list(sections)
        self.hidden = list(hidden or [])
        self.hidden_name = hidden_name
        """What the hidden part is called in the hint ("target", "change of plans")."""
        self.revealed = False

    def compose(self) -> ComposeResult:
        yield Static(self._body(), id="context-card-body")

    def on_mount(self) -> None:
        self.border_title = self.title
        self._redraw()

    def set_sections(self, sections: Sections, hidden: Sections | None = None) -> None:
        """Replace what the card says (hidden=None keeps the hidden part as it is)."""
        self.sections = list(sections)
        if hidden is not None:
            self.hidden = list(hidden)
        self._redraw()

    def toggle_hidden(self) -> None:
        self.revealed = not self.revealed
        self._redraw()
        if self.revealed and self.hidden:
            self.call_after_refresh(self.scroll_end, animate=False)

    def _body(self) -> Text:
        text = Text()
        parts = self.sections + (self.hidden if self.revealed else [])
        for i, (heading, body) in enumerate(parts):
            text.append(heading + "\n", style="bold")
            text.append(plain(body) + ("\n\n" if i < len(parts) - 1 else ""))
        return text

    def _redraw(self) -> None:
        if not self.hidden:
            self.border_subtitle = ""
        elif self.revealed:
            self.border_subtitle = f"t hides the {self.hidden_name}"
        else:
            self.border_subtitle = f"hidden {self.hidden_name}: t shows it"
        for body in self.query("#context-card-body").results(Static):
            body.update(self._body())

    def plain_text(self) -> str:
        """What the card shows now (for tests and copying)."""
        return self._body().plain
