"""Running `proactive-tui` with no command opens the playground."""

from __future__ import annotations

import argparse


def run_app(args: argparse.Namespace) -> int:
    from proactive_tui.cli.main import build_parser

    # The Textual playground lands with the UI issue; until then the command line is the app.
    build_parser().print_help()
    return 0
