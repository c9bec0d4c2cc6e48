"""Running `proactive-tui` with no command opens the playground.

Textual is imported only here, inside `run_app`, so `--help` and the headless commands stay light.
"""

from __future__ import annotations

import argparse


def run_app(args: argparse.Namespace) -> int:
    from proactive_tui.ui.app import ProactiveApp

    app = ProactiveApp(extra_envs=list(getattr(args, "envs", []) or []))
    app.run()
    return app.return_code or 0
