"""A horizontal bar chart: one bar per row (a label, a bar, the value as the table prints it).

Why our own and not textual-plotext: one horizontal bar per table row is all the results screen
needs, and a dependency that draws plots in a terminal weighs far more than forty lines. Bars are
drawn with Unicode eighth blocks (a cell split into 8), so two values 1/8 of a cell apart still
differ; colours are theme variables, so dark and light themes both read. Labels and values are
data (model names come from a user's config): they go in as `Content` text, never parsed as markup.

Why it scrolls: a table can have more rows than the chart has lines (at 80x24 it shows five), so
the bars sit in a scrolling container that takes focus (Tab) and scrolls with the arrow keys,
PgUp/PgDn, Home and End; the bar of the row under the table's cursor is marked and scrolled into
view, and the border says which bars are in view.
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Region
from textual.widget import Widget

EIGHTHS = " ▏▎▍▌▋▊▉"
FULL = "█"
BAR_STYLE = "$primary"
LABEL_STYLE = "$foreground"
CURRENT_STYLE = "bold $accent"
VALUE_STYLE = "$text-muted"


def bar(fraction: float, width: int) -> str:
    """A bar `fraction` (0..1) of `width` cells long, to the nearest eighth of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return FULL * full + (EIGHTHS[part] if part else "")


class Bars(Widget):
    """The bars themselves, one line each; the chart around them scrolls."""

    DEFAULT_CSS = """
    Bars { height: auto; width: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, float | None, str]] = []
        self.current: int | None = None
        self.empty_text = "nothing to chart"

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, len(self.rows))

    def render(self) -> Content:
        if not self.rows:
            return Content.styled(self.empty_text, VALUE_STYLE)
        width = max(self.content_region.width, 12)
        labels = short_labels([label for label, _, _ in self.rows])
        label_w = min(max(len(x) for x in labels), max(6, width // 3))
        value_w = max(len(text) for _, _, text in self.rows)
        room = max(1, width - label_w - value_w - 2)
        top = max([v for _, v, _ in self.rows if v is not None and v > 0] or [1.0])
        lines = []
        for index, ((_, value, text), label) in enumerate(zip(self.rows, labels)):
            shown = fit_label(label, label_w)
            drawn = bar(value / top, room) if value is not None else ""
            style = CURRENT_STYLE if index == self.current else LABEL_STYLE
            lines.append(Content.assemble((shown.ljust(label_w) + " ", style),
                                          (drawn.ljust(room) + " ", BAR_STYLE), (text.rjust(value_w), VALUE_STYLE)))
        return Content("\n").join(lines)


def short_labels(labels: list[str]) -> list[str]:
    """The labels without the prefix every one of them shares up to a `/` (`openai/a · low` and
    `openai/b · low` become `a · low` and `b · low`): what tells the bars apart is what is left,
    and a label too long for its column loses its start, not the level or split at its end."""
    if len(labels) < 2:
        return labels
    common = labels[0]
    for label in labels[1:]:
        while not label.startswith(common):
            common = common[:-1]
    cut = common.rfind("/") + 1
    return [label[cut:] or label for label in labels] if cut else labels


def fit_label(label: str, width: int) -> str:
    """`label` in `width` cells: its ` · ` parts (model, then group) shortened longest first, each
    keeping its start, so a short model name and a long group both stay recognisable."""
    if len(label) <= width:
        return label
    parts = label.split(" · ")
    if len(parts) == 1 or width < 4 * len(parts):
        return label[:width - 1] + "…"
    while len(" · ".join(parts)) > width:
        i = max(range(len(parts)), key=lambda k: len(parts[k]))
        body = parts[i].removesuffix("…")
        if len(body) <= 1:
            return label[:width - 1] + "…"
        parts[i] = body[:-1] + "…"
    return " · ".join(parts)


class BarChart(VerticalScroll, can_focus=True):
    """`show(title, rows, current=i)`; each row is (label, value or None, the value's text);
    `current` is the row whose bar is marked and kept in view."""

    def __init__(self, *, id: str | None = None, scroll_hint: str = "↑↓ scroll") -> None:
        super().__init__(id=id)
        self.bars = Bars()
        self.scroll_hint = scroll_hint
        """Said in the border when bars are out of view: how to reach them (the screen's key)."""

    def compose(self):
        yield self.bars

    @property
    def rows(self) -> list[tuple[str, float | None, str]]:
        return self.bars.rows

    def show(self, title: str, rows: list[tuple[str, float | None, str]], empty_text: str = "nothing to chart",
             current: int | None = None) -> None:
        self.border_title = Content(title)  # a column label from the report: data, not markup
        self.bars.rows = rows
        self.bars.current = current if current is not None and 0 <= current < len(rows) else None
        self.bars.empty_text = empty_text
        self.bars.refresh(layout=True)
        self.call_after_refresh(self._keep_current_in_view)

    def _keep_current_in_view(self) -> None:
        if self.bars.current is not None:
            self.scroll_to_region(Region(0, self.bars.current, 1, 1), animate=False, immediate=True)
        self._say_what_is_in_view()

    def in_view(self) -> tuple[int, int]:
        """The first and last bar in view, counted from 1 (0, 0 when there are none)."""
        if not self.rows:
            return 0, 0
        first = int(self.scroll_y)
        last = min(len(self.rows), first + max(1, self.scrollable_content_region.height))
        return first + 1, last

    def _say_what_is_in_view(self) -> None:
        first, last = self.in_view()
        many = len(self.rows) > last - first + 1
        self.border_subtitle = Content(f"bars {first}-{last} of {len(self.rows)} · {self.scroll_hint}") if many else Content("")

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._say_what_is_in_view()

    def on_resize(self) -> None:
        self.call_after_refresh(self._say_what_is_in_view)
