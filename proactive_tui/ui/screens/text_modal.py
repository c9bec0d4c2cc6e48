"""A scrollable modal of plain-text sections (error details, messages); Escape closes."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content

from proactive_tui.ui.screens.modal import Modal
from proactive_tui.ui.widgets.description_view import DescriptionView


class TextModal(Modal[None]):
    BINDINGS = [Binding("escape", "dismiss", "Close")]

    def __init__(self, title: str, sections: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.sections = sections

    def compose(self) -> ComposeResult:
        view = DescriptionView(self.sections, id="text-modal")
        view.border_title = Content(self.title_text)  # titles name sessions and files: data, not markup
        view.border_subtitle = "esc closes"
        yield view

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
