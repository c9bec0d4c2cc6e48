"""`proactive-tui synth <family> ...`: generate a family's environments with its paper's data pipeline.

    synth proactiveeval --n 4 --seed 7 --out runs/pe --role generator=openai/gpt-4o-mini ...
    synth resume runs/pe                  # run exactly what is missing (after Ctrl-C, kill -9, a failed call)
    synth merge --out runs/pe shard0 shard1   # shards of one run (`--shard I/N`) into one folder

The engine (`proactive_tui.synth.engine`) keeps every model call of every item in the run folder;
this module resolves the seats' models, draws the progress (a Rich table per stage on a terminal,
one log line per item otherwise), prints the summary and installs the kept items in the user's
environments folder (`--out-only` keeps them in DIR/out only).

Seats: every pipeline role takes a model with `--role NAME=MODEL` (a numbered group at once:
`--role probe=M` seats probe1..3, `--role validator=M` every validator). A role not named takes
the session defaults the way `run` resolves its seats: the generator the agent seat's (config
file `[roles.agent]`, `PROACTIVE_TUI_MODEL`, `PROACTIVE_TUI_AGENT_MODEL`), the three probes the
agent, user and judge seats' in turn (so three differently configured seats give three different
probes, as the paper's are), the judge, the validators and the critics (`..._critic`) the judge
seat's, a `user` role (a user simulator) the user seat's; `--api-base` applies to every role. With no model
configured that is the embedded `local/smollm2`, a demo: the command says so.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import time
from pathlib import Path
from typing import Any

from proactive_tui.synth.setup import PROBE_SEATS, ROLE_ARG, generator, resolve_roles, synth_families  # noqa: F401  (the CLI's names)
from proactive_tui.textsafe import plain

RESUME = "resume"
MERGE = "merge"
RUNTIME_OPTIONS = ("concurrency", "workers", "ray", "structured_mode")
"""Options `synth resume` may change: how the run goes, never what it makes."""
PLAIN_EVERY_S = 30.0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from proactive_tui.synth.arguments import add_family_arguments

    p = subparsers.add_parser("synth", help="generate environments with a paper's data pipeline (any model per role)",
                              description="Generate a family's environments with its paper's data pipeline. Every "
                                          "model call of every item is kept in --out DIR; `synth resume DIR` runs "
                                          "what is missing.")
    sub = p.add_subparsers(title="synth commands", metavar="FAMILY|resume|merge")
    for name, family in synth_families().items():
        f = sub.add_parser(name, help=f"generate {family.title} environments",
                           description=f"Generate {family.title} environments ({family.source.citation()}).")
        add_family_arguments(f, name)
        f.set_defaults(func=run_synth)
    r = sub.add_parser(RESUME, help="continue a run folder: run exactly what is missing",
                       description="Run a synth folder's command again (DIR/command.json): only the missing steps "
                                   "are called. A folder of another config is refused.")
    r.add_argument("folder", metavar="DIR")
    r.add_argument("--concurrency", type=int, metavar="C", help="model calls at once (default: the folder's)")
    r.add_argument("--workers", type=int, metavar="N", help="processes running the items (default: the folder's)")
    r.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="run the rest as Ray tasks (default: as the folder's command did)")
    r.set_defaults(func=resume_synth)
    m = sub.add_parser(MERGE, help="combine the shard folders of one run",
                       description="Combine shard folders (`--shard I/N`) of one run into --out; shards of another "
                                   "config are refused.")
    m.add_argument("shards", nargs="+", metavar="SHARD_DIR")
    m.add_argument("--out", required=True, metavar="DIR")
    m.add_argument("--out-only", action="store_true", help="do not install the kept items in the environments folder")
    m.set_defaults(func=merge_synth)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _consoles() -> tuple[Any, Any]:
    from proactive_tui.cli.printer import SafeConsole

    err = SafeConsole(stderr=True, highlight=False, soft_wrap=True)
    out = SafeConsole(highlight=False, soft_wrap=True)
    if not out.is_terminal:  # a file or a pipe: whole rows, never cut to 80 columns
        out = SafeConsole(highlight=False, soft_wrap=True, width=200)
    return err, out


def _fail(err: Any, message: str, code: int) -> int:
    from rich.text import Text

    err.print(Text(plain(f"error: {message}"), style="red"))
    return code


class SynthProgress:
    """Counts per stage (calls done, in flight, read back from disk) and per outcome, from the
    engine's events; the display renders these counts."""

    def __init__(self, stages: tuple[str, ...], planned: int, clock: Any = time.monotonic) -> None:
        self.stages = stages
        self.planned = planned
        self.calls = {s: 0 for s in stages}
        self.cached = {s: 0 for s in stages}
        self.in_flight = {s: 0 for s in stages}
        self.kept: dict[str, int] = {}
        self.rejected: dict[str, int] = {}
        self.failed = 0
        self.clock = clock
        self.started = clock()

    def event(self, event: Any) -> None:
        stage = event.stage
        if event.kind == "call_start":
            self.in_flight[stage] = self.in_flight.get(stage, 0) + 1
        elif event.kind == "call_end":
            if event.cached:
                self.cached[stage] = self.cached.get(stage, 0) + 1
            else:
                self.in_flight[stage] = max(0, self.in_flight.get(stage, 0) - 1)
                self.calls[stage] = self.calls.get(stage, 0) + 1
        elif event.kind == "item_end" and event.outcome is not None:
            o = event.outcome
            bucket = self.kept if o.status == "kept" else self.rejected
            key = (o.tier if o.status == "kept" else o.reason) or "-"
            bucket[key] = bucket.get(key, 0) + 1
        elif event.kind == "item_failed":
            self.failed += 1

    @property
    def done(self) -> int:
        return sum(self.kept.values()) + sum(self.rejected.values()) + self.failed

    def line(self) -> str:
        kept = ", ".join(f"{k} {v}" for k, v in sorted(self.kept.items())) or "0"
        rejected = ", ".join(f"{k} {v}" for k, v in sorted(self.rejected.items())) or "0"
        calls = sum(self.calls.values())
        return (f"items {self.done}/{self.planned}: kept {kept}; rejected {rejected}; failed {self.failed}; "
                f"calls {calls}, in flight {sum(self.in_flight.values())}")

    def table(self) -> Any:
        from rich.table import Table

        table = Table(title=f"synth: {self.line()}", title_justify="left")
        for i, column in enumerate(("stage", "calls", "in flight", "from disk")):
            table.add_column(column, justify="left" if i == 0 else "right")
        for stage in self.stages:
            table.add_row(stage, str(self.calls.get(stage, 0)), str(self.in_flight.get(stage, 0)),
                          str(self.cached.get(stage, 0)))
        return table


