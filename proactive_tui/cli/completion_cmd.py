"""`proactive-tui completion bash|zsh`: the shell's tab-completion script for every command.

Made by shtab from the very argparse tree the commands are parsed with, so each command, option
and fixed choice completes, and a new one needs no edit here. shtab rather than argcomplete: the
script is static, so nothing runs when TAB is pressed (argcomplete starts the program on every
press, and building the full parser loads every family's flags), and shtab has no dependencies.
The price: values known only at run time (environment ids, session ids) are not completed.
"""

from __future__ import annotations

import argparse

SHELLS = ("bash", "zsh")

INSTALL = {
    "bash": "proactive-tui completion bash > ~/.local/share/bash-completion/completions/proactive-tui",
    "zsh": "proactive-tui completion zsh > \"${fpath[1]}/_proactive-tui\"  (then: compinit)",
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "completion", help="print the shell completion script (bash or zsh)",
        description="Print the tab-completion script for SHELL (bash or zsh).",
        epilog="install it with:\n  " + "\n  ".join(INSTALL.values()),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash or zsh")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import shtab

    from proactive_tui.cli.main import build_parser
    from proactive_tui.textsafe import say

    # through `say`, as every line the command line prints: the script holds the help texts,
    # which a plug-in family writes
    say(shtab.complete(build_parser(), shell=args.shell), end="", flush=True)
    return 0
