"""The ProactiveBench event stream as a timeline: one EventCard per trace event, newest last.

It follows the newest card while the view is at the bottom; scrolling up to read stops that.
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import AwaitMount
from textual.widgets import Static

from proactive_tui.textsafe import plain
from proactive_tui.families.proactivebench.ui.proposal_card import EventCard


class EventTimeline(VerticalScroll):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cards: dict[int, EventCard] = {}

    def on_mount(self) -> None:
        self.border_title = "Events"

    def _follow(self) -> None:
        if self.scroll_y >= self.max_scroll_y - 2:
            self.call_after_refresh(self.scroll_end, animate=False)

    def add_event(self, index: int, total: int, time: str, event: str) -> AwaitMount:
        """Mount the card of a new event; await the result before adding to the card."""
        card = EventCard(index, total, time, event, id=f"event-{index}", classes="event-card")
        self.cards[index] = card
        mounted = self.mount(card)
        self._follow()
        return mounted

    def card(self, index: int) -> EventCard | None:
        return self.cards.get(index)

    def note(self, text: str, kind: str = "system") -> None:
        self.mount(Static(Text(plain(text)), classes=f"note note-{kind}"))
        self._follow()

    def make_room(self, rows: int) -> None:
        """Leave `rows` blank at the bottom (the verdict prompt covers them) and show the newest card."""
        self.styles.padding = (0, 1, rows, 1)
        self.call_after_refresh(self.scroll_end, animate=False)

    def changed(self) -> None:
        """A card grew: keep following the bottom."""
        self._follow()