class ProgressView:
    """A live table per stage on a terminal; elsewhere a log line per item and a status line
    at most every PLAIN_EVERY_S seconds."""

    def __init__(self, console: Any, progress: SynthProgress) -> None:
        self.console = console
        self.progress = progress
        self.live: Any = None
        self._last = progress.clock()
        if console.is_terminal:
            from rich.live import Live

            self.live = Live(progress.table(), console=console, refresh_per_second=4, transient=True,
                             get_renderable=progress.table)
            self.live.start()

    def event(self, event: Any) -> None:
        from rich.text import Text

        self.progress.event(event)
        if self.live is not None:
            return
        if event.kind == "item_end" and event.outcome is not None:
            o = event.outcome
            what = f"kept ({o.tier})" if o.status == "kept" else f"rejected ({o.reason}: {o.detail})"
            self.console.print(Text(plain(f"  item {o.item}: {what}")))
        elif event.kind == "item_failed":
            self.console.print(Text(plain(f"  item {event.item}: failed ({event.message}); `synth resume` runs it again"),
                                    style="yellow"))
        now = self.progress.clock()
        if now - self._last >= PLAIN_EVERY_S:
            self._last = now
            self.console.print(Text(plain(f"progress {self.progress.line()}")))

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
            self.console.print(self.progress.table())


def print_summary(console: Any, summary: Any, folder: Path) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"synth {summary.family} ({summary.generator})", title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("items planned", str(summary.planned))
    table.add_row("items tried", str(summary.tried))
    table.add_row("unfinished", str(summary.unfinished))
    table.add_row("kept", ", ".join(f"{k} {v}" for k, v in summary.kept.items()) or "0")
    table.add_row("rejected", ", ".join(f"{k} {v}" for k, v in summary.rejected.items()) or "0")
    table.add_row("calls", str(summary.calls))
    table.add_row("tokens", f"{summary.prompt_tokens + summary.completion_tokens:,} "
                            f"({summary.prompt_tokens:,} in, {summary.completion_tokens:,} out)")
    table.add_row("cost", "unknown (no price for these models)" if summary.cost is None else f"${summary.cost:.4f}")
    console.print(table)
    console.print(Text(plain(f"summary in {folder / 'summary.json'}"), style="dim"))


