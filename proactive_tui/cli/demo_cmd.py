"""`proactive-tui demo SESSION_OR_FILE [--speed X] [--step]`: play a recorded session in the playground.

The session is read before the terminal switches to the playground, so a wrong id or file is one
line on stderr (exit 1), not a screen. See `services.demo` for the pacing and why a run-record file
plays only when its session is in the store.
"""

from __future__ import annotations

import argparse
import sys

from proactive_tui.textsafe import say


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("demo", help="replay a recorded session at its real pace (or faster, or step by step): "
                              "no keys, no model calls, nothing recorded")
    p.add_argument("session", metavar="SESSION_OR_FILE", help="a session id (or unique prefix) from "
                   "`sessions list`, or a run-record file whose session is in the store")
    p.add_argument("--speed", type=float, default=1.0, metavar="X",
                   help="times the recorded pace (2: twice as fast; 0: step by step). No single wait is longer "
                   "than a few seconds, whatever the recording")
    p.add_argument("--step", action="store_true", help="start paused: s plays one turn, a plays on, p pauses again")
    p.set_defaults(func=run)


def prepare(args: argparse.Namespace):  # -> DemoPlan; raises DemoError
    from proactive_tui.services.demo import DemoError, demo_plan
    from proactive_tui.store import StoreError, open_store

    if args.speed < 0:
        raise DemoError(f"--speed must be 0 (step by step) or more, not {args.speed:g}")
    try:
        with open_store() as store:
            return demo_plan(store, args.session)
    except StoreError as exc:
        raise DemoError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from proactive_tui.services.demo import DemoError

    try:
        plan = prepare(args)
    except DemoError as exc:
        say(f"error: {exc}", file=sys.stderr)
        return 1
    from proactive_tui.ui.app import ProactiveApp

    app = ProactiveApp(extra_envs=list(getattr(args, "envs", []) or []), demo=(plan, args.speed, args.step))
    app.run()
    return app.return_code or 0
