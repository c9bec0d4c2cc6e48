"""`proactive-tui eval SELECTOR... --agent M [...]`: one batch command for every family.

Plans environments x agents x the families' settings grid x repeats (`evalrun.plan`), runs this
shard's sessions that have no finished record yet (`evalrun.runner.run_planned`), keeps each
finished session's record in `--out DIR/sessions/` and writes the report from those records
(`evalrun.report`). A selector that picks nothing, or a family flag that none of the selected
families takes, stops the command before anything runs.

`eval proactiveeval ...` and `eval chronos ...` are this command with a family selector (each
family's tables come from its `batch.py`); `eval run SELECTOR...` is it spelled out. `eval splits`
and `eval reward-judge` are ProactiveBench's checks (of stored sessions, and of a judge against
human labels), not batches. `--reference` seats a family's protocol-following seats instead of
models (Chronos: the oracle agent and the scripted user): every rate should then be perfect.
`eval resume DIR` runs a folder's command again with `--resume`, read from the folder
(`command.json`), so a stopped batch needs no command line kept by hand.
"""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from typing import Any

from proactive_tui.textsafe import plain

BATCH_COMMAND = "run"
RESUME_COMMAND = "resume"
RUNTIME_OPTIONS = ("concurrency", "workers", "ray", "no_store", "stream", "structured_mode")
"""Options `eval resume` may change: how the rest is run, never what a session is
(`--structured-mode` comes with every eval command, `eval_cmd.add_parser`)."""


def family_flags() -> dict[str, list[tuple[str, Any]]]:
    """flag -> [(family name, RunFlag)] over every installed family (a flag several families take,
    `--max-turns`, is one option)."""
    from proactive_tui.core import registry

    out: dict[str, list[tuple[str, Any]]] = {}
    for family in registry.families().values():
        for flag in family.run_flags:
            out.setdefault(flag.flag, []).append((family.name, flag))
    return out


def add_batch_parser(sub: argparse._SubParsersAction) -> None:
    from proactive_tui.core import registry

    p = sub.add_parser(BATCH_COMMAND, help="batch sessions of any family with the papers' tables (also: "
                                           "`eval SELECTOR...`)",
                       description="Run environments x agents x settings grid x repeats and report the papers' tables.")
    p.add_argument("selectors", nargs="+", metavar="SELECTOR",
                   help="a family, a domain or tier prefix (proactiveeval/persuasion, proactiveeval/*/hard), an id "
                        "glob (proactiveeval/*/hard/*), an exact id, or an environment file or folder")
    p.add_argument("--agent", action="append", default=[], metavar="MODEL",
                   help="the agent: a litellm model, or an ACP agent program (acp:NAME from the config file, or "
                        "acp:COMMAND ARGS...); repeat to compare agents (default: the configured agent)")
    p.add_argument("--user", metavar="MODEL", help="model for the user seat")
    p.add_argument("--judge", metavar="MODEL", help="model for the judge seat")
    p.add_argument("--api-base", metavar="URL", help="OpenAI-compatible base URL for every model seat")
    p.add_argument("--repeats", type=int, default=1, metavar="K", help="runs of every session (seeds 0..K-1; default 1)")
    p.add_argument("--concurrency", type=int, default=2, metavar="N", help="sessions at once (default 2)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="processes running the sessions, sharing --concurrency and the per-model limits; this one "
                        "alone writes the folder and the history (default: the usable cores; 1 when a seat is the "
                        "embedded model)")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="run the sessions as Ray tasks: on the cluster at ADDRESS (`auto`: the one `ray start` runs "
                        "here; `ray://HOST:10001`), or on a Ray instance started for this command when no address "
                        "is given; this process alone writes the folder and the history (needs "
                        "`pip install 'proactive-tui[ray]'`)")
    p.add_argument("--out", metavar="DIR", help="the batch folder: manifest, one record per session, report.json, "
                                                "report.csv, report.md (default: eval-<UTC time> here)")
    p.add_argument("--resume", action="store_true", help="continue the batch in --out: run only what has no finished record")
    p.add_argument("--shard", metavar="I/N", help="run slice I (0-based) of N of the plan (job arrays); "
                                                  "`report merge` combines the folders")
    p.add_argument("--no-store", action="store_true", help="do not save the sessions in the session history")
    p.add_argument("--stream", action="store_true",
                   help="ask providers for streamed replies (default: whole replies, which cost litellm a third of "
                        "the CPU; nobody watches a batch's tokens)")
    p.add_argument("--envs", dest="sub_envs", action="append", default=[], metavar="PATH",
                   help="extra environment folder or file")
    p.add_argument("--reference", action="store_true",
                   help="seat the family's protocol-following seats instead of models (Chronos: the oracle agent and "
                        "the scripted user; no model is called): a check that the scenarios and the scoring agree, "
                        "every rate should be 100%%")
    p.add_argument("--stored", action="store_true", help=argparse.SUPPRESS)  # retired: a clear error, see RETIRED
    sweeps = {name: family.sweeps for family in registry.families().values() for name in [family.name]}
    for flag, owners in family_flags().items():
        names = [name for name, _ in owners]
        kwargs = dict(owners[0][1].kwargs)
        swept = any(f.setting in sweeps.get(name, {}) for name, f in owners)
        if swept and "choices" in kwargs:
            kwargs["choices"] = (*kwargs["choices"], "all")
            kwargs["help"] = kwargs.get("help", "") + "; all (the default here) runs every value"
        helps = list(dict.fromkeys(f.kwargs.get("help", "") for _, f in owners))
        if len(helps) > 1:  # one flag, a meaning per family (--max-turns): each family's own words
            kwargs["help"] = "; ".join(f"[{name}] {f.kwargs.get('help', '')}" for name, f in owners)
            if swept and "choices" in kwargs:
                kwargs["help"] += "; all (the default here) runs every value"
        else:
            kwargs["help"] = f"[{', '.join(names)}] " + kwargs.get("help", "")
        p.add_argument(flag, dest=owners[0][1].dest, **kwargs)
    p.set_defaults(func=run_batch_eval)


