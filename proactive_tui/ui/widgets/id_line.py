"""One line that names an environment by its id, cut in the middle when the line is too narrow.

An id is not prose: wrapped, ProactBench's 78-character ids left a lone `f` on a second line of
the setup form at 80 columns. Cut at the end, they would lose what tells them apart (the record's
hash) and the `~whatif` mark of an edited environment; so the start (family, dialogue, style) and
the last `TAIL` characters stay, with `…` between. The whole id stays at hand: the line's tooltip,
and selecting the line copies the whole id, not the cut one.
"""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.text import Text
from textual.selection import Selection
from textual.widget import Widget

from proactive_tui.textsafe import plain

TAIL = 12
"""Characters kept from the id's end: a short hash (git's seven and then some) plus room for a
`~whatif-2` suffix."""


def cut_middle(text: str, width: int, tail: int = TAIL) -> str:
    """`text` in at most `width` cells: whole when it fits, else its start, `…`, and its last
    `tail` cells (fewer when the width leaves the start less than the end)."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"[:max(width, 0)]
    keep = width - 1
    end = min(tail, keep // 2)
    start = keep - end
    tail_text = set_cell_size(text[::-1], end)[::-1].lstrip() if end else ""
    head = set_cell_size(text, start).rstrip()
    return head + "…" + tail_text


class IdLine(Widget):
    """`label` (bold) then the id, on one line whatever the width (see the module)."""

    def __init__(self, label: str, env_id: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.label = label
        self.env_id = env_id
        self.tooltip = Text(plain(env_id))  # data: never read as markup

    def set_id(self, env_id: str) -> None:
        self.env_id = env_id
        self.tooltip = Text(plain(env_id))
        self.refresh()

    @property
    def cut(self) -> bool:
        """Whether the id is shown cut at the current width."""
        return cell_len(self.label) + cell_len(plain(self.env_id)) > self.size.width

    def render(self) -> Text:
        room = max(self.size.width - cell_len(self.label), 0)
        return Text.assemble((self.label, "bold"), cut_middle(plain(self.env_id), room),
                             no_wrap=True, overflow="ignore", end="")

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """A selection on a cut id copies the whole id: half a hash finds nothing."""
        if self.cut:
            return self.env_id, "\n"
        return super().get_selection(selection)
