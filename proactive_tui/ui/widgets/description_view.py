"""A scrollable view of an environment's description sections (heading + body).

Shared by the picker preview and the detail modal so both show exactly what `envs show` prints.
Every string from an environment goes in as plain text inside a `Content`, never as markup:
environment files are data, and a title such as "[bold]x[/]" or "[@click=app.quit]" must show
literally and never run an action; terminal escape sequences and control characters are
removed (`proactive_tui.textsafe`) so a file cannot drive the terminal. Headings are styled with theme variables ($accent), so every
theme colours them. One Static holds all sections: one widget instead of two per section keeps
the picker's first paint and each cursor move cheap.
"""

from __future__ import annotations

from typing import Iterable

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from proactive_tui.textsafe import plain

Section = tuple[str, str]
HEADING_STYLE = "bold $accent"


def sections_content(sections: Iterable[Section]) -> Content:
    """Sections as one Content: an untitled first section's first line (the id) in bold, then
    each heading in the accent colour above its body, a blank line between sections."""
    parts: list[Content] = []
    for heading, body in sections:
        heading, body = plain(heading), plain(body)
        if heading:
            parts.append(Content.assemble((heading, HEADING_STYLE), "\n", Content(body)))
        else:
            first, sep, rest = body.partition("\n")
            parts.append(Content.assemble((first, "bold"), sep, Content(rest)))
    return Content("\n\n").join(parts)


class DescriptionView(VerticalScroll):
    """Setting `sections` re-renders the text and scrolls back to the top."""

    sections: reactive[tuple[Section, ...]] = reactive((), repaint=False)
    """No repaint of its own: the watcher's `Static.update` refreshes (and re-lays out) the text."""

    def __init__(self, sections: Iterable[Section] = (), **kwargs) -> None:
        super().__init__(**kwargs)
        self.set_reactive(DescriptionView.sections, tuple(sections))

    def compose(self) -> ComposeResult:
        yield Static(sections_content(self.sections), classes="description")

    def watch_sections(self, sections: tuple[Section, ...]) -> None:
        self.query_one(".description", Static).update(sections_content(sections))
        self.scroll_home(animate=False)

    def show(self, sections: Iterable[Section]) -> None:
        self.sections = tuple(sections)

    def plain_text(self) -> str:
        """Everything shown, as plain text (tests and copy-to-clipboard use it)."""
        return sections_content(self.sections).plain
