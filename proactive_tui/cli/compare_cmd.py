"""`proactive-tui compare ENV_ID --agent A --agent B`: agents side by side, then a person's vote.

    compare ENV_ID --agent A --agent B [--agent C] [--user M] [--judge M] [--seed N] [--blind [--shuffle-seed N]] [--out DIR]
    compare vote COMPARISON_ID (A|B|tie|SESSION_ID) [--reason TEXT]
    compare list
    compare import-study FAMILY [FOLDER]

`compare ENV_ID ...` is `compare run ENV_ID ...` (main.py inserts `run`, as the issue writes the
command without it). Every side gets the same environment, user and judge model and seed
(`services.compare`); the sides run at once, each recorded in the session history like `run`. With
`--blind` which agent is A and which is B is shuffled (seeded per comparison, the seed and the
order recorded with it and printed: "blind: sides shuffled (seed N)"), and the sides are printed
as A and B (no model names) until `compare vote`. The family's
own flags (`--max-turns`, ...) apply to every side. `compare import-study proactbench` loads a
family's published pairwise study (`services.compare.PairwiseStudy`): each pair becomes a blind
comparison to vote on with `compare vote` (or the playground's pairs to vote on), and each
recorded vote a voted comparison with its voter. Model text is never printed here: only
scores, so there is nothing to escape.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from proactive_tui.textsafe import json_text, plain, say

ACTIONS = ("run", "vote", "list", "import-study")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    compare = subparsers.add_parser("compare", help="run two or more agents side by side on one environment; vote blind")
    sub = compare.add_subparsers(title="compare commands", metavar="ACTION", required=True)

    run = sub.add_parser("run", help="run the sides (also `compare ENV_ID ...` without `run`)", allow_abbrev=False)
    run.add_argument("env_id", metavar="ENV_ID")
    run.add_argument("--agent", metavar="MODEL", action="append", default=[], required=True,
                     help="an agent, one per side (two or more, in the order A, B, ...): a litellm model, or an ACP "
                          "agent program (acp:NAME from the config file, or acp:COMMAND ARGS...)")
    run.add_argument("--user", metavar="MODEL", help="model for the simulated user of every side")
    run.add_argument("--judge", metavar="MODEL", help="model for the judge of every side (families with a judge seat)")
    run.add_argument("--api-base", metavar="URL", help="OpenAI-compatible base URL for every model seat")
    run.add_argument("--seed", type=int, metavar="N", help="seed sent with every model call of every side")
    run.add_argument("--blind", action="store_true",
                     help="shuffle which agent is A and B, and show the sides as A and B until a vote")
    run.add_argument("--shuffle-seed", type=int, metavar="N",
                     help="with --blind: the seed of the shuffle (default: drawn per comparison; always recorded)")
    run.add_argument("--out", metavar="DIR", help="write each side's run record and comparison.json here")
    run.add_argument("--no-store", action="store_true", help="do not save the sessions (no vote is then possible)")
    run.add_argument("--envs", dest="sub_envs", action="append", default=[], metavar="PATH",
                     help="extra environment folder or file, loaded beside the samples (repeatable)")
    run.add_argument("--json", action="store_true", help="print comparison.json instead of a table")
    from proactive_tui.llm import model_flags

    model_flags.add_structured_mode(run)
    run.set_defaults(func=run_compare, accepts_extra=True)

    vote = sub.add_parser("vote", help="vote for the better side of a comparison (reveals a blind one)")
    vote.add_argument("comparison_id", metavar="COMPARISON_ID")
    vote.add_argument("winner", metavar="A|B|tie|SESSION_ID")
    vote.add_argument("--reason", default="", metavar="TEXT", help="why that side is better")
    vote.set_defaults(func=run_vote)

    listing = sub.add_parser("list", help="the comparisons recorded, oldest first, with their votes")
    listing.add_argument("--json", action="store_true", help="print JSON lines")
    listing.add_argument("--unvoted", action="store_true", help="only the comparisons still waiting for your vote")
    listing.set_defaults(func=run_list)

    study = sub.add_parser("import-study", help="load a family's published pairwise study: its pairs to vote on "
                           "blind, its votes as votes")
    study.add_argument("family", metavar="FAMILY", help="the family whose study to import (proactbench)")
    study.add_argument("folders", metavar="FOLDER", nargs="*",
                       help="a folder holding the study's files (default: the copy the family ships)")
    study.set_defaults(func=run_import_study)


def _fail(message: str, code: int = 1) -> int:
    say(f"error: {message}", file=sys.stderr)
    return code


def plan_from_args(args: argparse.Namespace, extra: list[str]) -> tuple[Any, Any]:
    """(ComparePlan, env) from the command line; raises SetupError (headless.py) naming what is wrong."""
    from proactive_tui.cli.headless import SetupError
    from proactive_tui.cli.family_flags import parse_family_flags
    from proactive_tui.config import ConfigError, load_config
    from proactive_tui.core import registry
    from proactive_tui.services.compare import ComparePlan
    from proactive_tui.envs import load_default
    from proactive_tui.llm.settings import resolve_roles

    if len(args.agent) < 2:
        raise SetupError("a comparison needs two or more --agent models", usage=True)
    try:
        config = load_config()
    except ConfigError as exc:
        raise SetupError(str(exc)) from None
    env = load_default(list(config.envs) + list(args.envs or [])).get(args.env_id)
    if env is None:
        raise SetupError(f"no environment with id {args.env_id!r} (see `proactive-tui envs list`)")
    family = registry.find(env.family)
    if family is None:
        raise SetupError(f"{env.family} sessions are not available: that family is not installed")
    seed = args.seed
    try:
        # --seed is compare's own flag (every family), not the family's: keep it out of the family parser
        merged = parse_family_flags(family, args, extra)
    except ValueError as exc:
        raise SetupError(str(exc), usage=True) from None
    if args.judge and not family.judge_seat:
        raise SetupError(f"--judge does not apply to {family.name} sessions: they have no judge seat", usage=True)
    if args.shuffle_seed is not None and not args.blind:
        raise SetupError("--shuffle-seed applies to a --blind comparison only (a named one keeps the --agent order)",
                         usage=True)
    if (args.user or "").lower() == "human":
        raise SetupError("--user human does not apply to a comparison: both sides need the same simulated user",
                         usage=True)
    sides = []
    shared = None
    for model in args.agent:
        cli: dict[str, dict[str, Any]] = {role: {"model": value, "api_base": args.api_base}
                                          for role, value in (("agent", model), ("user", args.user), ("judge", args.judge))}
        roles = resolve_roles(config.roles, cli=cli)  # type: ignore[arg-type]
        sides.append(roles.agent)
        shared = shared or roles
    try:
        settings = family.settings_from_args(merged)
        settings.pop("seed", None)  # the plan's seed, added to the settings of families that take one
        plan = ComparePlan(env_id=env.id, agents=sides, user=shared.user, judge=shared.judge, seed=seed,
                           settings=settings, blind=args.blind, shuffle_seed=args.shuffle_seed)
    except Exception as exc:
        raise SetupError(f"invalid settings: {exc}") from None
    from proactive_tui.evalrun.outpath import unwritable_reason

    if args.out:
        problem = unwritable_reason(str(Path(args.out) / "comparison.json"))
        if problem:
            raise SetupError(f"--out: {problem}")
    return plan, env


def run_compare(args: argparse.Namespace, extra: list[str] | None = None) -> int:
    import asyncio

    from proactive_tui.cli.headless import SetupError
    from proactive_tui.llm.preflight import check_seats
    from proactive_tui.core import registry
    from proactive_tui.services.compare import takes_seed_setting

    try:
        plan, env = plan_from_args(args, list(extra or []))
        family = registry.get(env.family)
        problems = []
        for index, spec in enumerate(plan.specs(seed_setting=takes_seed_setting(family))):
            problems += [f"side {chr(65 + index)}: {p.render()}" for p in check_seats(spec, family.seats)]
        if problems:
            raise SetupError(f"{len(problems)} seat(s) cannot run, so the comparison was not started:\n"
                             + "\n".join(f"  {p}" for p in problems))
    except SetupError as exc:
        return _fail(str(exc), 2 if exc.usage else 1)
    return asyncio.run(_run(args, plan, env))


def comparison_document(row: Any, table: Any, results: list[Any]) -> dict[str, Any]:
    """What comparison.json holds: the comparison (blind flag, vote), each side's session and
    model, and the per-turn table."""
    return {"comparison": row.model_dump(mode="json"),
            "sides": [{"letter": r.letter, "session_id": r.session_id, "agent_model": r.agent_model,
                       "error": r.error, "record": f"{r.letter}.json"} for r in results],
            "table": table.model_dump(mode="json")}


async def _run(args: argparse.Namespace, plan: Any, env: Any) -> int:
    from rich.text import Text

    from proactive_tui.cli.printer import SafeConsole
    from proactive_tui.services.compare import run_comparison, turn_table

    err = SafeConsole(stderr=True, highlight=False)
    store = None
    if not args.no_store:
        from proactive_tui.store import StoreError, open_store

        try:
            store = open_store()
        except StoreError as exc:
            err.print(Text(plain(f"warning: {exc}; this comparison will not be saved"), style="yellow"))
    names = ", ".join(f"{chr(65 + i)}" + ("" if plan.blind else f": {a.model}") for i, a in enumerate(plan.agents))
    err.print(Text(f"{env.id}  comparing {names}  [user: {plan.user.model}, judge: {plan.judge.model}"
                   f"{'' if plan.seed is None else f', seed {plan.seed}'}]", style="dim"))
    from proactive_tui.services.compare import shuffle_notice

    def started(row: Any) -> None:
        if shuffle_notice(row):
            err.print(Text(shuffle_notice(row), style="dim"))

    try:
        row, results = await run_comparison(plan, env, store=store, on_start=started,
                                            warn=lambda m: err.print(Text(plain(f"warning: {m}"), style="yellow")))
    finally:
        if store is not None:
            store.close()
    records = [r.record for r in results]
    table = turn_table(records)
    document = comparison_document(row, table, results)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for result in results:
            if result.record is not None:
                (out / f"{result.letter}.json").write_text(json_text(result.record, indent=2), encoding="utf-8")
        (out / "comparison.json").write_text(json_text(document, indent=2), encoding="utf-8")
    if args.json:
        say(json_text(document, indent=2))
    else:
        print_table(row, table, [r.agent_model for r in results], [r.session_id for r in results])
    for result in results:
        if result.error:
            err.print(Text(plain(f"side {result.letter} failed: {result.error}"), style="red"))
    if store is not None:
        err.print(Text(f"saved as comparison {row.id} (vote: proactive-tui compare vote {row.id} A|B|tie "
                       f"--reason TEXT)", style="dim"))
    if args.out:
        err.print(Text(plain(f"comparison written to {Path(args.out) / 'comparison.json'}"), style="dim"))
    failed = any(r.error or r.record is None or (r.record.termination and r.record.termination.reason == "error")
                 for r in results)
    return 1 if failed else 0


def _num(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _diff(value: Any) -> str:
    return "-" if value is None else f"{value:+g}"


def print_table(row: Any, table: Any, models: list[str], session_ids: list[str]) -> None:
    """The per-turn values, the differences to A, the final values and headline differences; the
    sides named by letter only while the comparison is blind and not voted on."""
    from rich.table import Table
    from rich.text import Text

    from proactive_tui.cli.printer import SafeConsole
    from proactive_tui.services.compare import letter, side_name

    console = SafeConsole(highlight=False)
    names = [side_name(row, i, models) for i in range(len(session_ids))]
    console.print(Text(plain(f"comparison {row.id}: {table.label} per {table.unit}, and each side minus A")))
    grid = Table()
    grid.add_column(table.unit, justify="right")
    for name in names:
        grid.add_column(Text(name), justify="right")
    for i in range(1, len(names)):
        grid.add_column(f"{letter(i)}-A", justify="right")
    for turn in table.rows:
        grid.add_row(str(turn.turn), *[_num(v) for v in turn.values], *[_diff(d) for d in turn.differences])
    grid.add_row(Text(table.final_label, style="bold"), *[_num(v) for v in table.finals],
                 *[_diff(d) for d in table.final_differences])
    console.print(grid)
    from proactive_tui.store.queries import headline_text, reason_word, turns_text

    for i, (name, head) in enumerate(zip(names, table.headlines)):
        counted = turns_text(table.family, head)
        console.print(Text(f"{name}: {counted + ' · ' if counted else ''}{headline_text(head)}  "
                           f"(ended: {reason_word(head.get('ended') or '-')}, session {session_ids[i]})"),
                      soft_wrap=True)
    for i, diffs in enumerate(table.headline_differences, start=1):
        if diffs:
            parts = ", ".join(f"{key} {a if a is not None else '-'} -> {b if b is not None else '-'}" for key, a, b in diffs)
            console.print(Text(plain(f"{letter(i)} vs A: {parts}")), soft_wrap=True)
        else:
            console.print(Text(plain(f"{letter(i)} vs A: same headline scores")))


def run_vote(args: argparse.Namespace) -> int:
    from proactive_tui.services.compare import CompareError, vote, vote_text
    from proactive_tui.store import StoreError, load_record, open_store

    try:
        store = open_store()
        try:
            row = vote(store, args.comparison_id, args.winner, args.reason)
            models = []
            for session_id in row.sessions:
                try:
                    models.append(load_record(store, session_id).models.get("agent", {}).get("model", "?"))
                except StoreError:
                    models.append("?")
        finally:
            store.close()
    except (CompareError, StoreError) as exc:
        return _fail(str(exc))
    from proactive_tui.services.compare import side_name

    say(f"vote saved for comparison {row.id}: {vote_text(row)}" + (f" ({row.reason})" if row.reason else ""))
    for index, session_id in enumerate(row.sessions):
        say(f"  {side_name(row, index, models)}: session {session_id}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from proactive_tui.services.compare import vote_text
    from proactive_tui.store import StoreError, open_store

    try:
        store = open_store()
        try:
            rows = store.comparisons()
        finally:
            store.close()
    except StoreError as exc:
        return _fail(str(exc))
    if args.json:
        for row in rows:
            say(json_text(row.model_dump(mode="json")))
        return 0
    if args.unvoted:
        rows = [r for r in rows if r.vote is None and not r.voter]
    if not rows:
        say("no comparisons waiting for a vote" if args.unvoted else "no comparisons recorded yet")
        return 0
    for row in rows:
        blind = (f" blind (sides shuffled, seed {row.shuffle_seed})" if row.shuffle_seed is not None
                 else " blind" if row.blind else "")
        voter = f" by {row.voter}" if row.voter else ""
        say(f"{row.id}  {row.env_id}  {len(row.sessions)} sides{blind}  vote{voter}: {vote_text(row)}")
    return 0


def run_import_study(args: argparse.Namespace) -> int:
    """Each folder (or the family's shipped copy) imported; a bad row or file is one warning line
    naming file, line and field, and the rest still imports (exit 1 if any)."""
    from proactive_tui.services.compare import CompareError, pairwise_study
    from proactive_tui.store import StoreError, open_store

    try:
        study = pairwise_study(args.family)
    except CompareError as exc:
        return _fail(str(exc))
    problems = 0
    try:
        store = open_store()
        try:
            for folder in args.folders or [None]:
                report = study.import_study(store, folder)
                say(f"{study.title} ({report.source}): {report.pairs_new} new pair(s) to vote on, {report.pairs_kept} "
                    f"already here; {report.votes_new} new vote(s), {report.votes_kept} already here; "
                    f"{report.files} vote file(s)")
                for problem in report.problems:
                    say(f"warning: {problem}", file=sys.stderr)
                problems += len(report.problems)
        finally:
            store.close()
    except StoreError as exc:
        return _fail(str(exc))
    say("vote blind: `proactive-tui compare list --unvoted`, then `proactive-tui compare vote ID A|B|tie`, "
        "or the playground's palette: Vote on study pairs")
    return 1 if problems else 0


def insert_run(argv: list[str]) -> list[str]:
    """`compare ENV_ID ...` as `compare run ENV_ID ...` (the issue's spelling), leaving
    `compare vote|list|run|-h` alone. Only when `compare` is the command (the first word after the
    global options), never a flag's value elsewhere (`run ENV --agent compare`)."""
    at = 0
    while at < len(argv) and argv[at].startswith("-"):
        at += 1 if "=" in argv[at] or argv[at] not in GLOBAL_VALUED else 2
    if at >= len(argv) or argv[at] != "compare":
        return argv
    following = argv[at + 1] if at + 1 < len(argv) else ""
    if following and following not in ACTIONS and following not in ("-h", "--help"):
        return [*argv[:at + 1], "run", *argv[at + 1:]]
    return argv


GLOBAL_VALUED = ("--envs", "--report", "--structured-mode")
"""The global options that take a value (main.build_parser)."""
