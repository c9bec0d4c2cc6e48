"""Setting up a synth run folder from a command's options: the one path `proactive-tui synth`
and the studio share, so a folder either made resumes in the other (`synth resume DIR` reads
the same manifest and command.json).

Seats: see `resolve_roles`. The folder: its manifest is written (or checked against the one
there, when resuming), and the options it was started with go to command.json.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROLE_ARG = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(\S.*)$")


def _named_roles(role_names: list[str], pairs: list[tuple[str, str]], where: str) -> dict[str, str]:
    """role -> model from (name, model) pairs, a name being a role or the stem of numbered roles
    (`probe` for probe1..probe3); a role named on its own wins over its group."""
    exact: dict[str, str] = {}
    grouped: dict[str, str] = {}
    for name, model in pairs:
        if name in role_names:
            exact[name] = model
            continue
        members = [r for r in role_names if re.fullmatch(rf"{re.escape(name)}\d+", r)]
        if not members:
            raise ValueError(f"{where} {name}: not a role of this pipeline (roles: {', '.join(role_names)})")
        grouped.update({member: model for member in members})
    return {**grouped, **exact}


def resolve_roles(role_names: list[str], given: list[str], api_base: str | None, config_roles: Any,
                  config_synth: dict[str, str] | None = None) -> dict[str, Any]:
    """Each pipeline role's ModelSettings: `--role` where named, else the config file's `[synth]`
    entry for it, else the session defaults of the seat it is most like (generator, an agent
    simulator: the agent seat; judges, validators and critics: the judge seat; a user simulator:
    the user seat; probe1, probe2, probe3: the agent, user and judge seats in turn, so the paper's
    three different probe models are the default wherever the seats differ), as `run` resolves
    them (config < environment < command line). The
    config's `[synth]` entry outranks the seat defaults (environment included): it names this
    role, they name a seat."""
    from proactive_tui.llm.settings import resolve_roles as resolve

    pairs = []
    for text in given:
        match = ROLE_ARG.match(text)
        if not match:
            raise ValueError(f"--role wants ROLE=MODEL, got {text!r}")
        pairs.append((match.group(1), match.group(2).strip()))
    from_config = _named_roles(role_names, [(k, v.strip()) for k, v in (config_synth or {}).items()],
                               "the config file's [synth]")
    named = {**from_config, **_named_roles(role_names, pairs, "--role")}
    out = {}
    for role in role_names:
        seat = _seat_for(role)
        cli = {seat: {"model": named.get(role), "api_base": api_base}}
        out[role] = resolve(config_roles, cli=cli).for_role(seat)  # type: ignore[arg-type]
    return out


def _seat_for(role: str) -> str:
    """The session seat whose defaults an unnamed pipeline role takes (`resolve_roles`)."""
    probe = re.fullmatch(r"probe(\d+)", role)
    if probe:
        return PROBE_SEATS[(int(probe.group(1)) - 1) % len(PROBE_SEATS)]
    if role.startswith(("judge", "validator")) or role.endswith("critic"):
        return "judge"
    return "user" if role == "user" else "agent"


PROBE_SEATS = ("agent", "user", "judge")
"""probe1..probe3's default seats: three seats, so three models wherever a person configured them
apart (the paper probes with models of different sizes)."""




class SetupError(Exception):
    """A run that cannot be set up: one line for a person, and the exit code the CLI gives."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass
class Prepared:
    """A run folder ready to run: what the engine needs, all from the same options."""

    pipeline: Any
    options: dict[str, Any]
    roles: dict[str, Any]
    manifest: Any
    folder: Path
    config: Any


COMMAND_SKIP = ("func", "resume", "envs", "sub_envs")


def generator(family: str) -> Any:
    """The `generate` part (`core.family.GeneratePart`) of the named family; ValueError when the
    family has no `synth` pipeline."""
    from proactive_tui.core import registry

    part = registry.get(family).generate
    if part is None:
        raise ValueError(f"{family} has no synth pipeline")
    return part


def synth_families() -> dict[str, Any]:
    """Families with a `synth` pipeline: the ones `proactive-tui synth` lists and the studio
    offers (here, below both, so the studio need not ask the CLI)."""
    from proactive_tui.core import registry
    return {name: fam for name, fam in registry.families().items() if fam.parts.generate is not None}


def prepare(args: argparse.Namespace) -> Prepared:
    """Check the options, resolve the seats, and write (or check) the folder's manifest and
    command. `args` is the parsed `synth <family>` command line (the studio parses one too)."""
    from proactive_tui.evalrun.options import shared_option_problem
    from proactive_tui.config import ConfigError, load_config
    from proactive_tui.evalrun.folder import BatchCommand, write_atomic, write_command
    from proactive_tui.evalrun.plan import Shard
    from proactive_tui.synth import engine

    problem = shared_option_problem(argparse.Namespace(concurrency=args.concurrency, api_base=args.api_base,
                                                       workers=getattr(args, "workers", None)))
    if problem:
        raise SetupError(problem)
    if args.n < 1:
        raise SetupError("--n must be at least 1")
    try:
        shard = Shard.parse(args.shard) if getattr(args, "shard", None) else None
        generate = generator(args.synth_family)
        options = generate.options(args)
        pipeline = generate.pipeline(options)
    except ValueError as exc:
        raise SetupError(str(exc).splitlines()[0]) from None
    if shard is not None and pipeline.needs_shared_input():
        raise SetupError(f"--shard: {pipeline.needs_shared_input()}")
    try:
        config = load_config()
        roles = resolve_roles([r.name for r in pipeline.roles], args.role, args.api_base, config.roles, config.synth)
    except (ConfigError, ValueError) as exc:
        raise SetupError(str(exc).splitlines()[0]) from None
    manifest = engine.make_manifest(pipeline, options, roles, args.seed, shard)
    folder = Path(args.out).expanduser()
    if folder.exists() and not folder.is_dir():
        raise SetupError(f"--out: {folder} is a file; give a folder")
    if (folder / engine.MANIFEST).is_file():
        if not args.resume:
            raise SetupError(f"--out: {folder} already holds a run; `proactive-tui synth resume {folder}` continues it",
                             1)
        try:
            engine.check_same_run(folder, manifest)
        except engine.SynthError as exc:
            raise SetupError(str(exc), 1) from None
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / engine.MANIFEST, engine.file_text(manifest))
    command = {k: v for k, v in vars(args).items() if k not in COMMAND_SKIP
               and (v is None or isinstance(v, (str, int, float, bool, list)))}
    write_command(folder, BatchCommand(cwd=os.getcwd(), options=command))
    return Prepared(pipeline=pipeline, options=options, roles=roles, manifest=manifest, folder=folder, config=config)
