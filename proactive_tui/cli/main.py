"""`proactive-tui`: with no subcommand it opens the playground; subcommands serve scripts."""

from __future__ import annotations

import argparse
import sys
from typing import Callable

from proactive_tui import __version__
from proactive_tui.textsafe import plain, say

# Each command module exposes `add_parser(subparsers)` which sets `func` on its parsers. Named,
# not imported, here: opening the playground needs none of them (they cost ~40 ms of start-up).
COMMAND_MODULES = ("envs_cmd", "keys_cmd", "locate_cmd", "run_cmd", "eval_cmd", "report_cmd", "sessions_cmd",
                   "regrade_cmd", "export_cmd", "compare_cmd", "labels_cmd", "demo_cmd", "serve_cmd", "synth_cmd",
                   "completion_cmd")


def _playground_args(argv: list[str] | None) -> argparse.Namespace | None:
    """The arguments when `argv` opens the playground (no command, no help), else None.

    Why: building the full parser loads every family's command flags (`eval`, `run`: about 80
    pydantic models, a third of start-up), and a person opening the playground waits for none
    of it. Only the global options are parsed here; anything else (a command, `--help`, a
    mistake) goes to the full parser, which says what it always said.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if any(arg in ("-h", "--help") for arg in args):
        return None
    light = _QuietParser(prog="proactive-tui", add_help=False)
    light.add_argument("--envs", action="append", default=[])
    light.add_argument("--report", default=None)
    try:
        known, extra = light.parse_known_args(args)
    except ValueError:
        return None
    return None if extra else known


class _QuietParser(argparse.ArgumentParser):
    """Raises instead of printing and exiting: the full parser reports the mistake."""

    def error(self, message: str):  # type: ignore[override]
        raise ValueError(message)


class SafeParser(argparse.ArgumentParser):
    """argparse echoes what it was given (an unknown command, a bad choice, an unrecognised
    argument) in its usage errors: those lines go through `plain` like every other line the
    command line prints. The command parsers are made of this class too (argparse builds
    subparsers with the parent's class)."""

    def _print_message(self, message: str, file=None) -> None:  # type: ignore[override]
        if message:
            super()._print_message(plain(message), file)


def build_parser() -> argparse.ArgumentParser:
    import importlib

    from proactive_tui.llm import model_flags

    parser = SafeParser(
        prog="proactive-tui",
        description=(
            "A terminal playground for proactive LLM agents. Run without a command to open the "
            "playground; the commands below serve scripts and batch work."
        ),
    )
    parser.add_argument("--version", action="version", version=f"proactive-tui {__version__}")
    parser.add_argument("--envs", action="append", default=[], metavar="PATH", help="extra environment folder or file (repeatable)")
    parser.add_argument("--report", metavar="DIR", help="open the playground on the results screen of a report folder "
                        "(`eval ... --out DIR`)")
    model_flags.add_structured_mode(parser, top_level=True)
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"proactive_tui.cli.{name}").add_parser(subparsers)
    return parser


def _open_playground(args: argparse.Namespace) -> int:
    from proactive_tui.cli.app_cmd import run_app

    try:
        return run_app(args)
    except KeyboardInterrupt:
        say("interrupted", file=sys.stderr)
        return 130


def _batch_options_first(argv: list[str]) -> list[str]:
    """`eval --agent M proactiveeval` as `eval run --agent M proactiveeval`: the batch command's
    options may come before its selectors (argparse's sub-command choice would otherwise take the
    first option's value for a selector)."""
    if "eval" in argv:
        at = argv.index("eval")
        following = argv[at + 1] if at + 1 < len(argv) else ""
        if following.startswith("-") and following not in ("-h", "--help"):
            from proactive_tui.cli.eval_batch import BATCH_COMMAND

            return [*argv[:at + 1], BATCH_COMMAND, *argv[at + 1:]]
    return argv


def leave_now(code: int) -> None:
    """End the process at once after the playground closed, without the interpreter's teardown.

    Why: with a large environment file the teardown (module globals cleared, every environment
    object freed, collector passes over them) took 4-7 s after the screen was already gone, and a
    person waited that long for their shell. The exit handlers still run and the output is
    flushed; only the freeing is skipped, which the operating system does at once. When a thread
    that the interpreter would wait for is still running (a store write, say), the usual exit is
    kept, so nothing is cut short.
    """
    import threading

    main = threading.main_thread()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not main):
        return
    import atexit
    import os

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    playground = _playground_args(argv)
    if playground is not None:
        code = _open_playground(playground)
        if argv is None:  # the process's own entry (console script, python -m): nothing runs after us
            leave_now(code)
        return code
    parser = build_parser()
    from proactive_tui.cli.compare_cmd import insert_run

    argv = insert_run(_batch_options_first(sys.argv[1:] if argv is None else list(argv)))
    args, extra = parser.parse_known_args(argv)
    # `--envs` may come before the command or after it: both count (the command's own flag used to
    # replace the global one's value silently)
    args.envs = list(args.envs or []) + list(getattr(args, "sub_envs", None) or [])
    # Only `run` takes flags it does not know up front (the chosen family's own).
    if extra and not getattr(args, "accepts_extra", False):
        # quoted with escapes when not printable: `plain` would leave nothing of an escape sequence
        parser.error("unrecognized arguments: " + " ".join(a if a.isprintable() and a else repr(a) for a in extra))
    func: Callable[..., int] | None = getattr(args, "func", None)
    from proactive_tui.llm import model_flags

    model_flags.apply(args)
    try:
        if func is None:
            from proactive_tui.cli.app_cmd import run_app

            return run_app(args)
        if getattr(args, "accepts_extra", False):
            return func(args, extra)
        return func(args)
    except KeyboardInterrupt:
        say("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _pipe_closed()


def _pipe_closed() -> int:
    """The reader went away (`... | head -1`): what it wanted has been written, so exit 0, as
    `cat` does. stdout is pointed at /dev/null first (the Python docs' recipe), so the interpreter's
    last flush of what is still buffered does not fail again at exit (exit 120 and a message)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test's capture): nothing left to flush
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
