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


MISSING = {
    "config": "the defaults apply until you create it",
    "data": "it is made when the first session is saved",
    "themes": "create it and put theme .toml files in it to add themes",
    "envs": "create it and put environment files in it to list them beside the samples",
}
"""What a missing location means, said when it does not exist yet."""


def run(args: argparse.Namespace) -> int:
    """The path alone on stdout (so `cd "$(proactive-tui locate themes)"` and scripts keep working),
    and, when it does not exist yet, a note on stderr saying so: printing a path that is not there
    without a word sent people looking for a folder the app had never made. Nothing is created:
    locating is a question, and an empty folder would be made in a home that only asked."""
    import sys

    path = TARGETS[args.what]()
    say(path)
    if not path.exists():
        say(f"note: {path} does not exist yet; {MISSING[args.what]}", file=sys.stderr)
    return 0
