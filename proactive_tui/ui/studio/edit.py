"""The studio's edit of one step (`e`): the step's output as pretty JSON in a text area, checked
against the step's reply schema on every change, saved only when it validates.

Why the schema here too: `engine.edit_step` refuses what does not validate, but a person should
see why while typing (one line: the field and the problem), not after pressing save.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Static, TextArea

from proactive_tui.synth.engine import StepRecord, first_error
from proactive_tui.ui.screens.modal import Modal


def check(text: str, schema: type[BaseModel] | None) -> tuple[Any, str | None]:
    """(the value, None) when `text` is JSON the schema takes, else (None, one line why)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    if schema is None:
        return value, None
    try:
        schema.model_validate(value)
    except ValueError as exc:
        return None, f"{schema.__name__}: {first_error(exc)}"
    return value, None


class EditStepModal(Modal[Any]):
    """Dismisses with the new output (a JSON value the schema takes), or None (cancelled)."""

    HELP_TITLE = "Edit a step"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", tooltip="Keep this output as a person's edit; the later stages are made again"),
        Binding("escape", "cancel", "Cancel", tooltip="Leave the step as it is"),
    ]
    DEFAULT_CSS = """
    EditStepModal { align: center middle; }
    #edit-box { width: 90%; height: 90%; border: round $accent; background: $panel; padding: 0 1; }
    #edit-text { height: 1fr; }
    #edit-check { height: auto; }
    #edit-check.-bad { color: $error; }
    #edit-check.-good { color: $success; }
    #edit-buttons { height: auto; align-horizontal: right; }
    #edit-buttons Button { margin-left: 1; }
    """

    def __init__(self, item: str, step: str, record: StepRecord, schema: type[BaseModel] | None) -> None:
        super().__init__()
        self.item = item
        self.step = step
        self.record = record
        self.schema = schema
        self.value: Any = record.output

    def compose(self) -> ComposeResult:
        with Vertical(id="edit-box") as box:
            box.border_title = Content(f"edit {self.item} / {self.step} ({self.record.schema_name})")
            box.border_subtitle = "ctrl+s saves · esc cancels"
            yield Static(Text(f"{self.record.stage} · {self.record.role} · {self.record.model}", style="dim"))
            yield TextArea(json.dumps(self.record.output, indent=1, ensure_ascii=False, sort_keys=True),
                           language=None, id="edit-text", soft_wrap=True, show_line_numbers=False)
            yield Static(id="edit-check")
            with Horizontal(id="edit-buttons"):
                yield Button("Cancel", id="edit-cancel")
                yield Button("Save and re-run", id="edit-save", variant="primary")

    def on_mount(self) -> None:
        self._check()
        self.query_one(TextArea).focus()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._check()

    def _check(self) -> bool:
        value, problem = check(self.query_one(TextArea).text, self.schema)
        line = self.query_one("#edit-check", Static)
        line.set_classes("-bad" if problem else "-good")
        line.update(Text(problem or "valid: save keeps it as a person's edit and makes the later stages again"))
        self.query_one("#edit-save", Button).disabled = problem is not None
        if problem is None:
            self.value = value
        return problem is None

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "edit-save":
            self.action_save()
        else:
            self.action_cancel()

    def action_save(self) -> None:
        if self._check():
            self.dismiss(self.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class TierModal(Modal[str | None]):
    """Which tier a person keeps an item under (the pipeline gave it none: it was rejected)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", tooltip="Keep nothing")]
    DEFAULT_CSS = """
    TierModal { align: center middle; }
    #tier-box { width: auto; min-width: 40; height: auto; border: round $accent; background: $panel; padding: 0 1; }
    #tier-box Button { width: 100%; margin-top: 1; }
    """

    def __init__(self, item: str, tiers: tuple[str, ...]) -> None:
        super().__init__()
        self.item = item
        self.tiers = tiers

    def compose(self) -> ComposeResult:
        with Vertical(id="tier-box") as box:
            box.border_title = Content(f"keep {self.item} as")
            yield Static(Text("The pipeline rejected it; pick the tier you keep it under."))
            for k, tier in enumerate(self.tiers):
                button = Button(Text(tier), id=f"tier-{k}")
                button.tier = tier  # type: ignore[attr-defined]
                yield button

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(getattr(event.button, "tier", None))

    def action_cancel(self) -> None:
        self.dismiss(None)
