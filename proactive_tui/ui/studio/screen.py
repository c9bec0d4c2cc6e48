"""The studio: one generation run, item by item, stage by stage, under a person's hand.

Left, the items and what became of each; in the centre, the family's drawing of the item in view
(`Family.screen("studio_view")`, else `StepListView`: every step file as a block); below, a status line.
The run goes one item at a time (`engine.run_pipeline(items=[one])`) through the gate
(`synth.gate.StepGate`): space lets one model call go, `a` lets them all go, `p` holds them, `s`
cancels the run (the folder stays whole and resumable, by the studio or `synth resume`).

A person's hand: `e` rewrites the focused block's step (`engine.edit_step`; the item then runs
again from there), `k` / `x` keep or reject a finished item against the pipeline's verdict
(`engine.decide`), enter plays a kept item now (installed like `synth` installs it, then the
session setup opens on it), `t` shows the folder's summary.

The folder is the same one the headless command writes (`synth.setup.prepare`), so a run the app
lost (a crash, a quit) is reopened from the studio setup, or resumed headless, as it was.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from proactive_tui.synth import engine
from proactive_tui.synth.gate import StepGate
from proactive_tui.synth.setup import Prepared
from proactive_tui.ui.studio.step_list import StepListView
from proactive_tui.ui.studio.view import StudioItemView
from proactive_tui.ui.widgets.key_bar import KeyBar

RUN_GROUP = "studio-run"


def item_status(outcome: engine.Outcome | None, running: bool = False, failed: str | None = None) -> str:
    """What the item list says of an item: pending, running, kept <tier>, rejected <reason>, and
    "person: ..." when a person decided it."""
    if running:
        return "running"
    if outcome is None:
        return f"failed: {failed}" if failed else "pending"
    what = f"kept {outcome.tier or '-'}" if outcome.status == "kept" else f"rejected {outcome.reason or '-'}"
    return f"person: {what}" if outcome.decision is not None else what


def view_class(family: str) -> type[StudioItemView]:
    from proactive_tui.core import registry

    try:
        cls = registry.get(family).screen("studio_view")
    except Exception:  # a family that cannot give its view still has step files to show
        cls = None
    return cls or StepListView


class StudioScreen(Screen[None]):
    """`prepared`: the run folder set up by `synth.setup.prepare` (new or reopened); `concurrency`:
    model calls at once (the command's `--concurrency`); `mode`: the gate's first mode."""

    HELP_TITLE = "Studio"
    BINDINGS = [
        Binding("space", "step", "Step", tooltip="One model call more (switches to stepping; starts a stopped run)"),
        Binding("a", "auto", "Auto", tooltip="Every call goes without waiting (starts a stopped run)"),
        Binding("p", "pause", "Pause", tooltip="Hold every call until space or a"),
        Binding("s", "stop", "Stop", tooltip="Stop the run now: the calls in flight are lost, the folder stays "
                "resumable (space or a, or `proactive-tui synth resume DIR`)"),
        Binding("e", "edit", "Edit", tooltip="Rewrite the focused stage's output; the later stages are made again"),
        Binding("k", "keep", "Keep", tooltip="Keep the item in view (a person's decision, beside the pipeline's)"),
        Binding("x", "reject", "Reject", tooltip="Reject the item in view (a person's decision, beside the pipeline's)"),
        Binding("enter", "play", "Play", tooltip="Play it now: install the kept item in view and set up a session on it"),
        Binding("t", "summary", "Summary", tooltip="The folder's summary: kept, rejected, calls, tokens, cost"),
        Binding("escape", "back", "Back", show=False, tooltip="Leave the studio (a running generation is stopped; "
                "the folder stays resumable)"),
    ]
    DEFAULT_CSS = """
    StudioScreen { layout: vertical; }
    #studio-head { height: 1; padding: 0 1; background: $panel; }
    #studio-body { height: 1fr; }
    #studio-items { width: 30%; min-width: 30; max-width: 40; height: 1fr; }
    #studio-centre { width: 1fr; height: 1fr; }
    #studio-status-row { height: 1; }
    #studio-status { width: 1fr; height: 1; padding: 0 1; color: $text-muted; }
    #studio-play { min-width: 0; width: auto; height: 1; border: none; margin: 0 1; }
    """

    def __init__(self, prepared: Prepared, concurrency: int = 4, *, mode: str = "step", start: bool = True) -> None:
        super().__init__()
        self.prepared = prepared
        self.pipeline = prepared.pipeline
        self.manifest: engine.Manifest = prepared.manifest
        self.folder = prepared.folder
        self.concurrency = concurrency
        self.gate = StepGate(mode, on_change=self._status)  # type: ignore[arg-type]
        self.start_on_mount = start
        self.running: str | None = None
        """The item the run is on now, or None."""
        self.live: tuple[str, str] | None = None
        """(scope, step) of the call in flight now."""
        self.shown: str | None = self.manifest.planned[0] if self.manifest.planned else None
        self.failed: dict[str, str] = {}
        self.next_item: str | None = None
        self.finished = all(engine.has_result(self.folder, i) for i in self.manifest.planned)
        self.stopped = not start and not self.finished
        self.error: str | None = None
        self._worker: Any = None
        self.totals = {"calls": 0, "tokens": 0, "cost": None}
        for record in engine.read_steps(self.folder):
            self._count(record)

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        head = Static(id="studio-head")
        head.update(Text(f"Studio · {self.manifest.family} · {len(self.manifest.planned)} items · {self.folder.name}"))
        yield head
        with Horizontal(id="studio-body"):
            items = OptionList(*[Option(self._label(i), id=i) for i in self.manifest.planned], id="studio-items")
            items.border_title = "items"
            yield items
            with Vertical(id="studio-centre"):
                yield view_class(self.manifest.family)(self.pipeline, id="studio-view")
        with Horizontal(id="studio-status-row"):
            yield Static(id="studio-status")
            yield Button("Play it now", id="studio-play", compact=True)
        yield KeyBar()

    @property
    def view(self) -> StudioItemView:
        return self.query_one("#studio-view", StudioItemView)

    def on_mount(self) -> None:
        self._redraw()
        self._status()
        if self.start_on_mount:
            self.start()

    # -- the run --------------------------------------------------------------------------

    @property
    def run_active(self) -> bool:
        return self._worker is not None and not self._worker.is_finished

    def start(self) -> None:
        """Run what is missing (again): the items without a verdict, one at a time."""
        if self.run_active:
            return
        self.failed.clear()
        self.stopped = False
        self.error = None
        self._worker = self.run_worker(self._run(), group=RUN_GROUP, exclusive=True, exit_on_error=False)
        self._status()

    async def _run(self) -> None:
        from proactive_tui.llm.errors import ModelError
        from proactive_tui.llm.gateway import Gateway

        gateway = Gateway(limits=getattr(self.prepared.config, "models", None), stream_replies=False)
        run = engine.Run(self.folder, self.prepared.roles, gateway, self.manifest.seed, self.concurrency,
                         on_event=self._event, gate=self.gate)
        try:
            while True:
                todo = [i for i in self.manifest.planned
                        if i not in self.failed and not engine.has_result(self.folder, i)]
                if not todo:
                    break
                item = self.next_item if self.next_item in todo else todo[0]
                self.next_item = None
                self._set_running(item)
                result = await engine.run_pipeline(self.pipeline, self.manifest, run, items=[item])
                self.failed.update(result.failed)
                self._set_running(None)
        except (ModelError, engine.SynthError) as exc:
            self.error = getattr(exc, "message", None) or str(exc).splitlines()[0]
            self.stopped = True
            self._set_running(None)
            self.notify(self.error, title="Studio: the run stopped", severity="error", markup=False)
            return
        finally:
            self.live = None
        self._set_running(None)
        engine.finish(self.folder, self.pipeline, self.manifest)
        self.finished = not self.failed
        self._status()

    def _set_running(self, item: str | None) -> None:
        before = self.running
        self.running = item
        for k in {before, item} - {None}:
            self._relabel(k)  # type: ignore[arg-type]
        if item is not None:
            items = self.query_one("#studio-items", OptionList)
            if self.shown in (before, None) or self.shown == item:  # following the run
                self.shown = item
                items.highlighted = items.get_option_index(item)
                self._redraw()
        self._status()

    def _event(self, event: engine.Event) -> None:
        if event.kind == "call_start":
            self.live = (event.item, event.step)
        elif event.kind == "call_end":
            if self.live == (event.item, event.step):
                self.live = None
            if not event.cached:
                path = engine.step_path(self.folder, event.item, event.step)
                if path.is_file():
                    self._count(engine.StepRecord.model_validate_json(path.read_text(encoding="utf-8")))
        elif event.kind == "item_failed":
            self.failed[event.item] = event.message
        if event.item and event.item != engine.SHARED:
            self._relabel(event.item)
        if event.item == self.shown:
            self._redraw()
        self._status()

    def _count(self, record: engine.StepRecord) -> None:
        self.totals["calls"] += record.calls
        self.totals["tokens"] += record.prompt_tokens + record.completion_tokens
        if record.cost is not None:
            self.totals["cost"] = (self.totals["cost"] or 0.0) + record.cost

    # -- drawing --------------------------------------------------------------------------

    def _label(self, item: str) -> Text:
        outcome = engine.read_item(self.folder, item).outcome if engine.has_result(self.folder, item) else None
        status = item_status(outcome, running=item == self.running, failed=self.failed.get(item))
        text = Text(item)
        text.append(f"\n  {status}", style="italic" if status.startswith("person") else "dim")
        return text

    def _relabel(self, item: str) -> None:
        if not self.is_attached:
            return
        items = self.query_one("#studio-items", OptionList)
        try:
            index = items.get_option_index(item)
        except Exception:
            return
        items.replace_option_prompt_at_index(index, self._label(item))

    def _live_step(self, item: str) -> str | None:
        if self.live is not None and self.live[0] == item:
            return self.live[1]
        waiting = [step for scope, _stage, step in self.gate.waiting if scope == item]
        return waiting[0] if waiting else None

    def _redraw(self) -> None:
        if self.shown is None or not self.is_attached:
            return
        try:
            state = engine.read_item(self.folder, self.shown)
        except ValueError as exc:  # a step file a person broke by hand: say which, keep going
            self.notify(f"{self.shown}: {str(exc).splitlines()[0]}", severity="error", markup=False)
            return
        self.view.show(state, self._live_step(self.shown))

    def _status(self) -> None:
        if not self.is_attached:
            return
        if self.error:
            mode = "stopped (error)"
        elif self.stopped:
            mode = "stopped"
        elif self.finished and not self.run_active:
            mode = "done"
        else:
            mode = self.gate.mode
        parts = [mode]
        if self.running:
            parts.append(f"item {self.running}")
        step = self.live[1] if self.live else None
        waiting = self.gate.waiting
        if step:
            parts.append(f"calling {step}")
        elif waiting:
            parts.append(f"next {waiting[0][2]}" + (" (space)" if self.gate.mode != "auto" else ""))
        cost = self.totals["cost"]
        parts.append(f"calls {self.totals['calls']} · tokens {self.totals['tokens']:,} · "
                     + ("cost unknown" if cost is None else f"${cost:.4f}"))
        if self.error:
            parts.append(self.error)
        self.query_one("#studio-status", Static).update(Text(" · ".join(parts)))

    @on(OptionList.OptionHighlighted, "#studio-items")
    def _item_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id and event.option.id != self.shown:
            self.shown = event.option.id
            self._redraw()

    @on(Button.Pressed, "#studio-play")
    def _play_pressed(self) -> None:
        self.action_play()

    # -- keys -----------------------------------------------------------------------------

    def action_step(self) -> None:
        self.gate.press()
        if not self.run_active and self._unfinished():
            self.start()

    def action_auto(self) -> None:
        self.gate.set_mode("auto")
        if not self.run_active and self._unfinished():
            self.start()

    def action_pause(self) -> None:
        self.gate.set_mode("paused")

    def action_stop(self) -> None:
        if self._worker is not None and not self._worker.is_finished:
            self._worker.cancel()
        self.stopped = True
        self.live = None
        self._set_running(None)
        self._redraw()

    def _unfinished(self) -> bool:
        return any(not engine.has_result(self.folder, i) for i in self.manifest.planned)

    def _finished_item(self, doing: str) -> tuple[str, engine.Outcome] | None:
        item = self.shown
        if item is None:
            return None
        if item == self.running:
            self.notify(f"{item} is running: {doing} it once it has a verdict (or stop with s)", markup=False)
            return None
        state = engine.read_item(self.folder, item)
        if state.outcome is None:
            self.notify(f"{item} has no verdict yet: run it first (space or a)", markup=False)
            return None
        return item, state.outcome

    def action_edit(self) -> None:
        from proactive_tui.ui.studio.edit import EditStepModal

        item, step = self.shown, self.view.focused_step()
        if item is None or step is None:
            self.notify("Move to a stage (tab, arrows) to edit its step", markup=False)
            return
        if item == self.running:
            self.notify(f"{item} is running: stop it (s) to edit a step, or wait for its verdict", markup=False)
            return
        path = engine.step_path(self.folder, item, step)
        if not path.is_file():
            self.notify(f"{item}: no step {step} on disk", severity="error", markup=False)
            return
        record = engine.StepRecord.model_validate_json(path.read_text(encoding="utf-8"))
        schema = self.pipeline.schemas().get(record.schema_name)

        def saved(value: Any) -> None:
            if value is None:
                return
            try:
                engine.edit_step(self.folder, self.pipeline, item, step, value)
            except engine.SynthError as exc:
                self.notify(str(exc), title="Edit not kept", severity="error", markup=False)
                return
            self.finished = False
            self.next_item = item
            self._relabel(item)
            self._redraw()
            self.notify(f"{item}/{step}: kept as a person's edit; the later stages run again", markup=False)
            self.start()

        self.app.push_screen(EditStepModal(item, step, record, schema), saved)

    def action_keep(self) -> None:
        found = self._finished_item("keep")
        if found is None:
            return
        item, outcome = found
        tier = outcome.tier or (outcome.decision.pipeline_tier if outcome.decision else None)
        if outcome.record is None:
            self.notify(f"{item} was rejected ({outcome.reason}) before an environment was made: nothing to keep "
                        "(edit a step and run it again)", severity="warning", markup=False)
            return
        if tier:
            self._decide(item, "kept", tier)
            return
        from proactive_tui.ui.studio.edit import TierModal

        def picked(chosen: str | None) -> None:
            if chosen:
                self._decide(item, "kept", chosen)

        self.app.push_screen(TierModal(item, tuple(self.pipeline.tiers)), picked)

    def action_reject(self) -> None:
        found = self._finished_item("reject")
        if found is not None:
            self._decide(found[0], "rejected", None)

    def _decide(self, item: str, status: str, tier: str | None) -> None:
        try:
            outcome = engine.decide(self.folder, item, status, tier=tier)  # type: ignore[arg-type]
        except engine.SynthError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self._relabel(item)
        self._redraw()
        who = "your decision" if outcome.decision is not None else "as the pipeline said"
        self.notify(f"{item}: {item_status(outcome)} ({who})", markup=False)

    def action_play(self) -> None:
        found = self._finished_item("play")
        if found is None:
            return
        item, outcome = found
        if outcome.status != "kept":
            self.notify(f"{item} is not kept: keep it first (k) to play it", severity="warning", markup=False)
            return
        self.run_worker(self._play(outcome), group="studio-play", exclusive=True, exit_on_error=False)

    async def _play(self, outcome: engine.Outcome) -> None:
        from proactive_tui import paths

        engine.finish(self.folder, self.pipeline, self.manifest)
        dest = engine.install(self.folder, self.manifest, paths.user_envs_dir() / self.manifest.family)
        env_id = self.pipeline.installed_id(outcome, self.manifest.run_name)
        reload = getattr(self.app, "reload_environments", None)
        if dest is None or reload is None:
            self.notify("Nothing was installed (no kept item in the folder's output)", severity="error", markup=False)
            return
        reload()
        for worker in list(self.app.workers):
            if worker.group == "reload-envs":
                try:
                    await worker.wait()
                except Exception:
                    pass
        environments = getattr(self.app, "environments", None)
        env = environments.get(env_id) if environments is not None else None
        if env is None:
            self.notify(f"installed in {dest}, but no environment {env_id} loads from it", severity="error",
                        markup=False)
            return
        self.app.open_setup(env)  # type: ignore[attr-defined]

    def action_summary(self) -> None:
        from proactive_tui.ui.studio.summary import StudioSummaryScreen

        try:
            self.app.push_screen(StudioSummaryScreen(self.folder, self.manifest))
        except (ValueError, engine.SynthError) as exc:
            self.notify(str(exc).splitlines()[0], severity="error", markup=False)

    def action_back(self) -> None:
        if self.run_active:
            self._worker.cancel()
        self.dismiss(None)


def open_args(folder: Any) -> argparse.Namespace:
    """The options a run folder was started with (its command.json), ready for `prepare` with
    resume, as `synth resume DIR` reads them; a relative `--tree` is made absolute against the
    folder the command ran in (the studio does not change the working directory)."""
    from pathlib import Path

    from proactive_tui.llm import model_flags
    from proactive_tui.evalrun.folder import read_command

    folder = Path(folder).expanduser().resolve()
    engine.read_manifest(folder)
    command = read_command(folder)
    options = dict(command.options)
    if options.get("tree") and not Path(options["tree"]).expanduser().is_absolute():
        options["tree"] = str(Path(command.cwd) / options["tree"])
    args = argparse.Namespace(**options)
    args.resume, args.out = True, str(folder)
    model_flags.apply(args)
    return args
