"""`proactive-tui eval ...`: batch evaluation of any family, and the checks that are not batches.

`eval SELECTOR... --agent M` (spelled out: `eval run SELECTOR...`) is the batch command of every
family (`cli/eval_batch.py`): `eval proactiveeval --agent M` and `eval chronos/car-purchase --agent M`
are batches, the family's whole set or a part of it, with the family's tables. The families' checks
that are not batches keep their names (`Family.add_eval_commands`: ProactiveBench's `eval
reward-judge` and `eval splits`): a first word that is a check's name runs that check, anything
else is a selector of the batch command. (ProactiveEval and Chronos once had checks of their own
under their family's name, which ran a batch on a loop of their own; they are that batch now.)
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
            narrower = _old_spelling(values)
            if narrower:
                parser.error(f"`{values[0]}` selects every {values[0]} environment, so {', '.join(narrower)} add"
                             f"{'s' if len(narrower) == 1 else ''} nothing (`eval {values[0]} ENV...` once meant only "
                             f"ENV...); to run only those, leave `{values[0]}` out: "
                             f"`eval {' '.join(narrower)} ...`")
            values = [BATCH_COMMAND, *values]
        super().__call__(parser, namespace, values, option_string)


def _old_spelling(values: list[str]) -> list[str]:
    """The selectors after a first word naming a family that lie within that family
    (`eval chronos chronos/car-purchase/`): the earlier `eval chronos ENV...` command ran only the
    ENVs, while as selectors the family's name already picks all of it. Refused rather than run
    bigger than meant."""
    from proactive_tui.core import registry

    family = values[0]
    if registry.find(family) is None:
        return []
    return [v for v in values[1:] if v.startswith(f"{family}/")]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from proactive_tui.core import registry

    ev = subparsers.add_parser("eval", help="batch evaluation with the papers' tables, and checks of judges",
                               description="`eval SELECTOR... --agent M [--repeats K] [--shard I/N] [--out DIR]` runs "
                                           "a batch of any family (see `eval run -h`), e.g. `eval proactiveeval "
                                           "--agent M` or `eval chronos/car-purchase --agent M`; the other commands "
                                           "are checks that are not batches (of a judge against human labels, of "
                                           "stored sessions).")
    sub = ev.add_subparsers(title="eval commands", metavar="SELECTOR... | CHECK", required=True, action=_ChecksOrBatch)
    from proactive_tui.cli.eval_batch import add_batch_parser, add_resume_parser

    add_batch_parser(sub)
    add_resume_parser(sub)
    for family in registry.families().values():
        family.add_eval_commands(sub)
    from proactive_tui.llm import model_flags

    for check in sub.choices.values():
        model_flags.add_structured_mode(check)
