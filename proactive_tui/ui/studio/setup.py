"""The studio's setup: a family, what to make (domains, templates, scenes), a model per pipeline
role with where its key comes from, n, seed, the folder; or an existing run folder to open.

Why it builds a command line: the studio's run must be the headless command's run, folder for
folder (a studio run resumes headless and the reverse). So the form becomes the argv of
`proactive-tui synth <family> ...`, parsed by the real CLI parser and set up by
`synth.setup.prepare`, exactly as the command does; an existing folder is reopened from its
command.json with resume, as `synth resume DIR` does. Any problem is one line on the form, and
nothing is started.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, DataTable, Input, Label, Select, SelectionList, Static

from proactive_tui.ui.widgets.key_bar import KeyBar


def synth_families() -> dict[str, Any]:
    """Families with a `synth` pipeline (the ones `proactive-tui synth` lists)."""
    from proactive_tui.synth.setup import synth_families as families

    return families()


def generator(family: str) -> Any:
    """The family's `generate` part (its `synth` pipeline)."""
    from proactive_tui.synth.setup import generator as part

    return part(family)


def default_folder(family: str, now: _dt.datetime | None = None) -> Path:
    from proactive_tui import paths

    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    return paths.data_dir() / "synth" / f"{family}-{stamp}"


class RunFolder:
    """An existing run folder under the data folder's `synth/`: what the list shows of it."""

    def __init__(self, path: Path, family: str, planned: int, done: int, kept: int) -> None:
        self.path, self.family, self.planned, self.done, self.kept = path, family, planned, done, kept


