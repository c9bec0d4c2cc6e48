"""Model-call flags every command that calls models takes: `--structured-mode`.

Given before the command (`proactive-tui --structured-mode json_object run ...`) or after it
(`run ... --structured-mode json_object`, `eval proactiveeval --structured-mode prompt`), it
means the same as `PROACTIVE_TUI_STRUCTURED_MODE` for every seat, and wins over that variable
and the config file (`structured = "..."` in a `[roles.*]` table): the flag is applied by
setting the variables for this process, so each command's usual settings resolution
(`llm.settings.resolve_roles`) sees it without a parameter threaded through every command.

In the model layer (it sets the model settings' variables), so the studio, which builds a `synth`
command line, applies it without importing the CLI.
"""

from __future__ import annotations

import argparse
import os

STRUCTURED_MODE_CHOICES = ("auto", "json_schema", "json_object", "prompt")
STRUCTURED_MODE_HELP = (
    "how structured replies are asked for: auto (default) negotiates json_schema, then json_object "
    "with the schema, then the schema in the prompt, remembering per api base what worked; any other "
    "value forces that mode (env PROACTIVE_TUI_STRUCTURED_MODE)"
)


def add_structured_mode(parser: argparse.ArgumentParser, top_level: bool = False) -> None:
    """Add `--structured-mode`; below the top level its default is suppressed so a value given
    before the command is not overwritten by the subcommand's default."""
    parser.add_argument("--structured-mode", choices=STRUCTURED_MODE_CHOICES, metavar="MODE",
                        default=None if top_level else argparse.SUPPRESS, help=STRUCTURED_MODE_HELP)


def apply(args: argparse.Namespace, environ: "os._Environ[str] | dict[str, str] | None" = None) -> None:
    """Make the flag the setting of every seat: the all-seats and per-seat variables."""
    from proactive_tui.llm.settings import ROLES

    mode = getattr(args, "structured_mode", None)
    if not mode:
        return
    env = os.environ if environ is None else environ
    env["PROACTIVE_TUI_STRUCTURED_MODE"] = mode
    for role in ROLES:
        env[f"PROACTIVE_TUI_{role.upper()}_STRUCTURED_MODE"] = mode
