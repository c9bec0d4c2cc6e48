"""The scrolling transcript: messages, observations and system notes.

It follows the newest message unless the person scrolled up to read, and then it is never yanked
back: the bottom border says that more arrived, and End (or scrolling to the bottom) follows again.
Following uses Textual's scroll anchor, which the compositor re-applies on every layout, so it holds
through a terminal resize and through a message growing after it was mounted (checking "was at the
bottom" before each change did not: a resize moved the bottom away and following stopped).
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from typing import Callable

from proactive_tui.textsafe import plain
from proactive_tui.ui.widgets.message_view import MessageView


class Transcript(VerticalScroll):
    can_focus = True

    def __init__(self, unit: str = "turn", number_of: Callable[[int], int] | None = None, **kwargs) -> None:
        """`unit`: the family's `turn_unit` name, which a message's header gives its number in;
        `number_of(turn)`: that number for an engine turn (by default the turn itself)."""
        super().__init__(**kwargs)
        self.views: dict[str, MessageView] = {}
        self.unit = unit
        self.number_of = number_of

    MORE_BELOW = "↓ more below · End follows"

    def on_mount(self) -> None:
        self.anchor()

    @property
    def following(self) -> bool:
        """Whether new content scrolls into view (False once the person scrolled up)."""
        return self._anchored and not self._anchor_released

    @property
    def at_bottom(self) -> bool:
        return self.following or self.scroll_y >= self.max_scroll_y - 1

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self.following and self.border_subtitle:
            self.border_subtitle = ""

    def _follow(self, was_at_bottom: bool = True) -> None:
        """After new content: the anchor keeps a following transcript at the bottom; one the person
        scrolled up in says that more arrived."""
        if not self.following:
            self.border_subtitle = self.MORE_BELOW

    def start_message(self, message_id: str, role: str, turn: int, speaker: str) -> MessageView:
        follow = self.at_bottom
        number = self.number_of(turn) if self.number_of is not None else turn
        view = MessageView(message_id, role, turn, speaker, unit=self.unit, number=number)
        self.views[message_id] = view
        self.mount(view)
        self._follow(follow)
        return view

    def append(self, message_id: str, text: str) -> None:
        view = self.views.get(message_id)
        if view is not None:
            follow = self.at_bottom
            view.append(text)
            self._follow(follow)

    def finish(self, message_id: str, role: str, turn: int, speaker: str, content: str, partial: bool) -> None:
        view = self.views.get(message_id) or self.start_message(message_id, role, turn, speaker)
        follow = self.at_bottom
        view.speaker = speaker  # the finished record names the writer (a start may predate knowing it)
        view.finish(content, partial)
        self._follow(follow)

    def discard(self, message_id: str) -> None:
        """A message prepared ahead that the dialogue no longer needs: struck through if any of
        it was shown, removed if nothing was."""
        view = self.views.get(message_id)
        if view is None:
            return
        if view.body.strip():
            view.discard()
        else:
            del self.views[message_id]
            view.remove()

    def close_open(self) -> None:
        """The session ended: a message still streaming or waiting for a person will get no more
        text, so it must not keep saying "typing…" / "waiting for you…" (an empty one goes; one
        with text is marked cut off, as the record has it)."""
        for message_id, view in list(self.views.items()):
            if view.state != "streaming":
                continue
            if view.body.strip():
                view.finish(view.body, partial=True)
            else:
                del self.views[message_id]
                view.remove()

    def note(self, text: str, kind: str = "system") -> None:
        """A system note or observation, styled apart from dialogue."""
        follow = self.at_bottom
        self.mount(Static(Text(plain(text)), classes=f"note note-{kind}"))
        self._follow(follow)

    def plain_text(self) -> str:
        return "\n\n".join(v.plain_text() for v in self.views.values() if v.state != "discarded")
