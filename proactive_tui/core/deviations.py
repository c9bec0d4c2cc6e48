"""Protocol deviations: which of a family's settings, at a value other than the protocol's,
change what its numbers mean, and how each is named wherever those numbers are shown.

Why declared on the settings model: the default of a setting is the protocol's (upstream's code or
the paper; docs/protocols.md), so "deviates" is derived, never listed by hand: a setting marked
with `Deviation` deviates whenever its value is not its field's default (nor one of the values
`same_as` declares equivalent). A new setting is covered by declaring its label beside it, and
a changed default (Chronos's prompt variant) moves the label to the other value by itself:

    feedback: Annotated[bool, Deviation("verdict feedback {value} (the paper's ablation)")] = False

`{value}` and `{default}` in the label are filled in (a bool as on/off, None as "none"). A
setting with no `Deviation` (a seed, a wall-clock pace, live judging) never labels a run.
`Family.deviations(settings)` gives a family's labels; the batch report carries them into every
row (`evalrun.report.label_deviations`).

Engine side: no Textual, no Rich.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pydantic import BaseModel


@dataclass(frozen=True)
class Deviation:
    """The label of a setting whose value is not the protocol's (`Annotated` metadata)."""

    label: str
    same_as: tuple[Any, ...] = ()
    """Values other than the default that are the protocol too (ProactiveBench's agent
    temperature: unset means upstream's 0.5, so an explicit 0.5 is no deviation)."""

    def text(self, value: Any, default: Any) -> str:
        return self.label.format(value=_shown(value), default=_shown(default))


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return "none" if value is None else str(value)


def declared(model: type[BaseModel]) -> dict[str, Deviation]:
    """setting -> its `Deviation`, for every setting of `model` that declares one."""
    out = {}
    for name, field in model.model_fields.items():
        found = next((m for m in field.metadata if isinstance(m, Deviation)), None)
        if found is not None:
            out[name] = found
    return out


def deviations(model: type[BaseModel], settings: Mapping[str, Any] | None) -> list[str]:
    """The labels of the settings in `settings` that differ from `model`'s defaults, in the
    model's field order. A setting missing from `settings` (a record written before it existed)
    ran at its default."""
    values = settings or {}
    out = []
    for name, deviation in declared(model).items():
        default = model.model_fields[name].get_default(call_default_factory=True)
        value = values.get(name, default)
        if value != default and value not in deviation.same_as:
            out.append(deviation.text(value, default))
    return out
