"""A whole message in a read-only text area: how a folded long message is read (MessageView).

A text area draws only the lines in view, so a megabyte of model output opens and scrolls at the
speed of a short one; it also lets a person select and copy any part of it.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import TextArea

from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.modal import Modal
from proactive_tui.ui.widgets.key_bar import KeyBar


class FullMessageScreen(Modal[None]):
    BINDINGS = [Binding("escape", "dismiss", "Close")]
    DEFAULT_CSS = """
    FullMessageScreen { align: center middle; }
    FullMessageScreen > TextArea { width: 95%; height: 90%; border: round $accent; }
    """

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        area = TextArea(self.text, read_only=True, soft_wrap=True, show_line_numbers=False, id="full-message")
        area.border_title = Text(plain(self.title_text))  # a model's name is data, never markup
        area.border_subtitle = f"{len(self.text):,} characters · esc closes"
        yield area
        yield KeyBar()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
