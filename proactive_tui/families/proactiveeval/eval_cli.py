"""`proactive-tui eval proactiveeval`: run ProactiveEval environments the way the paper does.

The paper runs every environment at each of the three agreeableness levels and reports the mean
planning score and the mean guidance score. A `run` is one session at one level; this command
runs one session per (environment, level), stores each like any other session (so `sessions`,
`export` and the history see them), and prints a table per level (rows per domain) and an overall
table (rows per level, then all). The guidance mean is the mean of the judge's overall scores,
the headline; the five dimensions are diagnostics and are not averaged into it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from proactive_tui.textsafe import json_text

from pydantic import BaseModel

from proactive_tui.families.proactiveeval.env import DOMAINS

LEVELS = ("low", "medium", "high")


class SessionRow(BaseModel):
    """One session as the tables see it."""

    session_id: str
    env_id: str
    domain: str
    tier: str
    agreeableness: str
    termination: str
    guidance: int | None
    """The guidance judge's overall score (the headline), or None when it was not scored."""
    plan: int | None
    judged_against: str


class MeanRow(BaseModel):
    group: str
    sessions: int
    plan: float | None
    plan_n: int
    guidance: float | None
    guidance_n: int
    reached: int


def row_of(record: Any) -> SessionRow:
    from proactive_tui.families.proactiveeval.report import judged_against

    g, p = record.section.guidance, record.section.planning
    return SessionRow(
        session_id=record.id, env_id=record.env_id, domain=str(record.environment.get("domain") or "-"),
        tier=str(record.environment.get("tier") or "-"), agreeableness=str(record.settings.get("agreeableness")),
        termination=record.termination.reason if record.termination else "error",
        guidance=None if g is None else g.overall, plan=p.score, judged_against=judged_against(record),
    )


def _mean(values: list[int]) -> float | None:
    return sum(values) / len(values) if values else None


def means(group: str, rows: list[SessionRow]) -> MeanRow:
    """Means over the sessions that have the score (an unscored session is left out, and counted)."""
    plans = [r.plan for r in rows if r.plan is not None]
    guidance = [r.guidance for r in rows if r.guidance is not None]
    return MeanRow(group=group, sessions=len(rows), plan=_mean(plans), plan_n=len(plans), guidance=_mean(guidance),
                   guidance_n=len(guidance), reached=sum(r.termination == "target_reached" for r in rows))


def tables(rows: list[SessionRow]) -> dict[str, list[MeanRow]]:
    """One table per level that ran (rows per domain, then all domains) and `overall` (rows per
    level, then all levels)."""
    out: dict[str, list[MeanRow]] = {}
    levels = [level for level in LEVELS if any(r.agreeableness == level for r in rows)]
    for level in levels:
        at = [r for r in rows if r.agreeableness == level]
        domains = sorted({r.domain for r in at})
        out[level] = [means(d, [r for r in at if r.domain == d]) for d in domains] + [means("all domains", at)]
    out["overall"] = [means(level, [r for r in rows if r.agreeableness == level]) for level in levels]
    out["overall"].append(means("all levels", rows))
    return out


def add_eval_commands(sub: argparse._SubParsersAction) -> None:
    from proactive_tui.families.proactiveeval import family

    p = sub.add_parser("proactiveeval", help="ProactiveEval sessions per environment and agreeableness level, "
                                             "with plan and guidance means per domain and level")
    p.add_argument("env_ids", nargs="*", metavar="ENV",
                   help="environment ids or id prefixes (e.g. proactiveeval/persuasion); default: every "
                        "ProactiveEval environment")
    p.add_argument("--agreeableness", choices=(*LEVELS, "all"), default="all",
                   help="the simulated user's level; all (the default, the paper's protocol) runs each "
                        "environment once at every level")
    p.add_argument("--agent", metavar="MODEL", help="litellm model for the agent (default local/smollm2)")
    p.add_argument("--user", metavar="MODEL", help="model for the simulated user")
    p.add_argument("--judge", metavar="MODEL", help="model for the judge")
    p.add_argument("--api-base", metavar="URL", help="OpenAI-compatible base URL for every model seat")
    for flag in family.run_flags:
        if flag.setting != "agreeableness":
            p.add_argument(flag.flag, dest=flag.dest, **flag.kwargs)
    p.add_argument("--concurrency", type=int, default=2, metavar="N", help="sessions at once (default 2)")
    p.add_argument("--out", metavar="FILE.json", help="write every session's scores and the tables here")
    p.add_argument("--no-store", action="store_true", help="do not save the sessions in the session history")
    p.add_argument("--envs", dest="sub_envs", action="append", default=[], metavar="PATH", help="extra environment folder or file")
    p.set_defaults(func=run_eval)


