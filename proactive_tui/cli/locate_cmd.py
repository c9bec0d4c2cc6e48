"""`proactive-tui locate config|data|themes|envs`: print where things live."""

from __future__ import annotations

import argparse

from proactive_tui import paths
from proactive_tui.textsafe import say

TARGETS = {
    "config": paths.config_file,
    "data": paths.data_dir,
    "themes": paths.user_themes_dir,
    "envs": paths.user_envs_dir,
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("locate", help="print the path of the config file, data dir, themes or envs dir")
    p.add_argument("what", choices=sorted(TARGETS))
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    say(TARGETS[args.what]())
    return 0
