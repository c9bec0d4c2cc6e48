"""`proactive-tui run ENV_ID`: run one session headless, streamed to the terminal.

The same engine as the playground. `--user human` lets a person play the simulated user on
stdin; `--out` writes the run record (also after Ctrl-C, with what exists). Exit codes: 0 for a
completed session, 1 on error, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys

FAMILY_RUNNERS = ("proactiveeval", "proactivebench", "chronos")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("run", help="run one session headless and print it (scripts, CI, batch)")
    p.add_argument("env_id", metavar="ENV_ID", help="e.g. proactiveeval/recommendation/fair/0")
    p.add_argument("--agent", metavar="MODEL", help="litellm model for the agent (default local/smollm2)")
    p.add_argument("--user", metavar="MODEL|human", help="model for the simulated user, or 'human' to play it on stdin")
    p.add_argument("--judge", metavar="MODEL", help="model for the judge")
    p.add_argument("--api-base", metavar="URL", help="OpenAI-compatible base URL for every model seat")
    p.add_argument("--agreeableness", choices=("low", "medium", "high"))
    p.add_argument("--max-turns", type=int, metavar="N")
    p.add_argument("--memory-turns", type=int, metavar="N")
    p.add_argument("--no-planning", action="store_true", help="skip target planning (task A)")
    p.add_argument("--own-plan", action="store_true", help="guide with the agent's own plan instead of the reference")
    p.add_argument("--live", action="store_true", help="score the guidance after every turn too")
    p.add_argument("--seed", type=int)
    bench = p.add_argument_group("proactivebench sessions (--user MODEL is the reward judge; --user human: accept/reject/skip on stdin)")
    bench.add_argument("--retries", type=int, metavar="N", help="after a rejection the agent may answer the event again, up to N times (default 0)")
    bench.add_argument("--candidates", type=int, choices=(1, 3), help="tasks proposed per event; with 3 an event counts as accepted if any one is")
    bench.add_argument("--no-feedback", action="store_true", help="do not show the agent the user's earlier verdicts")
    bench.add_argument("--max-events", type=int, metavar="N", help="stop after the first N events of the trace")
    p.add_argument("--out", metavar="FILE.json", help="write the run record here")
    p.add_argument("--no-store", action="store_true", help="do not save this session in the session history")
    p.add_argument("--envs", action="append", default=[], metavar="PATH")
    p.add_argument("--quiet", action="store_true", help="print only the final scores")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from proactive_tui.cli.headless import HeadlessRun, SetupError

    try:
        runner = HeadlessRun.from_args(args)
    except SetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return asyncio.run(runner.main())
