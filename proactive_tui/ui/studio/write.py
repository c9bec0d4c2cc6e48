"""Write-your-own: a form per family to write a new environment from scratch (issue 32).

A family's form (`Family.screen("write_form")`, a subclass of `WriteForm`) lays out its fields and turns
them into the family's own file (`draft`). Everything else is here and the same for every family:

- live validation, on every change: the draft goes through the family's own loader
  (`EnvironmentsPart.load_file`, in memory: exactly the checks a file in the user's environments folder
  gets) and then `EnvironmentsPart.validate_env`; every problem is one line naming the form's field (a
  list's line number too), never a JSON path the person never typed;
- a preview of the environment as the picker describes it (`envs.describe`);
- Save, disabled while anything is wrong, writes through the "What if" editor's path
  (`envs.what_if.save_as_new`, label `written`): the user's environments folder, the family's
  format, a new id nothing loaded has, the file read back and removed again if it does not load.
  Then the picker reads the folders again (`app.reload_environments`) and a notice names the id
  and the file;
- "Play it now", once saved, opens the session setup on the saved environment (`app.open_setup`).

Text typed into the form is data: the preview and every message show it literally (rich `Text`,
`Content`), so a persona holding `[bold]` stays those characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterable

from pydantic import ValidationError
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Input, Label, OptionList, Select, Static, TextArea
from textual.widgets.option_list import Option

from proactive_tui.envs.problems import LoadProblem, problems_from_validation
from proactive_tui.ui.screens.modal import Modal
from proactive_tui.ui.widgets.description_view import DescriptionView
from proactive_tui.ui.widgets.key_bar import KeyBar
from proactive_tui.ui.widgets.title_bar import TitleBar

WRITTEN = "written"
"""The label of a saved form's id (`<id>~written-<n>`, `envs.what_if.save_as_new`)."""

FORM_FILE = "the form"
"""How the in-memory check names the file it loads (never shown: problems are re-worded per field)."""

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Draft:
    """What the form would write: the file's place in an environments folder, its JSON, and the
    id the environment takes before saving adds `~written-<n>` (None: the one the loader gives)."""

    relative: str
    data: Any
    env_id: str | None = None


@dataclass
class Checked:
    """The form's environment as the family's loader reads it, or the problems, one line each."""

    env: Any | None
    problems: list[str] = field(default_factory=list)


def split_lines(text: str) -> list[tuple[int, str]]:
    """(line number from 1, stripped line) of every non-blank line: the forms' list fields."""
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def cells(line: str, count: int) -> list[str]:
    """A list line's `|`-separated cells, stripped, padded with "" to `count`."""
    parts = [part.strip() for part in line.split("|")]
    return parts + [""] * (count - len(parts))


def yes_no(value: str) -> bool | None:
    """A form's yes/no cell: True, False, or None when it is neither."""
    value = value.strip().lower()
    if value in ("yes", "y", "true", "1"):
        return True
    if value in ("no", "n", "false", "0", ""):
        return False
    return None