def add_resume_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(RESUME_COMMAND, help="continue a stopped batch folder with the command that started it",
                       description="Run a batch folder's command again with --resume (read from DIR/command.json): "
                                   "only the sessions with no finished record run. The sweep is the folder's; "
                                   "how it runs may change here.")
    p.add_argument("folder", metavar="DIR", help="the batch folder (the command's --out)")
    p.add_argument("--concurrency", type=int, metavar="N", help="sessions at once (default: the folder's)")
    p.add_argument("--workers", type=int, metavar="N", help="processes running the sessions (default: the folder's)")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="run the rest as Ray tasks (default: as the folder's command did)")
    p.add_argument("--no-store", action="store_true", default=None, help="do not save the sessions in the history")
    p.add_argument("--stream", action="store_true", default=None, help="ask providers for streamed replies")
    p.set_defaults(func=resume_batch_eval)


def command_options(args: argparse.Namespace) -> dict[str, Any]:
    """The batch command's options as JSON values (what `eval resume` needs to give it again)."""
    def plain(value: Any) -> bool:
        return value is None or isinstance(value, (str, int, float, bool)) or (
            isinstance(value, list) and all(isinstance(v, (str, int, float, bool)) for v in value))

    return {k: v for k, v in vars(args).items() if k not in ("func", "resume") and plain(v)}


def resume_batch_eval(args: argparse.Namespace) -> int:
    """`eval resume DIR`: the folder's command again, with --resume, from the folder it ran in."""
    import os

    from rich.text import Text

    from proactive_tui.cli.printer import SafeConsole
    from proactive_tui.evalrun.folder import read_command

    folder = Path(args.folder).expanduser().resolve()
    try:
        command = read_command(folder)
    except (FileNotFoundError, ValueError) as exc:
        SafeConsole(stderr=True, highlight=False, soft_wrap=True).print(Text(plain(f"error: {exc}"), style="red"))
        return 1
    from proactive_tui.llm import model_flags

    options = dict(command.options)
    options.update({k: getattr(args, k) for k in RUNTIME_OPTIONS if getattr(args, k, None) is not None})
    if getattr(args, "workers", None) is not None and getattr(args, "ray", None) is None:
        options["ray"] = None  # the folder ran on Ray; this resume runs on worker processes
    elif getattr(args, "ray", None) is not None:
        options["workers"] = None
    again = argparse.Namespace(**options)
    again.resume, again.out = True, str(folder)
    model_flags.apply(again)  # the folder's --structured-mode (main applied only this command line's)
    if Path(command.cwd).is_dir():
        os.chdir(command.cwd)  # relative selectors and --envs paths mean what they meant then
    return run_batch_eval(again)


