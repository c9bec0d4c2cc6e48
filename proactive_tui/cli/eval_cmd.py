"""`proactive-tui eval ...`: batch evaluation, and batch checks of judges and agents.

`eval SELECTOR... --agent M` (spelled out: `eval run SELECTOR...`) is the batch command of every
family (`cli/eval_batch.py`). The families' own checks keep their names (`Family.add_eval_commands`:
`eval reward-judge`, `eval splits`, `eval proactiveeval`, `eval chronos`): a first word that is a
check's name runs that check, anything else is a selector of the batch command.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping


class _Names(Mapping):
    """The checks by name (a view of the sub-parsers), where any other word also passes
    argparse's choice check: it is a selector of the batch command."""

    def __init__(self, parsers: dict) -> None:
        self._parsers = parsers

    def __getitem__(self, name):
        return self._parsers[name]

    def __iter__(self):
        return iter(self._parsers)

    def __len__(self) -> int:
        return len(self._parsers)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and not name.startswith("-")


class _ChecksOrBatch(argparse._SubParsersAction):
    """Sub-commands where an unknown first word is the batch command's first selector, so
    `eval proactiveeval/*/hard --agent M` needs no `run` in front."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.choices = _Names(self._name_parser_map)

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        from proactive_tui.cli.eval_batch import BATCH_COMMAND

        if values and values[0] not in self._name_parser_map:
            values = [BATCH_COMMAND, *values]
        super().__call__(parser, namespace, values, option_string)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from proactive_tui.core import registry

    ev = subparsers.add_parser("eval", help="batch evaluation with the papers' tables, and checks of judges",
                               description="`eval SELECTOR... --agent M [--repeats K] [--shard I/N] [--out DIR]` runs "
                                           "a batch of any family (see `eval run -h`); the other commands are checks.")
    sub = ev.add_subparsers(title="eval commands", metavar="SELECTOR... | CHECK", required=True, action=_ChecksOrBatch)
    from proactive_tui.cli.eval_batch import add_batch_parser, add_resume_parser

    add_batch_parser(sub)
    add_resume_parser(sub)
    for family in registry.families().values():
        family.add_eval_commands(sub)
    from proactive_tui.cli import model_flags

    for check in sub.choices.values():
        model_flags.add_structured_mode(check)
