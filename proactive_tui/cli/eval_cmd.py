"""`proactive-tui eval ...`: batch checks of judges and agents.

Each family adds its own checks (`Family.add_eval_commands`), e.g. ProactiveBench's
`eval reward-judge`; this module only makes the `eval` command.
"""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from proactive_tui.core import registry

    ev = subparsers.add_parser("eval", help="batch checks of judges and agents")
    sub = ev.add_subparsers(title="eval commands", metavar="CHECK", required=True)
    for family in registry.families().values():
        family.add_eval_commands(sub)
    from proactive_tui.cli import model_flags

    for check in sub.choices.values():
        model_flags.add_structured_mode(check)