class Problem(Exception):
    """A mistake in the command found before anything runs (exit 2) or a folder that cannot be
    used (exit 1)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def build_plan(args: argparse.Namespace, environments: list[Any], load_path: Any, default_agent: str,
               resolve: Any) -> tuple[Any, list[Any]]:
    """(manifest, planned sessions) of the command, or Problem. `resolve(agent, seed)` gives the
    seats' RoleSettings; split out so tests can plan without a config."""
    from proactive_tui.core import registry
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.evalrun.plan import Manifest, Shard, grid_points, plan_keys, seed_for, select, shard_keys
    from proactive_tui.evalrun.runner import PlannedSession

    if args.repeats < 1:
        raise Problem("--repeats must be at least 1")
    try:
        shard = Shard.parse(args.shard) if args.shard else None
    except ValueError as exc:
        raise Problem(str(exc)) from None
    selection = select(environments, args.selectors, load_path=load_path)
    if selection.unmatched:
        raise Problem("no environment matches " + ", ".join(selection.unmatched) + " (see `proactive-tui envs list`)", 1)
    envs = selection.environments
    families = sorted({e.family for e in envs})
    for flag, owners in family_flags().items():
        dest = owners[0][1].dest
        if getattr(args, dest, None) is not None and not any(name in families for name, _ in owners):
            raise Problem(f"{flag} is not a setting of the selected families ({', '.join(families)}); it is "
                          f"{', '.join(name for name, _ in owners)}'s")
    settings: dict[str, dict[str, Any]] = {}
    sweeps: dict[str, dict[str, list[str]]] = {}
    grids: dict[str, list[dict[str, str]]] = {}
    for name in families:
        family = registry.get(name)
        base_args = argparse.Namespace(**vars(args))
        sweeps[name] = {}
        for flag in family.run_flags:
            if flag.setting in family.sweeps:
                value = getattr(args, flag.dest, None)
                sweeps[name][flag.setting] = list(family.sweeps[flag.setting]) if value in (None, "all") else [value]
                setattr(base_args, flag.dest, None)
        try:
            shared = family.settings_from_args(base_args)
        except ValueError as exc:
            raise Problem(str(exc)) from None
        # a swept setting's value is the key's, never the shared default
        settings[name] = {k: v for k, v in shared.items() if k not in sweeps[name]}
        grids[name] = grid_points(sweeps[name])
    agents = list(dict.fromkeys(args.agent)) or [default_agent]
    keys = plan_keys(envs, agents, grids, args.repeats)
    mine = shard_keys(keys, shard)
    by_id = {e.id: e for e in envs}
    planned = []
    for key in mine:
        family = registry.get(key.family)
        seed_base = int(settings[key.family].get("seed") or 0)
        seed = seed_for(key.repeat, seed_base)
        values = {**settings[key.family], **key.settings}
        if "seed" in family.settings_model.model_fields:
            values["seed"] = seed
        try:
            values = family.settings_model(**values).model_dump()
        except Exception as exc:
            raise Problem(f"invalid settings for {key.family}: {exc}") from None
        spec = SessionSpec(env_id=key.env_id, roles=resolve(key.agent, seed), settings=values)
        planned.append(PlannedSession(key=key, seed=seed, env=by_id[key.env_id], spec=spec))
    roles = resolve(agents[0], 0)
    manifest = Manifest(selectors=list(args.selectors), families=families, agents=agents,
                        models={"user": roles.user.model, "judge": roles.judge.model}, settings=settings, sweeps=sweeps,
                        repeats=args.repeats, total=len(keys), shard=shard,
                        planned=[k.id for k in mine], keys=mine)
    return manifest, planned


def prepare_folder(out: Path, manifest: Any, resume: bool) -> set[str]:
    """Check `out` may hold this batch and return the ids already finished there."""
    from proactive_tui.evalrun.folder import MANIFEST, finished_ids, read_manifest

    if out.exists() and not out.is_dir():
        raise Problem(f"--out: {out} is a file; give a folder")
    if (out / MANIFEST).exists():
        if not resume:
            raise Problem(f"--out: {out} already holds a batch; --resume continues it, or give another folder", 1)
        old = read_manifest(out)
        mine, theirs = manifest.model_dump(exclude={"keys"}), old.model_dump(exclude={"keys"})
        differ = sorted(k for k in mine if mine[k] != theirs.get(k))
        if differ:
            raise Problem(f"--resume: {out} holds another batch (it differs in {', '.join(differ)}); "
                          "give the command that started it", 1)
        return finished_ids(out) & set(manifest.planned)
    return set()


