"""`proactive-tui`: with no subcommand it opens the playground; subcommands serve scripts."""

from __future__ import annotations

import argparse
import sys
from typing import Callable

from proactive_tui import __version__
from proactive_tui.cli import envs_cmd, eval_cmd, export_cmd, keys_cmd, locate_cmd, model_flags, run_cmd, sessions_cmd

# Each command module exposes `add_parser(subparsers)` which sets `func` on its parsers.
COMMAND_MODULES = [envs_cmd, keys_cmd, locate_cmd, run_cmd, eval_cmd, sessions_cmd, export_cmd]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="proactive-tui",
        description=(
            "A terminal playground for proactive LLM agents. Run without a command to open the "
            "playground; the commands below serve scripts and batch work."
        ),
    )
    parser.add_argument("--version", action="version", version=f"proactive-tui {__version__}")
    parser.add_argument("--envs", action="append", default=[], metavar="PATH", help="extra environment folder or file (repeatable)")
    model_flags.add_structured_mode(parser, top_level=True)
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # Only `run` takes flags it does not know up front (the chosen family's own).
    if extra and not getattr(args, "accepts_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    func: Callable[..., int] | None = getattr(args, "func", None)
    model_flags.apply(args)
    try:
        if func is None:
            from proactive_tui.cli.app_cmd import run_app

            return run_app(args)
        if getattr(args, "accepts_extra", False):
            return func(args, extra)
        return func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
