"""`proactive-tui eval chronos`: Chronos scored the way the paper reports it.

The paper reports each tier (simple, complex) in its own table: the success rate of the positive
branch, of the negative branch, the overall success as the equal-weight mean of the two, and the
action and status accuracy. A `run` is one session; this command runs one session per scenario
(bounded by `--max-turns`), stores each like any other session (so `sessions`, `export` and the
history see them), and prints one table per tier. With `--stored` it runs nothing and scores the
Chronos sessions already in the store instead (the latest session of each environment, or all with
`--all-runs`).

A tier with only one branch says so (`n/a (no negative session)`) rather than passing one branch's
rate off as the overall. `--reference` seats the protocol-following oracle agent and the scripted
user (no model): a check that the scenarios and the scoring agree (every rate should be 100%).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

from proactive_tui.textsafe import json_text

from pydantic import BaseModel

from proactive_tui.families.chronos.metrics import TIERS, ChronosMetrics, SessionSample, by_tier


class SessionRow(BaseModel):
    """One scored session as the tables see it."""

    session_id: str
    env_id: str
    branch: str
    tier: str
    success: bool | None
    reason: str
    turns: int
    action_correct: list[bool]
    status_correct: list[bool]
    termination: str
    prompt_variant: str
    sample_id: str | None = None

    def sample(self) -> SessionSample | None:
        if self.branch not in ("positive", "negative") or self.tier not in TIERS:
            return None
        return SessionSample(branch=self.branch, tier=self.tier, success=self.success, sample_id=self.sample_id,  # type: ignore[arg-type]
                             action_correct=self.action_correct, status_correct=self.status_correct)


def row_of(record: Any) -> SessionRow:
    section = record.section
    o = section.outcome if section is not None else None
    turns = section.turns if section is not None else []
    return SessionRow(
        session_id=record.id, env_id=record.env_id,
        branch=o.branch if o else str(getattr(section, "branch", "") or "-"),
        tier=o.tier if o else str(getattr(section, "tier", "") or "-"),
        success=o.success if o else None, reason=o.reason if o else "no verdict", turns=len(turns),
        action_correct=[t.action_correct for t in turns], status_correct=[t.status_correct for t in turns],
        termination=record.termination.reason if record.termination else "error",
        prompt_variant=str((record.settings or {}).get("prompt_variant") or "standard"),
        sample_id=(record.environment or {}).get("sample_id"),
    )


def tables(rows: list[SessionRow]) -> dict[str, ChronosMetrics]:
    """The paper's figures per tier, over the rows that reached a verdict."""
    return by_tier(s for s in (r.sample() for r in rows) if s is not None)


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def rate(value: float | None, sessions: int) -> str:
    if value is None:
        return "n/a (none ran)"
    return f"{pct(value)} ({round(value * sessions)}/{sessions})"


def overall(m: ChronosMetrics) -> str:
    if m.overall_success is None:
        return f"n/a (no {m.missing_branch} session)" if m.missing_branch else "n/a"
    return pct(m.overall_success)


def add_eval_commands(sub: argparse._SubParsersAction) -> None:
    from proactive_tui.families.chronos import family

    p = sub.add_parser("chronos", help="Chronos scenarios run (or stored sessions scored) with the paper's figures "
                                       "per tier: positive, negative and overall success, action and status accuracy")
    p.add_argument("env_ids", nargs="*", metavar="ENV",
                   help="scenario ids or id prefixes (e.g. chronos/car-purchase); default: every Chronos scenario")
    p.add_argument("--agent", metavar="MODEL", help="litellm model for the agent (default local/smollm2)")
    p.add_argument("--user", metavar="MODEL", help="model for the simulated user")
    p.add_argument("--judge", metavar="MODEL", help="model for the judge seat (reads the user's reply to an offer)")
    p.add_argument("--api-base", metavar="URL", help="OpenAI-compatible base URL for every model seat")
    for flag in family.run_flags:
        p.add_argument(flag.flag, dest=flag.dest, **flag.kwargs)
    p.add_argument("--reference", action="store_true",
                   help="seat the oracle agent and the scripted user instead of models (every rate should be 100%%)")
    p.add_argument("--stored", action="store_true",
                   help="run nothing: score the Chronos sessions in the session history")
    p.add_argument("--all-runs", action="store_true",
                   help="with --stored: every session, not only the latest of each environment")
    p.add_argument("--concurrency", type=int, default=2, metavar="N", help="sessions at once (default 2)")
    p.add_argument("--out", metavar="FILE.json", help="write every session's verdict and the tables here")
    p.add_argument("--no-store", action="store_true", help="do not save the sessions in the session history")
    p.add_argument("--envs", dest="sub_envs", action="append", default=[], metavar="PATH", help="extra scenario folder or file")
    p.set_defaults(func=run_eval)


def select(environments: list[Any], wanted: list[str]) -> tuple[list[Any], list[str]]:
    """The Chronos scenarios matching any id or id prefix, a prefix may end mid-part
    (`chronos/car`); see `cli.batch.select_environments`."""
    from proactive_tui.cli.batch import select_environments

    return select_environments(environments, "chronos", wanted, bare_prefix=True)