RETIRED = {
    "out": "--out is now the batch folder (manifest, one record per session, report.json, report.csv, report.md), "
           "not a .json file; give a folder, e.g. --out {folder}",
    "stored": "--stored is gone: the batch folder keeps every session's record, and `proactive-tui report show DIR` "
              "recomputes its tables without running anything",
}
"""What the earlier `eval proactiveeval` and `eval chronos` took that the batch command does not,
and what to use instead (their `--out FILE.json`, Chronos's `--stored`)."""


def reference_build(families: list[str]) -> Any:
    """The session factory of `--reference` over the selected families (`Parts.reference`),
    or Problem naming a family that has no reference seats."""
    from proactive_tui.core import registry
    lacking = [name for name in families if registry.get(name).parts.reference is None]
    if lacking:
        raise Problem(f"--reference: {', '.join(lacking)} has no reference seats (only a model can play its agent)")
    return lambda spec, env, gateway: registry.get(env.family).reference_session(spec, env, gateway)


def run_batch_eval(args: argparse.Namespace, build: Any = None) -> int:
    """The command. `build` replaces the session factory (tests seat scripted participants)."""
    from datetime import datetime, timezone

    from rich.text import Text

    from proactive_tui.evalrun.options import shared_option_problem
    from proactive_tui.cli.printer import SafeConsole
    from proactive_tui.config import ConfigError, load_config
    from proactive_tui.envs import load_default
    import os

    from proactive_tui.evalrun.folder import (
        BatchCommand, read_results, write_command, write_ended, write_manifest,
    )
    from proactive_tui.evalrun.report import build_report, status_line, write_report
    from proactive_tui.evalrun.runner import run_planned
    from proactive_tui.llm.settings import resolve_roles

    err = SafeConsole(stderr=True, highlight=False, soft_wrap=True)
    console = SafeConsole(highlight=False, soft_wrap=True)
    if not console.is_terminal:  # a file or a pipe: whole tables, never cut to 80 columns
        console = SafeConsole(highlight=False, soft_wrap=True, width=200)

    def fail(message: str, code: int) -> int:
        err.print(Text(plain(f"error: {message}"), style="red"))
        return code

    problem = shared_option_problem(argparse.Namespace(concurrency=args.concurrency, api_base=args.api_base,
                                                       workers=getattr(args, "workers", None)))
    if problem:
        return fail(problem, 2)
    if getattr(args, "stored", False):
        return fail(RETIRED["stored"], 2)
    if getattr(args, "ray", None):  # before any folder is made
        from proactive_tui.evalrun.ray_run import ray_module

        try:
            ray_module()
        except ImportError as exc:
            return fail(str(exc), 2)
    if args.out and args.out.lower().endswith(".json"):
        return fail(RETIRED["out"].format(folder=args.out[: -len(".json")] or "runs/batch"), 2)
    reference = bool(getattr(args, "reference", False))
    if reference and args.agent:
        return fail("--reference seats the reference agent; give no --agent with it", 2)
    out = Path(args.out or f"eval-{datetime.now(timezone.utc).strftime('%Y%m%d-%H%M%S')}").expanduser()
    try:
        config = load_config()
        cli_roles = {"user": {"model": args.user, "api_base": args.api_base},
                     "judge": {"model": args.judge, "api_base": args.api_base}}
        default_agent = resolve_roles(config.roles, cli={**cli_roles, "agent": {"api_base": args.api_base}}).agent.model
    except (ConfigError, ValueError) as exc:
        return fail(str(exc), 1)

    def resolve(agent: str, seed: int) -> Any:
        roles = resolve_roles(config.roles, cli={**cli_roles, "agent": {"model": agent, "api_base": args.api_base}})
        return roles.model_copy(update={r: roles.for_role(r).model_copy(update={"seed": seed})
                                        for r in ("agent", "user", "judge")})

    # A selector that is a path is loaded with the rest, so an id it shares with a sample or
    # another folder is settled as everywhere (envs.sources) rather than two sessions under one id.
    paths = [s for s in args.selectors if Path(s).exists()]
    catalog = load_default(list(config.envs) + list(args.envs or []) + paths)
    try:
        manifest, planned = build_plan(args, catalog.environments, catalog.read_from,
                                       "reference" if reference else default_agent, resolve)
        if reference:  # no model sits in any seat: the report must not name the configured ones
            build = build or reference_build(manifest.families)
            manifest = manifest.model_copy(update={"models": {seat: "reference" for seat in manifest.models}})
        done = prepare_folder(out, manifest, args.resume)
    except Problem as exc:
        return fail(str(exc), exc.code)
    except ValueError as exc:
        return fail(str(exc), 1)
    problem = shared_option_problem(argparse.Namespace(concurrency=args.concurrency, out=str(out / "manifest.json")))
    if problem:
        return fail(problem, 2)
    todo = [p for p in planned if p.key.id not in done]
    out.mkdir(parents=True, exist_ok=True)
    write_manifest(out, manifest)
    write_command(out, BatchCommand(cwd=os.getcwd(), options=command_options(args)))
    shard = f", shard {manifest.shard} of {manifest.total}" if manifest.shard else ""
    err.print(Text(plain(f"{len(planned)} sessions{shard} ({len(done)} already finished, {len(todo)} to run) -> {out}"),
                   style="dim"))

    from proactive_tui.core import registry

    # work the sessions share (ProactiveEval: one plan per environment, agent and repeat), with
    # what the folder's finished sessions did already
    earlier = read_results(out, transcripts=False) if done else []
    shares = {name: share for name in manifest.families
              if (batch := registry.get(name).batch) is not None and (share := batch.share(earlier)) is not None}

    def warn(message: str) -> None:
        err.print(Text(plain(f"warning: {message}"), style="yellow"))

    gateway_options = {"limits": config.models, "stream_replies": bool(getattr(args, "stream", False))}
    on_ray = getattr(args, "ray", None)
    pool: Any = None
    if on_ray:
        pool = ray_batch(on_ray, args, todo, build, shares, gateway_options, manifest.agents, resolve, reference)
        if isinstance(pool, str):
            return fail(pool, 2)
        if not todo:
            pool = None
    workers = 1 if on_ray else worker_count(args, manifest.agents, resolve, reference, warn)
    if pool is not None:
        from proactive_tui.evalrun.ray_run import where

        try:
            pool.start()
        except Exception as exc:  # a cluster that cannot be reached: one line, nothing ran
            pool.terminate()
            return fail(f"--ray: {type(exc).__name__}: {exc}", 1)
        err.print(Text(plain(where(pool)), style="dim"))
    elif min(workers, args.concurrency, len(todo)) > 1:  # one process's worth of work runs in this one
        from proactive_tui.evalrun.workers import WorkerPool

        # forked here, before the progress display's thread and the event loop start
        pool = WorkerPool.for_sessions(workers, args.concurrency, todo, build, shares, gateway_options,
                                       store=not args.no_store)
        pool.start()
        err.print(Text(f"{pool.count} worker processes", style="dim"))

    from proactive_tui.cli.progress import BatchProgress, ProgressDisplay
    from proactive_tui.llm.gateway import Gateway

    gateway = Gateway(**gateway_options)
    progress = BatchProgress(todo, gateway.stats)
    display = ProgressDisplay(err, progress)

    def on_done(ended: Any) -> None:
        progress.record(ended.key.agent, ended.ok)
        display.update()
        write_ended(out, ended)
        if ended.ok:
            # every headline score with its name: a first-found figure alone read as the guidance
            # score when only the plan had one
            err.print(Text(f"  done {ended.key.id}: {ended.reason} {ended.headline}".rstrip(), style="dim"))
        else:
            err.print(Text(plain(f"  failed {ended.key.id}: {ended.reason} (`eval resume` runs it again)"),
                           style="yellow"))

    try:
        stopped = run_with_signals(lambda: run_planned(todo, args.concurrency, on_done, store=not args.no_store,
                                                       warn=warn, build=build, gateway=gateway, shares=shares,
                                                       pool=pool))
    finally:
        display.close()  # the summary, also after Ctrl-C/SIGTERM
        if pool is not None:
            pool.terminate()
    report = build_report(manifest, read_results(out, transcripts=False))
    write_report(out, report)
    print_report(console, report)
    err.print(Text(plain(f"{status_line(report)}; report in {out}/report.json, report.csv, report.md"), style="dim"))
    if stopped:
        err.print(Text(plain(f"stopped ({stopped}); `proactive-tui eval resume {out}` runs what is left"), style="yellow"))
        return 143 if stopped == "SIGTERM" else 130
    return 1 if report.missing else 0