def _demo_note(err: Any, roles: dict[str, Any]) -> None:
    from rich.text import Text

    probes = sorted({s.model for name, s in roles.items() if re.fullmatch(r"probe\d+", name)})
    if len(probes) == 1 and sum(1 for name in roles if re.fullmatch(r"probe\d+", name)) > 1:
        err.print(Text(f"note: every probe sits on {probes[0]}; the paper's probes are models of different sizes "
                       "(--role probe1=... --role probe2=... --role probe3=...)", style="yellow"))

    local = sorted({s.model for s in roles.values() if s.is_local})
    if local:
        from proactive_tui.llm.local.loader import LOCAL_MODEL_BLURB

        err.print(Text(f"note: {', '.join(local)} sits in a role: {LOCAL_MODEL_BLURB} Generated items are a demo of "
                       "the pipeline, not data; name real models with --role.", style="yellow"))


def run_synth(args: argparse.Namespace) -> int:
    """The command: plan, check the folder, run what is missing, summarise, install."""
    from rich.text import Text

    from proactive_tui.cli.eval_batch import run_with_signals
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.synth import engine, setup

    err, _out = _consoles()
    on_ray = getattr(args, "ray", None)
    if on_ray:  # before any folder is made
        from proactive_tui.evalrun.ray_run import ray_module

        if getattr(args, "workers", None) is not None:
            return _fail(err, "--ray and --workers: Ray places the items itself; give one of them", 2)
        try:
            ray_module()
        except ImportError as exc:
            return _fail(err, str(exc), 2)
    try:
        prepared = setup.prepare(args)
    except setup.SetupError as exc:
        return _fail(err, exc.message, exc.code)
    pipeline, manifest, folder, roles, config = (prepared.pipeline, prepared.manifest, prepared.folder,
                                                 prepared.roles, prepared.config)
    shard = manifest.shard
    _demo_note(err, roles)
    done = sum(1 for i in manifest.planned if engine.has_result(folder, i))
    where = f", shard {shard} of {manifest.total}" if shard else ""
    err.print(Text(f"{len(manifest.planned)} items{where} ({done} already done) -> {folder}; roles: "
                   + ", ".join(f"{r}={m}" for r, m in manifest.models.items()), style="dim"))

    gateway_options = {"limits": config.models, "stream_replies": False}
    gateway = Gateway(**gateway_options)
    progress = SynthProgress(pipeline.stages, len(manifest.planned) - done)
    view = ProgressView(err, progress)
    run = engine.Run(folder, roles, gateway, args.seed, args.concurrency, on_event=view.event)
    outcome: dict[str, Any] = {}
    workers = 1 if on_ray else synth_workers(args, roles, len(manifest.planned) - done, err)
    if on_ray and not getattr(args, "tree_only", False):
        from proactive_tui.evalrun.ray_run import ray_problem

        problem = ray_problem(list(roles.values()))
        if problem:
            view.close()
            return _fail(err, problem, 2)

    async def work() -> None:
        if getattr(args, "tree_only", False):
            await engine.run_shared(pipeline, run)
        elif on_ray:
            await run_on_ray(pipeline, manifest, run, on_ray, gateway_options, view, err)
        elif workers > 1:
            await run_on_workers(pipeline, manifest, run, workers, gateway_options, view, err)
        else:
            outcome["result"] = await engine.run_pipeline(pipeline, manifest, run)

    try:
        stopped = run_with_signals(work)
    except engine.SynthError as exc:
        view.close()
        return _fail(err, str(exc), 1)
    except Exception as exc:  # a failed call of the shared stages (the tree): nothing half-made is kept
        from proactive_tui.llm.errors import ModelError

        view.close()
        if isinstance(exc, ModelError):
            return _fail(err, f"{exc.message} (`proactive-tui synth resume {folder}` tries again)", 1)
        raise
    finally:
        view.close()
    if getattr(args, "tree_only", False):
        if stopped:
            err.print(Text(plain(f"stopped ({stopped})"), style="yellow"))
            return 130
        err.print(Text(plain(f"topic tree in {folder / 'tree.json'} (edit it, then give it with --tree)")))
        return 0
    return _conclude(err, folder, pipeline, manifest, stopped, install=not args.out_only and shard is None)


