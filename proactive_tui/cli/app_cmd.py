"""Running `proactive-tui` with no command opens the playground.

Textual is imported only here, inside `run_app`, so `--help` and the headless commands stay light.
"""

from __future__ import annotations

import argparse

from proactive_tui.textsafe import say


def run_app(args: argparse.Namespace) -> int:
    report = getattr(args, "report", None)
    if report:  # a wrong path is said before the terminal switches to the playground
        from pathlib import Path

        from proactive_tui.evalrun.opened import problem

        why = problem(Path(report).expanduser())
        if why:
            import sys

            say(f"error: {why}", file=sys.stderr)
            return 2
    from proactive_tui.ui.app import ProactiveApp

    app = ProactiveApp(extra_envs=list(getattr(args, "envs", []) or []), report=report)
    app.run()
    return app.return_code or 0
