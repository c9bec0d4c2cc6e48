"""The top line: app title and subtitle (how many environments loaded).

A one-line Static instead of Textual's `Header`, which costs more at start-up (icon, clock and
title widgets) for nothing this app uses; see `key_bar.py` for the start-up budget.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content
from textual.widgets import Static


class TitleBar(Static):
    """Follows `App.title` and `App.sub_title`. When both do not fit the line, the subtitle alone:
    on a session screen it names the environment and the seats' models, which a person needs more
    than the app's name (80 columns held "... · user:" and no more)."""

    SEPARATOR = "  —  "

    def on_mount(self) -> None:
        self.watch(self.app, "title", self._refresh_title)
        self.watch(self.app, "sub_title", self._refresh_title)

    def on_resize(self) -> None:
        self._refresh_title()

    def _refresh_title(self, _value: str = "") -> None:
        title, sub_title = self.app.title, self.app.sub_title
        parts: list[tuple[str, str] | str] = [(title, "bold")]
        if sub_title:
            fits = cell_len(title + self.SEPARATOR + sub_title) <= self.content_size.width
            parts = [*parts, self.SEPARATOR, (sub_title, "$text-muted")] if fits or not self.content_size.width \
                else [(sub_title, "$text-muted")]
        self.update(Content.assemble(*parts), layout=False)  # one line of fixed size (app.tcss): no layout pass