def synth_workers(args: argparse.Namespace, roles: dict[str, Any], todo: int, err: Any) -> int:
    """How many processes run the items: `--workers`, else the usable cores; one when a role is the
    embedded model (one copy per process, one call at a time only within a process), when this
    platform cannot fork, or when one process's worth is left (a call slot or an item)."""
    from rich.text import Text

    from proactive_tui.evalrun.workers import can_fork, usable_cores

    asked = getattr(args, "workers", None)
    count = asked if asked is not None else usable_cores()
    if min(count, args.concurrency, todo) <= 1 or getattr(args, "tree_only", False):
        return 1
    why = ("a role is the embedded model, which runs in one process" if any(s.is_local for s in roles.values())
           else "this platform cannot fork worker processes" if not can_fork() else "")
    if why:
        if asked is not None:
            err.print(Text(plain(f"warning: --workers: {why}; the items run in this one"), style="yellow"))
        return 1
    return count


async def run_on_workers(pipeline: Any, manifest: Any, run: Any, workers: int, gateway_options: dict[str, Any],
                         view: Any, err: Any) -> None:
    """The items on worker processes (`evalrun.workers`): the shared stages (the topic tree) here
    first, then the workers forked with it, each running whole items; this process writes every
    file they send and shows their progress. A worker that dies loses its items in flight: they
    have no result, so `synth resume` runs them again (their steps on disk are reused)."""
    from rich.text import Text

    from proactive_tui.evalrun.workers import WorkerPool
    from proactive_tui.synth import engine

    folder = run.folder
    engine.remove_partial_writes(folder)
    items = engine.todo_items(folder, manifest)
    if not items:
        return
    shared = await pipeline.prepare(engine.StepContext(run, engine.SHARED, folder / engine.SHARED))
    await asyncio.sleep(0)
    pool = WorkerPool(workers, run.concurrency, [[i] for i in range(len(items))],
                      engine.worker_job(pipeline, folder, run.roles, run.seed, items, shared), gateway_options,
                      per_slot=engine.ITEMS_PER_SLOT, name="synth", models=list(run.roles.values()))
    live = getattr(view, "live", None)
    if live is not None:
        live.stop()  # its refresh thread must not be running when the workers are forked
    # the shared stage's file writes ran in the loop's default executor: its idle threads are
    # still there, and a fork must copy no thread that might hold a lock
    await asyncio.get_running_loop().shutdown_default_executor()
    try:
        pool.start()
    finally:
        if live is not None:
            live.start()
    err.print(Text(f"{pool.count} worker processes", style="dim"))

    def lost(index: int, why: str) -> None:
        view.event(engine.Event(kind="item_failed", item=items[index], message=why))

    try:
        await pool.run(lambda result: None, db=None, warn=lambda message: err.print(
            Text(plain(f"warning: {message}"), style="yellow")), gateway=run.gateway, on_lost=lost,
            on_event=view.event)
    finally:
        pool.terminate()


