"""Export one session: choose a format (from the export registry, those that take the session's
family) and where to write it; the files written are reported in a notification.

Used by the history screen (`x`) and the session screen's palette ("Export session…").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, OptionList
from textual.widgets.option_list import Option

from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.modal import Modal

# The file a single-record export goes to, by format; formats not listed write into a folder.


def exports_dir() -> Path:
    from proactive_tui.paths import data_dir

    return data_dir() / "exports"


def default_target(record: Any, fmt: str, exporter: Any = None) -> Path:
    """`<data>/exports/<session id>.<ext>`, or a folder `<data>/exports/<format>-<session id>`."""
    suffix = getattr(exporter, "suffix", None)
    if suffix and not getattr(exporter, "out_is_dir", False):
        return exports_dir() / f"{record.id}{suffix}"
    return exports_dir() / f"{fmt}-{record.id}"


def formats_for(record: Any) -> list[Any]:
    from proactive_tui.export import load_formats

    order = {name: k for k, name in enumerate(("run-record", "markdown", "html", "svg"))}
    found = [e for e in load_formats().values() if e.accepts(record)]
    return sorted(found, key=lambda e: order.get(e.name, len(order)))  # stable: family formats after


class ExportModal(Modal[list[Path] | None]):
    """Dismisses with the paths written, or None when cancelled (or on an error, which it notifies)."""

    HELP_TITLE = "Export"
    CSS_PATH = Path(__file__).with_name("history.tcss")
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "export", "Export", priority=True),
    ]

    def __init__(self, record: Any) -> None:
        super().__init__()
        self.record = record
        self.exporters = formats_for(record)
        self.fmt = self.exporters[0].name if self.exporters else ""
        self._default_shown = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="export-box") as box:
            box.border_title = f"Export session {self.record.id[:8]}"
            box.border_subtitle = "ctrl+s exports · esc cancels"
            yield Label("Format", classes="export-label")
            yield OptionList(*[Option(f"{e.name}  ·  {plain(e.description)}", id=e.name) for e in self.exporters],
                             id="export-formats")
            yield Label("Write to (a file or a folder, as the format says)", classes="export-label")
            self._default_shown = str(self._default())
            yield Input(self._default_shown, id="export-path")
            with Horizontal(id="export-buttons"):
                yield Button("Cancel", id="export-cancel")
                yield Button("Export", id="export-go", variant="primary")

    def _default(self) -> Path:
        from proactive_tui.export import registry

        return default_target(self.record, self.fmt, registry.EXPORTERS.get(self.fmt))

    def on_mount(self) -> None:
        formats = self.query_one(OptionList)
        if self.exporters:
            formats.highlighted = 0
        formats.focus()

    def select_format(self, name: str) -> None:
        """Choose a format (as highlighting it in the list does)."""
        formats = self.query_one(OptionList)
        formats.highlighted = formats.get_option_index(name)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.fmt = event.option.id or self.fmt
        path = self.query_one("#export-path", Input)
        if path.value.strip() in ("", self._default_shown):  # a path the person typed stays
            self._default_shown = str(self._default())
            path.value = self._default_shown

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#export-path", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_export()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "export-go":
            self.action_export()
        else:
            self.action_cancel()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_export(self) -> None:
        from proactive_tui.export.registry import ExportError, export

        target = self.query_one("#export-path", Input).value.strip()
        if not self.fmt or not target:
            self.notify("Choose a format and a path first", severity="warning", timeout=4)
            return
        try:
            written = export([self.record], self.fmt, Path(target).expanduser())
        except (ExportError, OSError, ValueError) as exc:
            self.notify(plain(str(exc))[:400], title="Export failed", severity="error", timeout=12, markup=False)
            return
        if written:
            self.notify("Exported:\n" + "\n".join(map(str, written)), title=self.fmt, timeout=12, markup=False)
        else:
            self.notify(f"Nothing to export in the {self.fmt} format for this session", severity="warning",
                        timeout=8, markup=False)
        self.dismiss(written)
