"""`proactive-tui regrade SESSION_ID... --judge MODEL`: run the judges again over stored sessions.

The dialogue is not run again: the new judge reads it as recorded (`services.regrade`). Each grading
is kept beside its session (which judge, when, what it decided) and the session's own grading
never changes; `sessions show ID` lists them. One session that cannot be re-graded (an unknown
id, a Chronos session, a judge that failed) is reported and the others still run; the exit
status is 1 when any failed.
"""

from __future__ import annotations

import argparse
import sys

from proactive_tui.textsafe import json_text, plain, say


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    regrade = subparsers.add_parser(
        "regrade", help="run the judges again over stored sessions with another judge model",
        description="Judge stored sessions again with --judge MODEL, without running their dialogue again. Each "
        "new grading is kept beside its session and the scores before and after are printed; the session's "
        "own grading never changes. ProactiveBench's judge is its user seat (the reward judge); Chronos "
        "sessions are graded by rules and cannot be re-graded.")
    regrade.add_argument("session_ids", nargs="+", metavar="SESSION_ID", help="session ids (or unique prefixes)")
    regrade.add_argument("--judge", required=True, metavar="MODEL", help="the new judge's model string")
    regrade.add_argument("--api-base", metavar="URL", help="call the judge at this base URL")
    regrade.add_argument("--json", action="store_true", help="print one JSON line per session")
    from proactive_tui.llm import model_flags

    model_flags.add_structured_mode(regrade)
    regrade.set_defaults(func=run_regrade)


def run_regrade(args: argparse.Namespace) -> int:
    import asyncio

    from proactive_tui.services.regrade import RegradeError, regrade_many
    from proactive_tui.store import StoreError, open_store

    try:
        with open_store() as store:
            results = asyncio.run(regrade_many(store, list(args.session_ids), args.judge, args.api_base))
    except StoreError as exc:
        say(f"error: {exc}", file=sys.stderr)
        return 1
    from rich.text import Text

    from proactive_tui.cli.printer import SafeConsole

    console, err = SafeConsole(highlight=False, soft_wrap=True), SafeConsole(stderr=True, highlight=False, soft_wrap=True)
    failed = 0
    for given, result in zip(args.session_ids, results):
        if isinstance(result, RegradeError):
            failed += 1
            if args.json:
                say(json_text({"session": given, "error": str(result)}))
            else:
                err.print(Text(plain(f"error: {result}")))
            continue
        if args.json:
            say(json_text({"session": result.session_id, "grading": result.grading.id, "judge": result.grading.judge,
                             "created_at": result.grading.created_at, "before": result.before, "after": result.after,
                             "changes": [c.model_dump() for c in result.changes]}))
            continue
        from proactive_tui.store.queries import headline_text

        line = Text()
        line.append(result.session_id, style="bold")
        line.append(f"  re-graded by {result.grading.judge} (grading {result.grading.id})\n")
        line.append(f"  before: {headline_text(result.before)}\n  after:  {headline_text(result.after)}\n")
        line.append(f"  {result.changes_text()}", style="yellow" if result.changes else "dim")
        console.print(line)
    return 1 if failed else 0