def select(environments: list[Any], wanted: list[str]) -> tuple[list[Any], list[str]]:
    """The ProactiveEval environments matching any id or id prefix (whole id parts); see
    `cli.batch.select_environments`."""
    from proactive_tui.cli.batch import select_environments

    return select_environments(environments, "proactiveeval", wanted)


def _show(value: float | None, n: int, total: int) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2f}" + ("" if n == total else f" ({n}/{total})")


def run_eval(args: argparse.Namespace) -> int:
    import asyncio

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from proactive_tui.config import ConfigError, load_config
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.envs import load_default
    from proactive_tui.families.proactiveeval import family
    from proactive_tui.llm.settings import resolve_roles

    err = Console(stderr=True, highlight=False)
    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:  # a file or a pipe: whole tables, never cut to 80 columns
        console = Console(highlight=False, soft_wrap=True, width=160)
    from proactive_tui.cli.batch import shared_option_problem

    problem = shared_option_problem(args)
    if problem:
        err.print(Text(f"error: {problem}", style="red"))
        return 2
    try:
        config = load_config()
        roles = resolve_roles(config.roles, cli={role: {"model": model, "api_base": args.api_base} for role, model in
                                                 (("agent", args.agent), ("user", args.user), ("judge", args.judge))})
    except (ConfigError, ValueError) as exc:
        err.print(Text(f"error: {exc}", style="red"))
        return 1
    envs, unmatched = select(load_default(list(config.envs) + list(args.envs or [])).environments, args.env_ids)
    if unmatched:
        err.print(Text(f"error: no ProactiveEval environment matches {', '.join(unmatched)} "
                       "(see `proactive-tui envs list`)", style="red"))
        return 1
    if not envs:
        err.print(Text("error: no ProactiveEval environments to run", style="red"))
        return 1
    levels = LEVELS if args.agreeableness == "all" else (args.agreeableness,)
    base = {flag.setting: getattr(args, flag.dest) for flag in family.run_flags
            if flag.setting != "agreeableness" and getattr(args, flag.dest, None) is not None}
    try:
        specs = [(env, SessionSpec(env_id=env.id, roles=roles, settings=family.settings_model(
            **base, agreeableness=level).model_dump())) for env in envs for level in levels]
    except Exception as exc:
        err.print(Text(f"error: invalid settings: {exc}", style="red"))
        return 1
    models = ", ".join(f"{seat}: {roles.for_role(seat).model}" for seat in family.seats)
    err.print(Text(f"{len(specs)} sessions: {len(envs)} environments x {len(levels)} agreeableness "
                   f"level{'s' if len(levels) > 1 else ''} ({', '.join(levels)})  [{models}]", style="dim"))
    rows = asyncio.run(run_sessions(specs, args.concurrency, store=not args.no_store, err=err))
    result = tables(rows)
    for name, table_rows in result.items():
        title = "overall (all agreeableness levels)" if name == "overall" else f"agreeableness {name}"
        table = Table(title=f"ProactiveEval, {title}", title_justify="left")
        for column in ("level" if name == "overall" else "domain", "sessions", "plan (1-10)", "guidance (1-10)",
                       "target reached"):
            table.add_column(column, justify="left" if column in ("domain", "level") else "right")
        for r in table_rows:
            label = DOMAINS.get(r.group, r.group) if name != "overall" else r.group
            table.add_row(label, str(r.sessions), _show(r.plan, r.plan_n, r.sessions),
                          _show(r.guidance, r.guidance_n, r.sessions), str(r.reached))
        console.print(table)
    console.print(Text("guidance: the mean of the judge's overall scores; (k/n): only k of n sessions had that score",
                       style="dim"))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json_text({
            "models": {seat: roles.for_role(seat).model for seat in family.seats},
            "levels": list(levels), "settings": base,
            "sessions": [r.model_dump() for r in rows],
            "tables": {name: [r.model_dump() for r in table_rows] for name, table_rows in result.items()},
        }, indent=2), encoding="utf-8")
        err.print(Text(f"written to {out}", style="dim"))
    failed = [r for r in rows if r.termination == "error"]
    for r in failed:
        err.print(Text(f"note: {r.env_id} [{r.agreeableness}] ended with an error (session {r.session_id})",
                       style="yellow"))
    return 0


async def run_sessions(specs: list[tuple[Any, Any]], concurrency: int, store: bool, err: Any) -> list[SessionRow]:
    """Run and store every (environment, spec) as `cli.batch.run_batch` does."""
    from proactive_tui.cli.batch import run_batch

    def describe(row: SessionRow) -> str:
        shown = "-" if row.guidance is None else f"{row.guidance}/10"
        plan = "-" if row.plan is None else f"{row.plan}/10"
        return (f"  {row.env_id} [{row.agreeableness}]: guidance {shown} · plan {plan} · "
                f"{row.termination} (session {row.session_id})")

    return await run_batch(specs, concurrency, store, err, row_of, describe)
