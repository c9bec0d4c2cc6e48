"""A horizontal bar chart: one bar per row (a label, a bar, the value as the table prints it).

Why our own and not textual-plotext: one horizontal bar per table row is all the results screen
needs, and a dependency that draws plots in a terminal weighs far more than forty lines. Bars are
drawn with Unicode eighth blocks (a cell split into 8), so two values 1/8 of a cell apart still
differ; colours are theme variables, so dark and light themes both read. Labels and values are
data (model names come from a user's config): they go in as `Content` text, never parsed as markup.
"""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

EIGHTHS = " ▏▎▍▌▋▊▉"
FULL = "█"
BAR_STYLE = "$primary"
LABEL_STYLE = "$foreground"
VALUE_STYLE = "$text-muted"


def bar(fraction: float, width: int) -> str:
    """A bar `fraction` (0..1) of `width` cells long, to the nearest eighth of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return FULL * full + (EIGHTHS[part] if part else "")


class BarChart(Widget):
    """`show(title, rows)`; each row is (label, value or None, the value's text)."""

    DEFAULT_CSS = """
    BarChart { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[tuple[str, float | None, str]] = []
        self.empty_text = "nothing to chart"

    def show(self, title: str, rows: list[tuple[str, float | None, str]], empty_text: str = "nothing to chart") -> None:
        self.border_title = Content(title)  # a column label from the report: data, not markup
        self.rows = rows
        self.empty_text = empty_text
        self.refresh(layout=True)

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, len(self.rows))

    def render(self) -> Content:
        if not self.rows:
            return Content.styled(self.empty_text, VALUE_STYLE)
        width = max(self.content_region.width, 12)
        labels = [label for label, _, _ in self.rows]
        label_w = min(max(len(x) for x in labels), max(6, width // 3))
        value_w = max(len(text) for _, _, text in self.rows)
        room = max(1, width - label_w - value_w - 2)
        top = max([v for _, v, _ in self.rows if v is not None and v > 0] or [1.0])
        lines = []
        for label, value, text in self.rows:
            shown = label if len(label) <= label_w else label[:label_w - 1] + "…"
            drawn = bar(value / top, room) if value is not None else ""
            lines.append(Content.assemble((shown.ljust(label_w) + " ", LABEL_STYLE),
                                          (drawn.ljust(room) + " ", BAR_STYLE), (text.rjust(value_w), VALUE_STYLE)))
        return Content("\n").join(lines)