def run_folders(base: Path | None = None) -> list[RunFolder]:
    """Every run folder under `base` (default: data folder / synth), newest name first; a folder
    whose manifest does not read is left out (it is not a run the studio can open)."""
    from proactive_tui import paths
    from proactive_tui.synth import engine

    base = base or paths.data_dir() / "synth"
    out = []
    for manifest_path in sorted(base.glob(f"*/{engine.MANIFEST}"), reverse=True) if base.is_dir() else []:
        folder = manifest_path.parent
        try:
            manifest = engine.read_manifest(folder)
        except engine.SynthError:
            continue
        done = kept = 0
        planned = set(manifest.planned)
        for result in sorted((folder / engine.ITEMS).glob(f"*/{engine.RESULT}")):
            try:
                data = json.loads(result.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if data.get("item") in planned:
                done += 1
                kept += data.get("status") == "kept"
        out.append(RunFolder(folder, manifest.family, len(manifest.planned), done, kept))
    return out


def parse_argv(argv: list[str]) -> argparse.Namespace:
    """`argv` parsed by the definitions the CLI's `synth` command uses (`synth.arguments`); a
    refusal becomes a ValueError with argparse's line."""
    from proactive_tui.synth.arguments import parse_family_command

    return parse_family_command(argv)


def key_label(model: str, api_base: str | None) -> Text:
    """Where a role's key comes from, worded as the session setup words it (`key_note`); an
    emptied field seats the role as `synth` would (config, then the seat defaults)."""
    from proactive_tui.ui.screens.setup_base import key_note

    if not model.strip():
        return Text("empty: the default `synth` gives this role", style="dim")
    return key_note(model, api_base)


class StudioSetupScreen(Screen[None]):
    """Start a generation in the studio, or open a run folder (resume it, or see its summary)."""

    HELP_TITLE = "Studio setup"
    BINDINGS = [
        Binding("ctrl+s", "start", "Start", tooltip="Start the run in the studio (the form as a `synth` command)"),
        Binding("escape", "back", "Back", tooltip="Back to the picker"),
    ]
    DEFAULT_CSS = """
    StudioSetupScreen { layout: vertical; }
    #studio-setup-form { height: 1fr; padding: 0 1; }
    .setup-row { height: auto; margin-bottom: 1; }
    .setup-label { width: 16; }
    .setup-field { width: 1fr; }
    .role-row { height: auto; }
    .role-name { width: 16; }
    .role-model { width: 2fr; }
    .role-key { width: 3fr; height: auto; padding: 0 0 0 1; }
    #setup-targets { height: auto; max-height: 8; width: 1fr; }
    #setup-numbers Input { width: 1fr; margin-right: 1; }
    #setup-error { color: $error; height: auto; }
    #setup-extra { color: $text-muted; height: auto; }
    #setup-roles { height: auto; }
    .setup-row > Vertical { height: auto; }
    #setup-target-hint { color: $text-muted; height: auto; }
    #studio-setup-buttons { height: auto; margin-bottom: 1; align-horizontal: left; }
    #studio-setup-buttons Button { margin-right: 1; }
    #setup-runs { height: auto; max-height: 10; }
    .setup-heading { text-style: bold; color: $accent; margin-top: 1; }
    """

    def __init__(self, family: str | None = None) -> None:
        super().__init__()
        self.families = synth_families()
        self.family = family if family in self.families else next(iter(self.families), "")
        self.extra_args: list[str] = []
        self.folders: list[RunFolder] = []

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="studio-setup-form"):
            yield Static("Studio: generate environments", classes="setup-heading")
            yield Static(id="setup-error")
            with Horizontal(classes="setup-row"):
                yield Label("Family", classes="setup-label")
                yield Select([(Text(f.title), name) for name, f in self.families.items()], value=self.family,
                             allow_blank=False, id="setup-family", classes="setup-field", compact=True)
            with Horizontal(classes="setup-row"):
                yield Label("", id="setup-target-label", classes="setup-label")
                with Vertical(classes="setup-field"):
                    yield SelectionList[str](id="setup-targets")
                    yield Static(id="setup-target-hint")
            yield Static("Models per role", classes="setup-heading")
            yield Vertical(id="setup-roles")
            with Horizontal(classes="setup-row"):
                yield Label("API base", classes="setup-label")
                yield Input(placeholder="optional: an OpenAI-compatible URL for every role", id="setup-api-base", compact=True,
                            classes="setup-field")
            with Horizontal(classes="setup-row", id="setup-numbers"):
                yield Label("n, seed, calls", classes="setup-label")
                yield Input("1", id="setup-n", compact=True, type="integer", tooltip="items to try per domain / template / scene")
                yield Input("0", id="setup-seed", compact=True, type="integer", tooltip="the run's seed")
                yield Input("4", id="setup-concurrency", compact=True, type="integer", tooltip="model calls at once")
            with Horizontal(classes="setup-row"):
                yield Label("Folder", classes="setup-label")
                yield Input(str(default_folder(self.family)) if self.family else "", id="setup-folder", compact=True,
                            classes="setup-field")
            yield Static(id="setup-extra")
            with Horizontal(id="studio-setup-buttons"):
                yield Button("Start", id="setup-start", variant="primary")
                yield Button("", id="setup-tool")
            yield Static("Run folders (open one to resume it or see its summary)", classes="setup-heading")
            yield DataTable(id="setup-runs", cursor_type="row", zebra_stripes=True)
            with Horizontal(classes="setup-row"):
                yield Input(placeholder="a run folder (default: the row under the cursor)", id="setup-open-folder", compact=True,
                            classes="setup-field")
            with Horizontal(id="setup-open-buttons", classes="setup-row"):
                yield Button("Open", id="setup-open")
                yield Button("Summary", id="setup-summary")
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one("#setup-runs", DataTable)
        table.add_columns("folder", "family", "planned", "done", "kept")
        self.refresh_folders()
        self._family_changed()
        # the first field a person sets; else the form's scroll container takes focus and
        # enter does nothing
        self.query_one("#setup-family", Select).focus()

    def refresh_folders(self) -> None:
        table = self.query_one("#setup-runs", DataTable)
        table.clear()
        self.folders = run_folders()
        for k, run in enumerate(self.folders):
            table.add_row(Text(run.path.name), Text(run.family), str(run.planned), str(run.done), str(run.kept),
                          key=str(k))

    # -- the family's fields --------------------------------------------------------------

    @on(Select.Changed, "#setup-family")
    def _family_select(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.family:
            old_default = str(default_folder(self.family).parent / self.family)
            self.family = event.value
            self.extra_args = []
            folder = self.query_one("#setup-folder", Input)
            if folder.value.startswith(old_default) or not folder.value:
                folder.value = str(default_folder(self.family))
            self._family_changed()

    def _family_changed(self) -> None:
        from proactive_tui.config import ConfigError, load_config
        from proactive_tui.synth.setup import resolve_roles
        from proactive_tui.ui.studio.screen import view_class

        family = self.families.get(self.family)
        if family is None:
            self._error("no family has a synth pipeline")
            return
        flag, label, values = generator(self.family).targets()
        self.query_one("#setup-target-label", Label).update(Content(label or "Targets"))
        targets = self.query_one("#setup-targets", SelectionList)
        targets.clear_options()
        targets.add_options([(Text(v), v) for v in values])
        self.query_one("#setup-target-hint", Static).update(
            Text(f"none picked: every {label.lower()}; space picks" if label else ""))
        pipeline = self._pipeline()
        roles_box = self.query_one("#setup-roles", Vertical)
        roles_box.remove_children()
        if pipeline is None:
            return
        names = [r.name for r in pipeline.roles]
        try:
            config = load_config()
            defaults = resolve_roles(names, [], None, config.roles, config.synth)
        except (ConfigError, ValueError) as exc:
            self._error(str(exc).splitlines()[0])
            defaults = {}
        rows = []
        for spec in pipeline.roles:
            model = defaults[spec.name].model if spec.name in defaults else ""
            row = Horizontal(Label(Content(spec.name), classes="role-name"),
                             Input(model, id=f"role-{spec.name}", classes="role-model", tooltip=spec.purpose, compact=True),
                             Static(key_label(model, None), id=f"key-{spec.name}", classes="role-key"),
                             classes="role-row")
            rows.append(row)
        roles_box.mount_all(rows)
        tool = view_class(self.family).setup_tool()
        button = self.query_one("#setup-tool", Button)
        button.display = tool is not None
        if tool is not None:
            button.label = Text(tool[0])
        self._show_extra()

    def _pipeline(self) -> Any:
        """The family's pipeline with its default options (for its roles; nothing is run)."""
        try:
            args = parse_argv(["synth", self.family, "--n", "1", "--out", "unused"])
            return generator(self.family).pipeline(generator(self.family).options(args))
        except ValueError as exc:
            self._error(str(exc).splitlines()[0])
            return None

    @on(Input.Changed, ".role-model")
    @on(Input.Changed, "#setup-api-base")
    def _models_changed(self, event: Input.Changed) -> None:
        api_base = self.query_one("#setup-api-base", Input).value.strip() or None
        for row_input in self.query(".role-model").results(Input):
            name = (row_input.id or "").removeprefix("role-")
            for label in self.query(f"#key-{name}").results(Static):
                label.update(key_label(row_input.value, api_base))

    def _show_extra(self) -> None:
        extra = self.query_one("#setup-extra", Static)
        extra.update(Text("also: " + " ".join(self.extra_args)) if self.extra_args else Text(""))

    def _error(self, message: str) -> None:
        self.query_one("#setup-error", Static).update(Text(message))

    # -- the command ----------------------------------------------------------------------

    def argv(self) -> list[str]:
        """The form as `proactive-tui synth <family> ...`."""
        flag = generator(self.family).targets()[0]
        values = self.query_one("#setup-targets", SelectionList).selected
        out = ["synth", self.family, "--n", self.query_one("#setup-n", Input).value.strip() or "1",
               "--seed", self.query_one("#setup-seed", Input).value.strip() or "0",
               "--out", self.query_one("#setup-folder", Input).value.strip(),
               "--concurrency", self.query_one("#setup-concurrency", Input).value.strip() or "4"]
        api_base = self.query_one("#setup-api-base", Input).value.strip()
        if api_base:
            out += ["--api-base", api_base]
        for row_input in self.query(".role-model").results(Input):
            model = row_input.value.strip()
            if model:
                out += ["--role", f"{(row_input.id or '').removeprefix('role-')}={model}"]
        if flag:
            for value in values:
                out += [flag, value]
        return out + list(self.extra_args)

    def action_start(self) -> None:
        from proactive_tui.synth import setup

        self._error("")
        if not self.query_one("#setup-folder", Input).value.strip():
            self._error("Folder: give a folder for the run")
            return
        try:
            args = parse_argv(self.argv())
            from proactive_tui.llm import model_flags

            model_flags.apply(args)
            prepared = setup.prepare(args)
        except ValueError as exc:
            self._error(str(exc).splitlines()[0])
            return
        except setup.SetupError as exc:
            self._error(exc.message)
            return
        self._open_studio(prepared, args.concurrency)

    def _open_studio(self, prepared: Any, concurrency: int) -> None:
        from proactive_tui.ui.studio.screen import StudioScreen

        self.app.push_screen(StudioScreen(prepared, concurrency), lambda _r: self.refresh_folders())

    def _chosen_folder(self) -> Path | None:
        text = self.query_one("#setup-open-folder", Input).value.strip()
        table = self.query_one("#setup-runs", DataTable)
        if not text and self.folders and 0 <= table.cursor_row < len(self.folders):
            return self.folders[table.cursor_row].path  # the row under the cursor
        if not text:
            self._error("Pick a run folder in the list (enter) or type its path")
            return None
        return Path(text).expanduser()

    def action_open(self) -> None:
        from proactive_tui.synth import engine, setup
        from proactive_tui.ui.studio.screen import open_args

        self._error("")
        folder = self._chosen_folder()
        if folder is None:
            return
        try:
            args = open_args(folder)
            prepared = setup.prepare(args)
        except (engine.SynthError, FileNotFoundError, ValueError) as exc:
            self._error(str(exc).splitlines()[0])
            return
        except setup.SetupError as exc:
            self._error(exc.message)
            return
        self._open_studio(prepared, getattr(args, "concurrency", 4) or 4)

    def action_summary(self) -> None:
        from proactive_tui.synth import engine
        from proactive_tui.ui.studio.summary import StudioSummaryScreen

        self._error("")
        folder = self._chosen_folder()
        if folder is None:
            return
        try:
            self.app.push_screen(StudioSummaryScreen(folder))
        except (engine.SynthError, ValueError) as exc:
            self._error(str(exc).splitlines()[0])

    def action_tool(self) -> None:
        from proactive_tui.config import load_config
        from proactive_tui.synth.setup import resolve_roles
        from proactive_tui.ui.studio.screen import view_class
        from proactive_tui.ui.studio.view import SetupToolContext

        tool = view_class(self.family).setup_tool()
        if tool is None:
            return
        try:
            args = parse_argv(self.argv())
            config = load_config()
            pipeline = self._pipeline()
            roles = resolve_roles([r.name for r in pipeline.roles], args.role, args.api_base, config.roles,
                                  config.synth)
        except Exception as exc:  # the form's problem, in one line
            self._error(str(exc).splitlines()[0])
            return
        targets = list(self.query_one("#setup-targets", SelectionList).selected) or list(generator(self.family).targets()[2])
        context = SetupToolContext(self.family, targets, roles, Path(args.out).expanduser(), config.models)

        def done(extra: list[str] | None) -> None:
            if extra is not None:
                self.extra_args = [str(x) for x in extra]
                self._show_extra()

        self.app.push_screen(tool[1](context), done)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        action = {"setup-start": self.action_start, "setup-open": self.action_open,
                  "setup-summary": self.action_summary, "setup-tool": self.action_tool}.get(event.button.id or "")
        if action is not None:
            action()

    @on(DataTable.RowSelected, "#setup-runs")
    def _run_picked(self, event: Any) -> None:
        k = int(event.row_key.value) if event.row_key is not None and event.row_key.value is not None else -1
        if 0 <= k < len(self.folders):
            self.query_one("#setup-open-folder", Input).value = str(self.folders[k].path)

    def action_back(self) -> None:
        self.dismiss(None)
