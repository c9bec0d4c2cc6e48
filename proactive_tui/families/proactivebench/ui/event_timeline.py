"""The ProactiveBench event stream as a timeline: one EventCard per trace event, newest last.

It follows the newest card unless the person scrolled up to read; then it is never yanked back,
and the bottom border says that more arrived (End, or scrolling to the bottom, follows again).
Following uses Textual's scroll anchor, which the compositor re-applies on every layout, so it
holds when the verdict prompt under the timeline comes and goes and when a card grows after it
was mounted (checking "was at the bottom" before each change lost the bottom then, and the end
note was cut off at 80x24).

While a person judges, the card of the event being judged is marked and kept in view
(`show_card`); once the verdict is given (`judged`) the timeline follows the bottom again.
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import AwaitMount
from textual.widgets import Static

from proactive_tui.textsafe import plain
from proactive_tui.families.proactivebench.ui.proposal_card import EventCard


class EventTimeline(VerticalScroll):
    MORE_BELOW = "↓ more below · End follows"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cards: dict[int, EventCard] = {}
        self._holding_card = False
        """The view rests on a judged card's top (not the bottom) for the verdict prompt."""
        self._judging: int | None = None
        """The event whose card is being judged (None while no verdict is asked for)."""

    def on_mount(self) -> None:
        self.border_title = "Events"

    def watch_virtual_size(self) -> None:
        self._anchor_once_taller()

    def _anchor_once_taller(self) -> None:
        """Anchor (follow the bottom) once the cards are taller than the view: anchored earlier,
        a short timeline would sit at the bottom of its box with blank rows above it."""
        if not self._anchored and self.virtual_size.height > self.scrollable_content_region.height:
            self.anchor()

    @property
    def following(self) -> bool:
        """Whether new content comes into view (True before the cards fill the view; False once
        the view was scrolled up from the bottom)."""
        return not self._anchored or not self._anchor_released

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self.following and self.border_subtitle:
            self.border_subtitle = ""

    def _follow(self) -> None:
        """After new content: the anchor keeps a following timeline at the bottom; one scrolled up
        says that more arrived."""
        if not self.following:
            self.border_subtitle = self.MORE_BELOW

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

    def show_card(self, index: int) -> None:
        """Bring the card of event `index` into view for a verdict on it, and mark it as the one
        being judged: the whole card when it fits (the timeline then rests at its bottom and goes
        on following), else its top, where the event text is (the prompt below the timeline shows
        the task in full either way). The timeline shrinks as the prompt appears, so this is done
        again whenever its size changes while a card is being judged."""
        self._judging = index
        for other in self.cards.values():
            other.set_class(other.index == index, "judging")
        self.call_after_refresh(self._keep_judged_card_in_view)

    def _keep_judged_card_in_view(self) -> None:
        card = self.cards.get(self._judging) if self._judging is not None else None
        if card is None:
            return
        if card.outer_size.height > self.scrollable_content_region.height:
            self._holding_card = True
            self.release_anchor()
            self.scroll_to(y=card.virtual_region.y, animate=False, immediate=True)
        else:
            self._holding_card = False
            self.scroll_end(animate=False, immediate=True)

    def on_resize(self) -> None:
        self._anchor_once_taller()
        if self._judging is not None:
            self.call_after_refresh(self._keep_judged_card_in_view)

    def judged(self) -> None:
        """No verdict is asked for any more: no card is marked, and a view held on a judged card's
        top follows the bottom again (a view the person scrolled is left where it is)."""
        self._judging = None
        for card in self.cards.values():
            card.remove_class("judging")
        if self._holding_card:
            self._holding_card = False
            self.scroll_end(animate=False)

    def changed(self) -> None:
        """A card grew: say so if the view does not follow."""
        self._follow()