def ray_batch(address: str, args: argparse.Namespace, todo: list[Any], build: Any, shares: Any,
              gateway_options: dict[str, Any], agents: list[str], resolve: Any, reference: bool) -> Any:
    """`--ray`: the batch's `RayBatch` (not started), or the line saying why it cannot run on Ray
    (Ray not installed, `--workers` beside it, a seat Ray cannot take)."""
    from proactive_tui.evalrun.ray_run import RayBatch, ray_module, ray_problem

    if getattr(args, "workers", None) is not None:
        return "--ray and --workers: Ray places the sessions itself; give one of them"
    try:
        ray_module()
    except ImportError as exc:
        return str(exc)
    if not reference:
        problem = ray_problem([resolve(agent, 0).for_role(role) for agent in agents
                               for role in ("agent", "user", "judge")])
        if problem:
            return problem
    return RayBatch.for_sessions(address, args.concurrency, todo, build, shares, gateway_options,
                                 store=not args.no_store)


def worker_count(args: argparse.Namespace, agents: list[str], resolve: Any, reference: bool,
                 warn: Any) -> int:
    """How many processes run the sessions: `--workers`, else the usable cores; one when a seat is
    the embedded model (each worker would load its own copy, and its one-call-at-a-time gate holds
    only within a process) or when this platform cannot fork."""
    from proactive_tui.evalrun.workers import can_fork, usable_cores

    asked = getattr(args, "workers", None)
    count = asked if asked is not None else usable_cores()
    if count <= 1:
        return 1
    local = not reference and any(resolve(agent, 0).for_role(role).is_local
                                  for agent in agents for role in ("agent", "user", "judge"))
    if local:
        if asked is not None:
            warn("--workers: a seat is the embedded model, which runs in one process; the sessions run in this one")
        return 1
    if not can_fork():
        if asked is not None:
            warn("--workers: this platform cannot fork worker processes; the sessions run in this one")
        return 1
    return count


