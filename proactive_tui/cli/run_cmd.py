"""`proactive-tui run ENV_ID`: run one session headless, streamed to the terminal.

The same engine as the playground. `--user human` lets a person play the simulated user on
stdin; `--out` writes the run record (also after Ctrl-C, with what exists). Exit codes: 0 for a
completed session, 1 on error, 2 on a bad command line, 130 on Ctrl-C.

Flags come in two kinds: the common ones below, and each family's own (`Family.run_flags`),
parsed once the environment, and so its family, is known. A flag of another family is an error
that names the family, never silently ignored.
"""

from __future__ import annotations

import argparse
import sys

from proactive_tui.cli.family_flags import family_parser
from proactive_tui.textsafe import say


class _Help(argparse.Action):
    """-h/--help: the common flags, then the flags of ENV_ID's family (or of every family)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from proactive_tui.core import registry

        from proactive_tui.envs.sources import family_of

        env_id = getattr(namespace, "env_id", None)
        family = registry.find(family_of(env_id)) if env_id else None
        shown = [family] if family else list(registry.families().values())
        parser.print_help()
        for fam in shown:
            say(f"\n{fam.name} flags ({fam.title}):")
            family_parser(fam).print_help_lines()
        parser.exit()


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("run", help="run one session headless and print it (scripts, CI, batch)", add_help=False,
                              allow_abbrev=False)
    p.add_argument("-h", "--help", action=_Help, help="show this help (with ENV_ID first: that family's flags)")
    p.add_argument("env_id", metavar="ENV_ID", help="e.g. proactiveeval/recommendation/fair/0")
    p.add_argument("--agent", metavar="MODEL", help="the agent: a litellm model, or an ACP agent program (acp:NAME from the config file, or "
                        "acp:COMMAND ARGS...) (default local/smollm2)")
    p.add_argument("--user", metavar="MODEL|human", help="model for the simulated user (ProactiveBench: the reward judge), "
                                                         "or 'human' to play it on stdin")
    p.add_argument("--judge", metavar="MODEL", help="model for the judge (families with a judge seat)")
    p.add_argument("--api-base", metavar="URL", help="OpenAI-compatible base URL for every model seat")
    p.add_argument("--out", metavar="FILE.json", help="write the run record here")
    p.add_argument("--no-store", action="store_true", help="do not save this session in the session history")
    p.add_argument("--envs", dest="sub_envs", action="append", default=[], metavar="PATH",
                   help="extra environment folder or file, loaded beside the samples (repeatable)")
    p.add_argument("--quiet", action="store_true", help="print only the final scores")
    from proactive_tui.llm import model_flags

    model_flags.add_structured_mode(p)
    p.set_defaults(func=run, accepts_extra=True)


def run(args: argparse.Namespace, extra: list[str] | None = None) -> int:
    import asyncio

    from proactive_tui.cli.headless import HeadlessRun, SetupError

    try:
        runner = HeadlessRun.from_args(args, extra or [])
        runner.check_seats()  # fail fast: a seat that cannot run is named before any call
    except SetupError as exc:
        say(f"error: {exc}", file=sys.stderr)
        return 2 if exc.usage else 1
    return asyncio.run(runner.main())
