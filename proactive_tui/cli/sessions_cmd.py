"""`proactive-tui sessions list|show|delete|resume`: the session history from a script.

Every session (playground or `run`) is recorded in the session database as it happens; these
commands read it through `proactive_tui.store`, the same API the playground's history screen
uses. Ids may be shortened to any unique prefix. Problems with the database are reported in one
plain line (exit 1), never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from proactive_tui.textsafe import json_text


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
    resume.add_argument("--api-base", metavar="URL", help="call every model seat at this base URL instead of the recorded one")
    resume.add_argument("--out", metavar="FILE.json", help="write the run record here")
    resume.add_argument("--no-store", action="store_true", help="do not save the resumed session in the history")
    resume.add_argument("--quiet", action="store_true", help="print only the final scores")
    resume.set_defaults(func=run_resume)


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 1


def _open():
    from proactive_tui.store import open_store

    return open_store()


def headline_text(headline: dict[str, Any]) -> str:
    parts = []
    for key, value in headline.items():
        if key in ("ended", "turns", "messages") or value is None:
            continue
        parts.append(f"{key} {value}/10" if key in ("overall", "plan") and isinstance(value, int) else f"{key} {value}")
    return " · ".join(parts) or "-"


def short_time(ts: str) -> str:
    return ts[:16].replace("T", " ") if ts else "-"


def run_list(args: argparse.Namespace) -> int:
    from proactive_tui.store import StoreError, list_sessions

    try:
        with _open() as store:
            rows = list_sessions(store, env_id=args.env, family=args.family, limit=args.limit)
    except StoreError as exc:
        return _fail(str(exc))
    if args.json:
        for row in rows:
            print(json_text(row.model_dump()))
        return 0
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    if not rows:
        console.print(Text("no sessions recorded yet" + (" for this filter" if args.env or args.family else "")
                           + ": run one with `proactive-tui run ENV_ID` or in the playground", style="dim"))
        return 0
    status_style = {"finished": "green", "running": "cyan", "interrupted": "yellow", "cancelled": "yellow", "error": "red"}
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
        table.add_column("turns", justify="right")
        table.add_column("scores")
    for row in rows:
        agent = "person" if "agent" in row.human_seats else row.models.get("agent", "")
        status = row.status + (" (resumed)" if row.resumed_from else "")
        humans = f" · human: {', '.join(row.human_seats)}" if row.human_seats else ""
        turns = row.headline.get("turns", row.headline.get("messages"))
        turns_text = "-" if turns is None else str(turns)
        status_cell = Text(status, style=status_style.get(row.status, ""))
        if wide:
            table.add_row(Text(row.id), Text(short_time(row.created_at)), Text(row.env_id), Text(agent), status_cell,
                          Text(turns_text), Text(headline_text(row.headline) + humans))
        else:
            detail = " · ".join(x for x in (agent, f"{turns_text} turns", headline_text(row.headline) + humans) if x.strip())
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
    except StoreError as exc:
        return _fail(str(exc))
    if args.json:
        from proactive_tui.export.formats.common import scrub

        print(json_text(scrub(record), indent=2))
        return 0
    from rich.console import Console
    from rich.text import Text

    from proactive_tui.export.rich_view import transcript

    console = Console(highlight=False)
    console.print(transcript(record))
    status = effective_status(row) if row else "?"
    note = f"status: {status}"
    from proactive_tui.core import registry

    family = registry.find(record.family)
    if status in ("interrupted", "cancelled", "error") and family is not None and family.resumable:
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
                    print("kept")
                    return 0
            delete_session(store, session_id)
    except StoreError as exc:
        return _fail(str(exc))
    except EOFError:
        print("kept")
        return 0
    print(f"deleted session {session_id}")
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
    print(f"resuming session {plan.session_id} after {plan.turns} complete turn{'s' * (plan.turns != 1)}", file=sys.stderr)
    from proactive_tui.core.spec import UnsupportedFamily

    runner = HeadlessRun(spec, plan.env, args.out, args.quiet, store=not args.no_store, resume_from=plan.record)
    try:
        return asyncio.run(runner.main())
    except UnsupportedFamily as exc:
        return _fail(str(exc))