async def run_on_ray(pipeline: Any, manifest: Any, run: Any, address: str, gateway_options: dict[str, Any],
                     view: Any, err: Any) -> None:
    """The items as Ray tasks (`evalrun.ray_run`): the shared stages (the topic tree) here first,
    then one task per item, each the same unit as a worker's (`engine.worker_job`); this process
    writes every file a task returns, in the order it made them, and shows its progress. An item
    Ray gave up on has no result: `synth resume` runs it again."""
    from rich.text import Text

    from proactive_tui.evalrun.ray_run import RayBatch, where
    from proactive_tui.synth import engine

    folder = run.folder
    engine.remove_partial_writes(folder)
    items = engine.todo_items(folder, manifest)
    if not items:
        return
    from proactive_tui.evalrun.ray_run import LOCAL

    begun = [i for i in items if engine.item_dir(folder, i).is_dir()]
    if address != LOCAL and begun:
        # a task reads an item's earlier steps (and a person's edits) from the folder: on another
        # node they are not there, and it would call again and send steps written over them
        raise engine.SynthError(f"--ray {address}: {len(begun)} unfinished items have steps in {folder} that the "
                                "cluster's nodes may not see; resume them with --ray (a local instance) or --workers")
    shared = await pipeline.prepare(engine.StepContext(run, engine.SHARED, folder / engine.SHARED))
    # one item a task, at most --concurrency items at once: each item's calls one at a time, so
    # the calls at once stay within --concurrency, as in one process
    batch = RayBatch(address, run.concurrency, [[i] for i in range(len(items))],
                     engine.worker_job(pipeline, folder, run.roles, run.seed, items, shared), gateway_options,
                     per_slot=engine.ITEMS_PER_SLOT, name="synth")
    try:
        batch.start()
        err.print(Text(plain(where(batch)), style="dim"))

        def lost(index: int, why: str) -> None:
            view.event(engine.Event(kind="item_failed", item=items[index], message=why))

        await batch.run(lambda result: None, db=None, warn=lambda message: err.print(
            Text(plain(f"warning: {message}"), style="yellow")), gateway=run.gateway, on_lost=lost,
            on_event=view.event)
    finally:
        batch.terminate()


def _conclude(err: Any, folder: Path, pipeline: Any, manifest: Any, stopped: str | None, install: bool) -> int:
    from rich.text import Text

    from proactive_tui import paths
    from proactive_tui.synth import engine

    summary = engine.finish(folder, pipeline, manifest)
    _c, out = _consoles()
    print_summary(out, summary, folder)
    if summary.outputs:
        err.print(Text(plain(f"kept items in {folder / engine.OUT}: {', '.join(summary.outputs)}"), style="dim"))
    if install and not stopped:
        dest = engine.install(folder, manifest, paths.user_envs_dir() / manifest.family)
        if dest is not None:
            err.print(Text(f"installed in {dest} (listed in the picker and by `envs list`; ids "
                           f"{pipeline.installed_ids(manifest.run_name)})"))
    if stopped:
        err.print(Text(plain(f"stopped ({stopped}); `proactive-tui synth resume {folder}` runs what is left"), style="yellow"))
        return 143 if stopped == "SIGTERM" else 130
    if summary.unfinished:
        err.print(Text(f"{summary.unfinished} items unfinished (a failed call); `proactive-tui synth resume {folder}` "
                       "runs them again", style="yellow"))
        return 1
    return 0


def resume_synth(args: argparse.Namespace) -> int:
    """`synth resume DIR`: the folder's command again with --resume, from the folder it ran in."""
    from proactive_tui.llm import model_flags
    from proactive_tui.evalrun.folder import read_command
    from proactive_tui.synth import engine

    err, _out = _consoles()
    folder = Path(args.folder).expanduser().resolve()
    try:
        engine.read_manifest(folder)
        command = read_command(folder)
    except (engine.SynthError, FileNotFoundError, ValueError) as exc:
        return _fail(err, str(exc).splitlines()[0], 1)
    options = dict(command.options)
    options.update({k: getattr(args, k) for k in RUNTIME_OPTIONS if getattr(args, k, None) is not None})
    if getattr(args, "workers", None) is not None and getattr(args, "ray", None) is None:
        options["ray"] = None  # the folder ran on Ray; this resume runs on worker processes
    elif getattr(args, "ray", None) is not None:
        options["workers"] = None
    again = argparse.Namespace(**options)
    again.resume, again.out = True, str(folder)
    model_flags.apply(again)
    if Path(command.cwd).is_dir():
        os.chdir(command.cwd)  # a relative --tree means what it meant then
    return run_synth(again)


def merge_synth(args: argparse.Namespace) -> int:
    from proactive_tui.synth import engine

    err, _out = _consoles()
    out = Path(args.out).expanduser()
    shards = [Path(s).expanduser() for s in args.shards]
    try:
        manifest = engine.merge(out, shards)
        pipeline = generator(manifest.family).pipeline(manifest.options)
    except (engine.SynthError, ValueError) as exc:
        return _fail(err, str(exc).splitlines()[0], 1)
    return _conclude(err, out, pipeline, manifest, None, install=not args.out_only)
