"""The whole description of one environment in a modal, for reading before starting it.

A modal rather than a screen so Escape returns to the picker exactly where it was (filter,
cursor and scroll kept).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding

from proactive_tui.envs.describe import describe
from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.modal import Modal
from proactive_tui.ui.widgets.description_view import DescriptionView
from proactive_tui.ui.widgets.key_bar import KeyBar


class EnvironmentDetailScreen(Modal[None]):
    """Scrollable description; Escape (or q) closes."""

    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("q", "dismiss", "Close", show=False),
    ]

    def __init__(self, env: Any, reveal_reference: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.env = env
        self.reveal_reference = reveal_reference

    def compose(self) -> ComposeResult:
        view = DescriptionView(describe(self.env, reveal_reference=self.reveal_reference), id="detail")
        view.border_title = Text(plain(self.env.id))  # ids come from file names: never markup
        view.border_subtitle = "Escape closes"
        yield view
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(DescriptionView).focus()