class WriteForm(Screen[None]):
    """The form's frame; a family subclass sets `family_name`, composes its fields in
    `compose_fields` (ids prefixed `f-`) and turns them into its file in `draft`."""

    HELP_TITLE = "Write a new environment"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    """Under 100 columns the validation and preview go below the fields (80 columns hold no two
    readable panes side by side)."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True,
                tooltip="Save as a new environment in your environments folder (when nothing is wrong)"),
        Binding("ctrl+o", "play", "Play it now", priority=True,
                tooltip="Open the session setup on the environment just saved"),
        Binding("escape", "close", "Close", tooltip="Back, without saving"),
    ]

    DEFAULT_CSS = """
    WriteForm #write-body { height: 1fr; }
    WriteForm #write-fields { width: 1fr; padding: 0 1; }
    WriteForm #write-side { width: 1fr; }
    WriteForm.-narrow #write-body { layout: vertical; }
    WriteForm.-narrow #write-fields { width: 1fr; height: 1fr; }
    WriteForm.-narrow #write-side { width: 1fr; height: 9; }
    WriteForm .write-label { margin-top: 1; text-style: bold; }
    WriteForm .write-hint { color: $text-muted; text-style: italic; }
    WriteForm Input, WriteForm Select { width: 1fr; }
    WriteForm TextArea { height: 4; width: 1fr; }
    WriteForm TextArea.write-short { height: 2; }
    WriteForm TextArea.write-tall { height: 8; }
    WriteForm #write-problems { width: 1fr; padding: 0 1; height: auto; max-height: 8; border: round $error; }
    WriteForm #write-problems.-valid { border: round $success; }
    WriteForm #write-preview { width: 1fr; height: 1fr; border: round $accent; padding: 0 1; }
    WriteForm #write-buttons { height: 1; padding: 0 1; }
    WriteForm #write-buttons Button { margin-right: 1; }
    WriteForm #write-status { height: auto; padding: 0 1; color: $text-muted; }
    """

    family_name: ClassVar[str]
    FIELD_LABELS: ClassVar[dict[str, str]] = {}
    """A problem's field path in the family's file (`environment.user_information`) -> the form's
    label for it; the longest matching prefix wins, the rest of the path is named after it."""
    RECORD_LINES: ClassVar[str | None] = None
    """The form field whose lines are the file's records (ProactiveBench's events), if any."""

    def __init__(self) -> None:
        super().__init__()
        from proactive_tui.core import registry

        self.family = registry.get(self.family_name)
        self.checked = Checked(None, ["not checked yet"])
        self.saved: Any = None
        """The `envs.what_if.Saved` of the last save, for "Play it now"."""

    # -- for the family's subclass ------------------------------------------------------------

    def compose_fields(self) -> ComposeResult:  # pragma: no cover - every family overrides it
        raise NotImplementedError
        yield

    def draft(self) -> tuple[Draft | None, list[str]]:  # pragma: no cover - every family overrides it
        """The file the fields make, or (None, problems) when a field cannot even be read (a list
        line without its cells); each problem one line naming the field."""
        raise NotImplementedError

    def record_problem_label(self, message: str) -> str:
        """The field a problem about the whole record (no field path) belongs to: the family's
        model-level rules name their parts in the message; a form may say which field it is."""
        return "Environment"

    # -- building blocks for the fields ---------------------------------------------------------

    @staticmethod
    def labelled(label: str, widget: Widget, hint: str = "") -> Iterable[Widget]:
        """A field: its label (the name every problem line uses), an optional hint, the widget."""
        yield Label(label, classes="write-label")
        if hint:
            yield Static(Text(hint), classes="write-hint")
        if hasattr(widget, "compact"):  # no borders: 80x24 holds a few fields, not two
            widget.compact = True
        yield widget

    @staticmethod
    def text_area(text: str, id: str, short: bool = False, tall: bool = False) -> TextArea:
        """`short`: a sentence or two; `tall`: a list of many lines (states, events)."""
        area = TextArea(text, id=id, soft_wrap=True, classes="write-short" if short else "write-tall" if tall else "")
        area.show_line_numbers = False
        return area

    def value(self, widget_id: str) -> str:
        """The text of a field (Input, TextArea or Select), "" for an empty Select."""
        widget = self.query_one(f"#{widget_id}")
        if isinstance(widget, TextArea):
            return widget.text
        if isinstance(widget, Select):
            return "" if widget.value is Select.BLANK else str(widget.value)
        return str(getattr(widget, "value", ""))

    def name_problem(self, label: str, name: str) -> str | None:
        if not NAME_PATTERN.match(name):
            return f"{label}: letters, digits, '.', '_' and '-' only, starting with a letter or digit (got {name!r})"
        return None

    # -- the frame ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="write-body"):
            with VerticalScroll(id="write-fields"):
                yield Static(Text.assemble((f"Write a new {self.family.title} environment", "bold"), "\n",
                                           ("Checked as you type; saved into your environments folder.", "dim")),
                             id="write-title")
                yield from self.compose_fields()
            with Vertical(id="write-side"):
                yield Static("", id="write-problems")
                yield DescriptionView(id="write-preview")
        yield Static("", id="write-status")
        with Horizontal(id="write-buttons"):
            yield Button("Save", variant="primary", id="write-save", disabled=True, compact=True)
            yield Button("Play it now", id="write-play", disabled=True, compact=True)
            yield Button("Close", id="write-close", compact=True)
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#write-preview", DescriptionView).border_title = "Preview"
        self.revalidate()
        first = next(iter(self.query("#write-fields Input, #write-fields TextArea, #write-fields Select")), None)
        if first is not None:
            first.focus()

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Select.Changed)
    def _changed(self, event: Any) -> None:
        if self.is_mounted:
            self.revalidate()

    def revalidate(self) -> Checked:
        """Check the fields now and show the outcome (problems or the preview, Save's state)."""
        self.checked = self.check()
        problems = self.query_one("#write-problems", Static)
        preview = self.query_one("#write-preview", DescriptionView)
        if self.checked.env is None:
            problems.update(Text("\n".join(self.checked.problems)))
            problems.set_class(False, "-valid")
            problems.border_title = f"{len(self.checked.problems)} problem(s): Save is off"
            if preview.sections:
                preview.border_title = "Preview (the last valid state)"
        else:
            problems.update(Text("Valid: Save writes it as a new environment."))
            problems.set_class(True, "-valid")
            problems.border_title = "Checks"
            preview.border_title = "Preview"
            from proactive_tui.envs.describe import describe

            preview.show(describe(self.checked.env))
        self.query_one("#write-save", Button).disabled = self.checked.env is None
        self.refresh_bindings()
        return self.checked

    def check(self) -> Checked:
        """The draft read by the family's loader, as a file of the user's folder would be, then
        `validate_env` on what it read."""
        try:
            draft, problems = self.draft()
        except ValueError as exc:  # a subclass's own reading of a field
            return Checked(None, [str(exc)])
        if draft is None:
            return Checked(None, problems or ["the form is incomplete"])
        from proactive_tui.core.family import FileCandidate

        root = Path("/") / "write-form"  # not read: the loader gets the data, the path gives the layout
        path = root / draft.relative
        candidate = FileCandidate(path=path, root=root, display=FORM_FILE,
                                  folders=frozenset(path.relative_to(root).parts[:-1]), family=self.family_name)
        try:
            envs, load_problems = self.family.environments.load_file(candidate, draft.data, {})
        except (ValueError, TypeError, KeyError) as exc:
            return Checked(None, [f"Environment: {exc}"])
        if load_problems:
            return Checked(None, [self.problem_line(p) for p in load_problems])
        if len(envs) != 1:
            return Checked(None, [f"Environment: the file reads as {len(envs)} environments, not one"])
        env = envs[0]
        updates: dict[str, Any] = {"source": "not saved yet"}
        if draft.env_id is not None:
            updates["id"] = draft.env_id
        env = env.model_copy(update=updates)
        try:
            env = self.family.environments.validate_env(env.model_dump(mode="json"))
        except ValidationError as exc:
            return Checked(None, [self.problem_line(p) for p in problems_from_validation(FORM_FILE, None, exc)])
        except ValueError as exc:
            return Checked(None, [f"Environment: {exc}"])
        return Checked(env)

    def problem_line(self, problem: LoadProblem) -> str:
        """One problem as the form names it: `<field label>[, line N][, part]: message`."""
        where: list[str] = []
        path = problem.field or ""
        if self.RECORD_LINES and problem.record is not None:
            where.append(f"{self.RECORD_LINES}, line {problem.record + 1}")
        key = max((k for k in self.FIELD_LABELS
                   if path == k or path.startswith(k + ".") or path.startswith(k + "[")), key=len, default=None)
        if key is not None:
            where.append(self.FIELD_LABELS[key])
            path = path[len(key):]
        elif not path and not where:
            where.append(self.record_problem_label(problem.message))
        index = re.match(r"^\[(\d+)\]", path)
        if index:
            where.append(f"line {int(index.group(1)) + 1}")
            path = path[index.end():]
        path = path.lstrip(".")
        if path:
            where.append(path)
        return f"{', '.join(where)}: {problem.message}"

    # -- actions ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # None, not False: the key stays in the key bar, dimmed, so a person sees it exists
        if action == "save":
            return True if self.checked.env is not None else None
        if action == "play":
            return True if self.saved is not None else None
        return True

    @on(Button.Pressed, "#write-save")
    def action_save(self) -> None:
        from proactive_tui.envs import what_if

        checked = self.revalidate()
        if checked.env is None:
            return
        environments = getattr(self.app, "environments", None)
        taken = {e.id for e in environments.environments} if environments is not None else set()
        try:
            saved = what_if.save_as_new(checked.env, taken=taken, label_prefix=WRITTEN)
        except what_if.EditProblem as exc:
            self._status(Text("\n".join(exc.lines), style="bold"))
            return
        except OSError as exc:
            self._status(Text(f"could not write the file: {exc}", style="bold"))
            return
        self.saved = saved
        self.app.notify(f"Saved as a new environment {saved.env.id}: {saved.path}", title="Write a new environment",
                        timeout=12, markup=False)
        self._status(Text.assemble("Saved as ", (saved.env.id, "bold"), f" ({saved.path}). ctrl+o plays it."))
        self.query_one("#write-play", Button).disabled = False
        from proactive_tui.envs.describe import describe

        self.query_one("#write-preview", DescriptionView).show(describe(saved.env))  # as the picker lists it now
        self.refresh_bindings()
        reload = getattr(self.app, "reload_environments", None)
        if reload is not None:
            reload()

    def _status(self, text: Text) -> None:
        self.query_one("#write-status", Static).update(text)

    @on(Button.Pressed, "#write-play")
    def action_play(self) -> None:
        """The session setup on the saved environment, in place of the form."""
        if self.saved is None:
            return
        env = self.saved.env
        self.dismiss()
        open_setup = getattr(self.app, "open_setup", None)
        if open_setup is not None:
            open_setup(env)

    @on(Button.Pressed, "#write-close")
    def action_close(self) -> None:
        self.dismiss()


def writable_families() -> list[Any]:
    """The families that have a write-your-own form, in the registry's order."""
    from proactive_tui.core import registry

    return [family for family in registry.families().values() if family.parts.write_form is not None]


class WriteChooser(Modal[str | None]):
    """Which family to write an environment for (the picker's `n`, the palette)."""

    HELP_TITLE = "Write a new environment: family"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    WriteChooser { align: center middle; }
    WriteChooser #write-choose { width: 60; max-width: 90%; height: auto; border: round $accent;
                                 background: $panel; padding: 0 1; }
    WriteChooser OptionList { height: auto; max-height: 12; }
    """

    def compose(self) -> ComposeResult:
        with Vertical(id="write-choose"):
            yield Static(Text("Write a new environment for which benchmark?"))
            yield OptionList(*[Option(Text(f"{family.title}  ({family.name})"), id=family.name)
                               for family in writable_families()], id="write-families")

    def on_mount(self) -> None:
        self.query_one("#write-choose").border_title = "Write a new environment"
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


def open_write_form(app: Any, family: str | None = None) -> None:
    """The form for `family`, or first the chooser of families that have one."""
    from proactive_tui.core import registry

    def chosen(name: str | None) -> None:
        if name is not None:
            form = registry.get(name).screen("write_form")
            if form is not None:
                app.push_screen(form())

    if family is None:
        app.push_screen(WriteChooser(), chosen)
    else:
        chosen(family)