def print_tables(console: Any, result: dict[str, ChronosMetrics]) -> None:
    from rich.table import Table
    from rich.text import Text

    if not result:
        console.print(Text("no Chronos session reached a verdict: nothing to score", style="yellow"))
        return
    for tier, m in result.items():
        table = Table(title=f"Chronos, {tier} tier ({m.sessions} sessions)", title_justify="left")
        for column in ("positive success", "negative success", "overall success", "action accuracy", "status accuracy"):
            table.add_column(column, justify="right")
        table.add_row(rate(m.positive_success, m.positive_sessions), rate(m.negative_success, m.negative_sessions),
                      overall(m), pct(m.action_accuracy), pct(m.status_accuracy))
        console.print(table)
        if m.paired_samples:
            console.print(Text(f"  branching samples with both branches run: {m.paired_samples}; "
                               f"both branches right: {rate(m.paired_success, m.paired_samples)}"))
    console.print(Text("overall = the mean of the positive- and negative-branch rates (each branch weighs the same); "
                       "accuracies pool every agent turn of the tier", style="dim"))


def run_eval(args: argparse.Namespace) -> int:
    import asyncio

    from rich.console import Console
    from rich.text import Text

    from proactive_tui.config import ConfigError, load_config
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.envs import load_default
    from proactive_tui.families.chronos import family
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
    base = {flag.setting: getattr(args, flag.dest) for flag in family.run_flags
            if getattr(args, flag.dest, None) is not None}
    roles = None
    if args.stored:
        rows = stored_rows(args.env_ids, latest=not args.all_runs, err=err)
        if rows is None:
            return 1
    else:
        try:
            config = load_config()
            roles = resolve_roles(config.roles, cli={role: {"model": model, "api_base": args.api_base} for role, model in
                                                     (("agent", args.agent), ("user", args.user), ("judge", args.judge))})
        except (ConfigError, ValueError) as exc:
            err.print(Text(f"error: {exc}", style="red"))
            return 1
        envs, unmatched = select(load_default(list(config.envs) + list(args.envs or [])).environments, args.env_ids)
        if unmatched:
            err.print(Text(f"error: no Chronos scenario matches {', '.join(unmatched)} "
                           "(see `proactive-tui envs list`)", style="red"))
            return 1
        if not envs:
            err.print(Text("error: no Chronos scenarios to run", style="red"))
            return 1
        try:
            settings = family.settings_model(**base).model_dump()
        except Exception as exc:
            err.print(Text(f"error: invalid settings: {exc}", style="red"))
            return 1
        specs = [(env, SessionSpec(env_id=env.id, roles=roles, settings=settings)) for env in envs]
        seats = "oracle agent, scripted user" if args.reference else ", ".join(
            f"{seat}: {roles.for_role(seat).model}" for seat in family.seats)
        err.print(Text(f"{len(specs)} sessions, one per scenario  [{seats}]", style="dim"))
        rows = asyncio.run(run_sessions(specs, args.concurrency, store=not args.no_store, err=err,
                                        build=reference_session if args.reference else None))
    result = tables(rows)
    print_tables(console, result)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json_text({
            "source": "stored" if args.stored else ("reference" if args.reference else "run"),
            "models": {seat: roles.for_role(seat).model for seat in family.seats} if roles and not args.reference else {},
            "settings": base,
            "sessions": [r.model_dump(exclude={"action_correct", "status_correct"}) for r in rows],
            "tiers": {tier: m.model_dump() for tier, m in result.items()},
        }, indent=2), encoding="utf-8")
        err.print(Text(f"written to {out}", style="dim"))
    variants = sorted({r.prompt_variant for r in rows})
    if len(variants) > 1:
        err.print(Text(f"note: these sessions mix prompt variants ({', '.join(variants)})", style="yellow"))
    for r in rows:
        if r.success is None:
            err.print(Text(f"note: {r.env_id} has no verdict ({r.termination}, session {r.session_id}); left out",
                           style="yellow"))
    return 0


def reference_session(spec: Any, env: Any, gateway: Any) -> Any:
    """The oracle agent and the scripted user on the scenario (no model): the scoring's own check."""
    from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession
    from proactive_tui.families.chronos.settings import ChronosSettings
    from proactive_tui.families.chronos.testing import OracleAgent, ScriptedPersona

    return ChronosSession(env, ChronosSeats(agent=OracleAgent(), user=ScriptedPersona()), ChronosSettings(**spec.settings))


def stored_rows(wanted: list[str], latest: bool, err: Any) -> list[SessionRow] | None:
    """Rows of the Chronos sessions in the store matching the ids or prefixes (all for none); the
    newest of each environment unless `latest` is off. None when the store cannot be read."""
    from rich.text import Text

    from proactive_tui.store import StoreError, open_store
    from proactive_tui.store.queries import load_record

    try:
        db = open_store()
    except StoreError as exc:
        err.print(Text(f"error: {exc}", style="red"))
        return None
    try:
        found = db.sessions(family="chronos")  # newest first
        if wanted:
            found = [s for s in found if any(s.env_id == w or s.env_id.startswith(w) for w in wanted)]
        seen: set[str] = set()
        rows = []
        for s in found:
            if latest and s.env_id in seen:
                continue
            seen.add(s.env_id)
            rows.append(row_of(load_record(db, s.id)))
    finally:
        db.close()
    return sorted(rows, key=lambda r: r.env_id)


async def run_sessions(specs: list[tuple[Any, Any]], concurrency: int, store: bool, err: Any,
                       build: Callable[[Any, Any, Any], Any] | None = None) -> list[SessionRow]:
    """Run and store every (environment, spec) as `cli.batch.run_batch` does; `build` replaces the
    factory (the reference seats)."""
    from proactive_tui.cli.batch import run_batch

    def describe(row: SessionRow) -> str:
        verdict = "n/a" if row.success is None else ("success" if row.success else "failure")
        return (f"  {row.env_id} [{row.branch}, {row.tier}]: {verdict} ({row.reason}) · "
                f"{row.turns} turns (session {row.session_id})")

    return await run_batch(specs, concurrency, store, err, row_of, describe, build=build)
