"""F1 / `?`: every key that works where you are, built from the bindings themselves.

Built from the screen's (and its focused widget's) `BINDINGS` and the app's, hidden ones
included, so the list can never drift from what the keys really do.
"""

from __future__ import annotations

from typing import Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from proactive_tui.ui.screens.modal import Modal
from proactive_tui.ui.widgets.key_bar import KeyBar

KeyRow = tuple[str, str]


def binding_rows(app, bindings: Iterable[BindingType], shown_only: bool = False) -> list[KeyRow]:
    """(key as displayed, text) for each binding that has a description; the text is the
    binding's tooltip when it has one (the footer keeps the short description). Keys bound to
    the same action are merged ("f1, ?")."""
    rows: dict[tuple[str, str], list[str]] = {}
    for binding in Binding.make_bindings(bindings):
        if not binding.description or binding.system or (shown_only and not binding.show):
            continue
        text = binding.tooltip or binding.description
        rows.setdefault((binding.action, text), []).append(app.get_key_display(binding))
    return [(", ".join(dict.fromkeys(keys)), description) for (_, description), keys in rows.items()]


def collect_groups(app, screen) -> list[tuple[str, list[KeyRow]]]:
    """Key groups for the help modal: focused widget, then the screen, then the app.

    Only the focused widget's footer keys are listed: a text input has two dozen editing keys
    every terminal user already knows, and listing them would bury the ones that matter."""
    groups: list[tuple[str, list[KeyRow]]] = []
    focused = screen.focused
    if focused is not None:
        groups.append((_title(focused), binding_rows(app, focused.BINDINGS, shown_only=True)))
    groups.append((_title(screen), binding_rows(app, screen.BINDINGS)))
    app_bindings = list(app.BINDINGS)
    if app.ENABLE_COMMAND_PALETTE:
        app_bindings.append(Binding(app.COMMAND_PALETTE_BINDING, "command_palette", "Command palette: themes, keys, quit"))
    groups.append(("Everywhere", binding_rows(app, app_bindings)))
    return [(title, rows) for title, rows in groups if rows]


def _title(node) -> str:
    """A widget or screen may name itself for help with `HELP_TITLE`; else its class name."""
    return getattr(node, "HELP_TITLE", None) or type(node).__name__


def rows_text(rows: list[KeyRow]) -> Text:
    width = max(len(key) for key, _ in rows)
    text = Text()
    for i, (key, description) in enumerate(rows):
        if i:
            text.append("\n")
        text.append(key.ljust(width + 2), style="bold")
        text.append(description)
    return text


class HelpScreen(Modal[None]):
    """A modal list of keys; Escape, q, F1 or ? closes it."""

    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("q,f1,question_mark", "dismiss", "Close", show=False),
    ]

    def __init__(self, groups: list[tuple[str, list[KeyRow]]], **kwargs) -> None:
        super().__init__(**kwargs)
        self.groups = groups

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help") as box:
            box.border_title = "Keys"
            box.border_subtitle = "Escape closes"
            for title, rows in self.groups:
                yield Static(Text(title), classes="section-heading")
                yield Static(rows_text(rows), classes="section-body")
        yield KeyBar()
