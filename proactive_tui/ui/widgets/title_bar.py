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
        width = self.content_size.width
        if sub_title:
            fits = cell_len(title + self.SEPARATOR + sub_title) <= width
            parts = [*parts, self.SEPARATOR, (sub_title, "$text-muted")] if fits or not width \
                else [(middle_cut(sub_title, width), "$text-muted")]
        self.update(Content.assemble(*parts), layout=False)  # one line of fixed size (app.tcss): no layout pass


def middle_cut(text: str, width: int) -> str:
    """`text` in `width` cells: its longest ` · ` part loses its middle (a ProactBench id of 80
    characters would otherwise push the seats' models off the line). When that part is too short
    to cut, the text stays whole and the bar's ellipsis ends it."""
    over = cell_len(text) - width
    if over <= 0:
        return text
    parts = text.split(" · ")
    longest = max(range(len(parts)), key=lambda i: cell_len(parts[i]))
    part = parts[longest]
    keep = len(part) - over - 1  # the ellipsis takes a cell
    if keep < 8:
        return text
    parts[longest] = part[:keep - keep // 2] + "…" + part[len(part) - keep // 2:]
    return " · ".join(parts)
