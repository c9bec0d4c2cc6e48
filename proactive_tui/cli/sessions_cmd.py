"""`proactive-tui sessions list|show|delete|resume`: the session history from a script.

Every session (playground or `run`) is recorded in the session database as it happens; these
commands read it through `proactive_tui.store`, the same API the playground's history screen
uses. Ids may be shortened to any unique prefix. Problems with the database are reported in one
plain line (exit 1), never as a traceback.
"""

from __future__ import annotations

import argparse
import sys

from proactive_tui.textsafe import json_text, plain, say


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    sessions = subparsers.add_parser("sessions", help="list, show, delete and resume recorded sessions")
    sub = sessions.add_subparsers(title="sessions commands", metavar="ACTION", required=True)

    listing = sub.add_parser("list", help="recorded sessions, newest first, with headline scores")
    listing.add_argument("--env", metavar="ENV_ID", help="only sessions of this environment (or id prefix, e.g. proactiveeval/persuasion)")
    listing.add_argument("--family", help="only this family")
    listing.add_argument("--limit", type=int, metavar="N", help="at most N sessions")
    listing.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    listing.set_defaults(func=run_list)

    show = sub.add_parser("show", help="one session: header, transcript and scores")
    show.add_argument("session_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="print the run record as JSON")
    show.set_defaults(func=run_show)

    delete = sub.add_parser("delete", help="delete a session and its event log")
    delete.add_argument("session_id", metavar="ID")
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    delete.set_defaults(func=run_delete)

    resume = sub.add_parser("resume", help="continue an interrupted session from its last complete turn (headless)")
    resume.add_argument("session_id", metavar="ID")
    _headless_options(resume, record="the run record", saved="the resumed session")
    resume.set_defaults(func=run_resume)

    fork = sub.add_parser("fork", help="branch a session at a turn: edit or regenerate one reply, then run on (headless)",
                          description="Branch a recorded session at a turn: the branch keeps the session's turns "
                          "before that point (read from it, not copied), changes the reply there (edited from "
                          "--edit-file/--edit, or asked again, of another model with --agent/--user/--judge, "
                          "at another --temperature or with an added --instruction), and runs on from there. "
                          "The original stays as it was.")
    fork.add_argument("session_id", metavar="ID")
    fork.add_argument("--turn", type=int, metavar="N", help="the turn to fork at (ProactiveEval: dialogue turn; "
                      "ProactiveBench: trace event; Chronos: turn); --list shows them")
    fork.add_argument("--seat", choices=("agent", "user"), default="agent",
                      help="whose reply at that turn changes (default agent; ProactiveBench's user seat gives the verdict)")
    fork.add_argument("--edit-file", metavar="FILE", help="the edited reply, read from this file (UTF-8)")
    fork.add_argument("--edit", metavar="TEXT", help="the edited reply, given on the command line")
    fork.add_argument("--instruction", metavar="TEXT", default="", help="regenerate the reply with this added to the seat's system prompt")
    fork.add_argument("--temperature", type=float, metavar="T", help="regenerate with the forked seat at this temperature (and keep it for the branch)")
    for seat in ("agent", "user", "judge"):
        fork.add_argument(f"--{seat}", metavar="MODEL", help=f"the branch's {seat} seat model (from the fork point on)")
    _headless_options(fork, record="the branch's run record", saved="the branch")
    fork.add_argument("--list", action="store_true", help="list the replies this session can be forked at, and exit")
    fork.set_defaults(func=run_fork)

    rerun = sub.add_parser("rerun", help="run a recorded session again against a new agent, the user's turns frozen or simulated",
                           description="Run a recorded session again with another agent model: same environment, "
                           "settings, seed, user and judge models. By default the user's recorded turns are sent "
                           "again verbatim, in order (frozen), so a score difference is the agent's; "
                           "--simulated-user lets the user model answer the new agent. Prints the original's and "
                           "the re-run's headline scores side by side.")
    rerun.add_argument("session_id", metavar="ID")
    rerun.add_argument("--agent", metavar="MODEL", required=True, help="the new agent's model")
    rerun.add_argument("--simulated-user", action="store_true", help="let the user model answer (default: frozen turns)")
    _headless_options(rerun, record="the re-run's run record", saved="the re-run")
    rerun.set_defaults(func=run_rerun)

    tree = sub.add_parser("tree", help="a session's branches (and theirs), with each branch's score differences")
    tree.add_argument("session_id", metavar="ID")
    tree.add_argument("--json", action="store_true", help="print the tree as JSON")
    tree.set_defaults(func=run_tree)


def _headless_options(parser: argparse.ArgumentParser, record: str, saved: str) -> None:
    """The options every command that runs a stored session again shares (resume, fork, rerun)."""
    parser.add_argument("--api-base", metavar="URL", help="call every model seat at this base URL instead of the recorded one")
    parser.add_argument("--out", metavar="FILE.json", help=f"write {record} here")
    parser.add_argument("--no-store", action="store_true", help=f"do not save {saved} in the history")
    parser.add_argument("--quiet", action="store_true", help="print only the final scores")


def _fail(message: str) -> int:
    say(f"error: {message}", file=sys.stderr)
    return 1


def _open():
    from proactive_tui.store import open_store

    return open_store()


def short_time(ts: str) -> str:
    return ts[:16].replace("T", " ") if ts else "-"


def run_list(args: argparse.Namespace) -> int:
    from proactive_tui.core.writers import writers_text
    from proactive_tui.store import StoreError, list_sessions
    from proactive_tui.store.queries import headline_text, turn_unit

    try:
        with _open() as store:
            rows = list_sessions(store, env_id=args.env, family=args.family, limit=args.limit)
    except StoreError as exc:
        return _fail(str(exc))
    if args.json:
        for row in rows:
            say(json_text(row.model_dump()))
        return 0
    from rich.table import Table
    from rich.text import Text

    from proactive_tui.cli.printer import SafeConsole

    console = SafeConsole(highlight=False)
    if not rows:
        console.print(Text("no sessions recorded yet" + (" for this filter" if args.env or args.family else "")
                           + ": run one with `proactive-tui run ENV_ID` or in the playground", style="dim"))
        return 0
    status_style = {"finished": "green", "running": "cyan", "interrupted": "yellow", "stopped": "yellow", "error": "red"}
    # Wide: one row per session. Narrow (80 columns): the agent, turns and scores go on a second
    # line under the environment, so no column is squeezed until model names wrap letter by letter.
    wide = console.width >= 120
    table = Table(box=None, pad_edge=False)
    table.add_column("id", no_wrap=True, style="bold")
    if wide:
        table.add_column("started (UTC)", no_wrap=True)
    table.add_column("environment", overflow="fold")  # ids are what a person copies: folded, never cut
    if wide:
        table.add_column("agent", overflow="fold")
    table.add_column("status", no_wrap=True)
    if wide:
        table.add_column("length", justify="right")  # in the family's unit: turns, events, exchanges
        table.add_column("scores")
    for row in rows:
        agent = writers_text(row.models.get("agent", ""), row.writers.get("agent", []), played="agent" in row.human_seats,
                             you="person")
        status = row.status + (" (resumed)" if row.resumed_from else "") + (" (branch)" if row.forked_from else "")
        humans = f" · human: {', '.join(row.human_seats)}" if row.human_seats else ""
        turns = row.headline.get("turns", row.headline.get("messages"))
        turns_text = "-" if turns is None else f"{turns} {turn_unit(row.family).plural}"
        status_cell = Text(status, style=status_style.get(row.status, ""))
        if wide:
            table.add_row(Text(row.id), Text(short_time(row.created_at)), Text(row.env_id), Text(agent), status_cell,
                          Text(turns_text), Text(headline_text(row.headline) + humans))
        else:
            detail = " · ".join(x for x in (agent, turns_text, headline_text(row.headline) + humans) if x.strip())
            table.add_row(Text.assemble(row.id, "\n", (short_time(row.created_at), "dim")),
                          Text.assemble(row.env_id, "\n", (detail, "dim")), status_cell)
    console.print(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    from proactive_tui.store import StoreError, effective_status, load_record, resolve_id

    try:
        with _open() as store:
            session_id = resolve_id(store, args.session_id)
            row = store.session(session_id)
            record = load_record(store, session_id)
            gradings = store.gradings(session_id)
    except StoreError as exc:
        return _fail(str(exc))
    if args.json:
        from proactive_tui.export.formats.common import scrub

        say(json_text(scrub(record), indent=2))
        return 0
    from rich.text import Text

    from proactive_tui.cli.printer import SafeConsole
    from proactive_tui.export.rich_view import transcript

    console = SafeConsole(highlight=False)
    console.print(transcript(record))
    if gradings:
        from proactive_tui.store.queries import headline_text

        console.print(Text(plain(f"re-gradings ({len(gradings)}; the scores above are the session's own):"), style="bold"))
        for grading in gradings:
            console.print(Text(f"  {short_time(grading.created_at)}  {grading.judge}  "
                               f"{headline_text(grading.summary or {})}  (grading {grading.id})"), soft_wrap=True)
    for comparison in record.comparisons:  # a side of `compare`: the vote, said with the session
        verdict = {"won": "voted better", "lost": "the other side voted better", "tie": "voted a tie",
                   None: "no vote yet"}.get(comparison["verdict"], comparison["verdict"])
        others = ", ".join(s for s in comparison["sessions"] if s != session_id)
        reason = f": {comparison['reason']}" if comparison["reason"] else ""
        console.print(Text(f"comparison {comparison['id']}: side {comparison['side']} against {others}"
                           f"{' (blind)' if comparison['blind'] else ''}; {verdict}{reason}"), soft_wrap=True)
    status = effective_status(row) if row else "?"
    note = f"status: {status}"
    from proactive_tui.core import registry

    family = registry.find(record.family)
    if status in ("interrupted", "stopped", "error") and family is not None and family.parts.resume is not None:
        note += f"; continue it with `proactive-tui sessions resume {session_id}`"
    console.print(Text(note, style="dim"))
    return 0


def run_delete(args: argparse.Namespace) -> int:
    from proactive_tui.store import StoreError, delete_session, resolve_id

    try:
        with _open() as store:
            session_id = resolve_id(store, args.session_id)
            if not args.yes:
                if not sys.stdin.isatty():
                    return _fail(f"deleting session {session_id} needs --yes when not run interactively")
                answer = input(f"delete session {session_id} and its event log? [y/N] ")
                if answer.strip().lower() not in ("y", "yes"):
                    say("kept")
                    return 0
            delete_session(store, session_id)
    except StoreError as exc:
        return _fail(str(exc))
    except EOFError:
        say("kept")
        return 0
    say(f"deleted session {session_id}")
    return 0


def run_resume(args: argparse.Namespace) -> int:
    import asyncio

    from proactive_tui.cli.headless import HeadlessRun
    from proactive_tui.store import StoreError, resolve_id, resume_spec

    try:
        with _open() as store:
            plan = resume_spec(store, resolve_id(store, args.session_id))
    except StoreError as exc:
        return _fail(str(exc))
    spec = plan.spec
    if args.api_base:
        roles = spec.roles.model_copy(update={
            role: spec.roles.for_role(role).model_copy(update={"api_base": args.api_base}) for role in ("agent", "user", "judge")
        })
        spec = spec.model_copy(update={"roles": roles})
    say(f"resuming session {plan.session_id} after {plan.turns} complete turn{'s' * (plan.turns != 1)}", file=sys.stderr)
    from proactive_tui.core.spec import UnsupportedFamily

    runner = HeadlessRun(spec, plan.env, args.out, args.quiet, store=not args.no_store, resume_from=plan.record,
                         branch=plan.branch)
    try:
        return asyncio.run(runner.main())
    except UnsupportedFamily as exc:
        return _fail(str(exc))


def _edit_text(args: argparse.Namespace) -> str | None:
    if args.edit_file and args.edit is not None:
        raise ValueError("give the edited reply once: --edit-file or --edit")
    if args.edit_file:
        from pathlib import Path

        try:
            return Path(args.edit_file).read_text(encoding="utf-8").rstrip("\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"--edit-file {args.edit_file}: {exc}") from None
    return args.edit


def run_fork(args: argparse.Namespace) -> int:
    import asyncio

    from proactive_tui.cli.headless import HeadlessRun
    from proactive_tui.core import registry
    from proactive_tui.core.fork import ForkChange, ForkError, ForkPoint
    from proactive_tui.store import StoreError, load_record, resolve_id
    from proactive_tui.store.queries import fork_plan, stored_spec

    try:
        with _open() as store:
            session_id = resolve_id(store, args.session_id)
            record = load_record(store, session_id)
            family = registry.find(record.family)
            if family is None or family.fork is None:
                return _fail(f"session {session_id}: {record.family} sessions cannot be forked")
            steps = family.fork.steps(record)
            if args.list or args.turn is None:
                if not args.list:
                    say("error: --turn N is needed (the replies it can be forked at:)", file=sys.stderr)
                for step in steps:
                    say(f"--turn {step.turn} --seat {step.seat}\t{plain(step.label)}\t{_one_line(plain(step.line()))}")
                return 0 if args.list else 2
            text = _edit_text(args)
            if text is not None and (args.instruction or args.temperature is not None):
                return _fail("--instruction and --temperature regenerate the reply; an edited reply is not asked again")
            from proactive_tui.core.fork import branch_spec

            models = {seat: getattr(args, seat) for seat in ("agent", "user", "judge") if getattr(args, seat)}
            spec, changed = branch_spec(stored_spec(store, session_id), models, args.temperature, args.seat, args.api_base)
            point = ForkPoint(turn=args.turn, seat=args.seat)
            change = ForkChange(text=text, instruction=args.instruction, temperature=args.temperature)
            plan = fork_plan(store, session_id, point, change,
                             spec=spec, changed_seats=changed)
    except (StoreError, ValueError) as exc:
        return _fail(str(exc))
    from proactive_tui.core.fork import check_fork

    try:
        check_fork(plan)
    except ForkError as exc:
        return _fail(str(exc))
    step = next(s for s in steps if (s.turn, s.seat) == (point.turn, point.seat))
    what = "edited" if text is not None else "asked again"
    say(f"forking session {session_id} at {step.label}: the reply is {what}", file=sys.stderr)
    from proactive_tui.cli.headless import SetupError

    runner = HeadlessRun(plan.spec, plan.env, args.out, args.quiet, store=not args.no_store, fork=plan)
    try:
        runner.check_seats()
        return asyncio.run(runner.main())
    except SetupError as exc:
        return _fail(str(exc))
    except ForkError as exc:
        return _fail(str(exc))


def _one_line(text: str, width: int = 70) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def run_tree(args: argparse.Namespace) -> int:
    from proactive_tui.core.fork import describe_fork
    from proactive_tui.store import StoreError, resolve_id
    from proactive_tui.store.queries import differences_text, headline_text, score_differences, session_tree

    try:
        with _open() as store:
            session_id = resolve_id(store, args.session_id)
            root = session_tree(store, session_id)
    except StoreError as exc:
        return _fail(str(exc))
    if args.json:
        say(json_text(root.model_dump(), indent=2))
        return 0
    from rich.text import Text

    from proactive_tui.cli.printer import SafeConsole

    console = SafeConsole(highlight=False)
    parents = root.parents()
    for depth, node in root.walk():
        line = Text("  " * depth + ("└ " if depth else ""))
        line.append(node.id, style="bold" + (" reverse" if node.id == session_id else ""))
        summary = node.summary
        if node.forked_from is not None:
            line.append(f"  {describe_fork(node.forked_from)}", style="cyan")
        line.append(f"  {summary.status}", style="dim")
        line.append(f"  {headline_text(summary.headline)}")
        parent = parents.get(node.id)
        if parent is not None:
            diffs = score_differences(parent.summary.headline, summary.headline)
            if diffs:
                line.append(f"  (vs parent: {differences_text(diffs)})", style="yellow")
        console.print(line, soft_wrap=True)  # the terminal wraps it: an id is never split by us
    return 0


def run_rerun(args: argparse.Namespace) -> int:
    import asyncio

    from proactive_tui.cli.headless import HeadlessRun, SetupError
    from proactive_tui.core.fork import branch_spec
    from proactive_tui.core.rerun import RerunError, RerunPlan, check_rerun
    from proactive_tui.store import StoreError, load_record, resolve_id
    from proactive_tui.store.queries import (
        session_environment, differences_text, headline, headline_text, score_differences, stored_spec,
    )

    try:
        with _open() as store:
            session_id = resolve_id(store, args.session_id)
            original = load_record(store, session_id)
            spec, _changed = branch_spec(stored_spec(store, session_id), {"agent": args.agent}, api_base=args.api_base)
            env = session_environment(original)
    except StoreError as exc:
        return _fail(str(exc))
    plan = RerunPlan(original_id=session_id, original=original, spec=spec, env=env,
                     user="simulated" if args.simulated_user else "frozen")
    try:
        check_rerun(plan)
    except RerunError as exc:
        return _fail(str(exc))
    say(f"re-running session {session_id} against {args.agent}, the user "
        f"{'simulated' if args.simulated_user else 'frozen'}", file=sys.stderr)
    runner = HeadlessRun(spec, env, args.out, args.quiet, store=not args.no_store, rerun=plan)
    try:
        runner.check_seats()
        code = asyncio.run(runner.main())
    except (SetupError, RerunError) as exc:
        return _fail(str(exc))
    if runner.record is not None:
        before, after = headline(original), headline(runner.record)
        say(f"original {session_id}: {headline_text(before)}")
        say(f"re-run   {runner.record.id}: {headline_text(after)}")
        diffs = [(k, a, b) for k, a, b in score_differences(before, after) if k != "ended"]
        say("differences: " + (differences_text(diffs) or "none in the headline scores"))
    return code
