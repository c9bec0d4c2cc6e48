"""Plain-text sections describing an environment, shared by `envs show` and the picker preview.

Returned as (heading, body) pairs of plain strings so each front end styles them its own way and
file content is never interpreted as markup. The header is common; the rest is the family's
(`Family.describe`). `reveal_reference=False` hides what a person playing the user should not
see (reference targets, which states satisfy the needs, annotations).
"""

from __future__ import annotations

from typing import Any

Section = tuple[str, str]


def describe(env: Any, reveal_reference: bool = True) -> list[Section]:
    from proactive_tui.core import registry

    family = registry.find(env.family)
    header = f"{env.id}\n{env.title}\nfamily: {env.family}   domain: {env.domain}   tier: {env.tier or '-'}\nsource: {env.source}"
    sections: list[Section] = [("", header)]
    if family is not None:
        if family.source is not None:
            ref = family.source
            text = ref.citation(family.title)
            if ref.distinct_from:
                text += "\nnot to be confused with " + "; ".join(ref.distinct_from)
            sections.append(("Benchmark", text))
        sections += family.describe(env, reveal_reference)
    return sections
