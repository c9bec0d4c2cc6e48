"""Grouping and filtering of environments for the picker, with no Textual in sight.

Kept apart from the widgets so the rules (what a filter matches, how the tree nests) are plain
functions that are quick to test and reuse (a future command-palette provider can search the
same index).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from proactive_tui.core import registry
from proactive_tui.envs.describe import describe


@dataclass
class Group:
    """One branch of the picker tree: a family, a domain or a tier, with the environments under it."""

    label: str
    path: tuple[str, ...]
    environments: list[Any] = field(default_factory=list)
    children: list["Group"] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.environments)


class EnvironmentIndex:
    """The environments plus a lower-cased haystack per environment for the filter.

    The haystack holds the id, title, summary, domain and tier (`search_text()`) and the full
    description with the reference shown, so a word from a persona or a timeline finds its
    environment. It is built once: describing 38 environments costs a few milliseconds.
    """

    def __init__(self, environments: Sequence[Any]) -> None:
        self.environments = list(environments)
        self._haystacks = {env.id: _haystack(env) for env in self.environments}

    def __len__(self) -> int:
        return len(self.environments)

    def matches(self, query: str) -> list[Any]:
        """Environments containing every whitespace-separated word of the query (any order)."""
        words = query.lower().split()
        if not words:
            return list(self.environments)
        return [env for env in self.environments if all(word in self._haystacks[env.id] for word in words)]


def _haystack(env: Any) -> str:
    text = " ".join(body for _, body in describe(env, reveal_reference=True))
    return f"{env.search_text()} {text.lower()}"


def group(environments: Sequence[Any]) -> list[Group]:
    """Nest environments as family -> domain (-> tier for proactiveeval), in a stable order:
    families in their canonical order, then domains and tiers alphabetically, environments in
    load order."""
    families: dict[str, Group] = {}
    installed = registry.families()
    order = {name: i for i, name in enumerate(installed)}
    for env in environments:
        fam = families.setdefault(env.family, Group(env.family, (env.family,)))
        fam.environments.append(env)
        dom = _child(fam, env.domain)
        dom.environments.append(env)
        family = installed.get(env.family)
        if family is not None and family.group_by_tier and env.tier:
            tier = _child(dom, env.tier)
            tier.environments.append(env)
    result = sorted(families.values(), key=lambda g: (order.get(g.label, len(order)), g.label))
    for fam in result:
        fam.children.sort(key=lambda g: g.label)
        for dom in fam.children:
            dom.children.sort(key=lambda g: g.label)
    return result


def first_environment(groups: Sequence[Group]) -> Any | None:
    """The environment the tree lists first (where the cursor starts)."""
    for grp in groups:
        while grp.children:
            grp = grp.children[0]
        if grp.environments:
            return grp.environments[0]
    return None


def _child(parent: Group, label: str) -> Group:
    for child in parent.children:
        if child.label == label:
            return child
    child = Group(label, parent.path + (label,))
    parent.children.append(child)
    return child