def run_with_signals(make: Any) -> str | None:
    """Run the coroutine `make()` until it ends or Ctrl-C/SIGTERM stops it; the name of the stop,
    or None. Stopping cancels the running sessions; finished ones are on disk already."""
    import asyncio

    stopped: list[str] = []

    async def main() -> None:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()

        def stop(name: str) -> None:
            stopped.append(name)
            assert task is not None
            task.cancel()

        installed = []
        for sig, name in ((signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "Ctrl-C")):
            try:
                loop.add_signal_handler(sig, stop, name)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
                pass
        try:
            await make()
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)

    from proactive_tui.llm import batch_loop

    try:
        batch_loop.run(main())  # a call's request leaves at once (llm.batch_loop)
    except (KeyboardInterrupt, asyncio.CancelledError):
        return stopped[0] if stopped else "Ctrl-C"
    return stopped[0] if stopped else None


def print_report(console: Any, report: Any) -> None:
    """The report's tables in the terminal (Rich), one per family table."""
    from rich.table import Table
    from rich.text import Text

    from proactive_tui.evalrun.report import deviation_lines, interval_note, status_line, table_cells

    console.print(Text(plain(f"agents: {', '.join(report.agents)} · repeats: {report.repeats} · {status_line(report)}"),
                       style="dim"))
    for line in deviation_lines(report):  # before any number: what the numbers are not
        console.print(Text(line, style="bold yellow"))
    if report.bootstrap is not None:
        console.print(Text(interval_note(report), style="dim"))
    for tables in report.families.values():
        for table in tables:
            header, rows = table_cells(table)
            out = Table(title=table.title, title_justify="left")
            names = 2 if table.group_label else 1
            for i, column in enumerate(header):
                out.add_column(column, justify="right" if names <= i < names + len(table.columns) else "left")
            for cells in rows:
                out.add_row(*cells)
            console.print(out)
            for note in table.notes:
                console.print(Text(note, style="dim"))
