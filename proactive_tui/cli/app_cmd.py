"""Running `proactive-tui` with no command opens the playground.

Textual is imported only here, inside `run_app`, so `--help` and the headless commands stay light.
"""

from __future__ import annotations

import argparse
import os
import sys

from proactive_tui.textsafe import say


NO_TERMINAL = ("proactive-tui: no terminal here (stdin or stdout is not a tty), so no playground; for scripts "
               "and CI use the headless commands: `run ID`, `eval ...`, `envs list`, `sessions list`, `report show "
               "DIR` (see `proactive-tui --help`)")


def has_terminal() -> bool:
    """Whether a screen opened now would be seen: stdin and stdout are a terminal, or a Textual driver
    was chosen (`serve` runs each tab's app on pipes with `TEXTUAL_DRIVER` set to its web driver).

    Why: with no terminal (piped, in CI) the playground drew to nobody and waited for keys that
    never came, so a script hung until killed."""
    if os.environ.get("TEXTUAL_DRIVER"):
        return True
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


def run_app(args: argparse.Namespace) -> int:
    report = getattr(args, "report", None)
    if report:  # a wrong path is said before the terminal switches to the playground
        from pathlib import Path

        from proactive_tui.evalrun.opened import problem

        why = problem(Path(report).expanduser())
        if why:
            say(f"error: {why}", file=sys.stderr)
            return 2
    if not has_terminal():
        say(NO_TERMINAL, file=sys.stderr)
        return 2
    from proactive_tui.ui.app import ProactiveApp

    app = ProactiveApp(extra_envs=list(getattr(args, "envs", []) or []), report=report)
    app.run()
    return app.return_code or 0
