"""Grouping and filtering of environments for the picker, with no Textual in sight.

Kept apart from the widgets so the rules (what a filter matches, how the tree nests) are plain
functions that are quick to test and reuse (a future command-palette provider can search the
same index).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from proactive_tui.envs.describe import header_text
from proactive_tui.envs.sources import qualified


_FACTS: tuple[list[str], frozenset[str]] | None = None


def use_family_facts(names: list[str], by_tier: frozenset[str] | set[str]) -> None:
    """The installed families in their order and those that group by tier, as the first frame's
    snapshot recorded them (`envs.first_frame`): the tree's shape without importing a family."""
    global _FACTS
    _FACTS = (list(names), frozenset(by_tier))


def family_facts() -> tuple[list[str], frozenset[str]]:
    """(the families' names in the registry's order, the names of those that group by tier): from
    the registry once it is loaded, before that from the first frame's snapshot (the same answer:
    the snapshot is only used while the loading code and the installed packages are unchanged)."""
    import sys

    loaded = sys.modules.get("proactive_tui.core.registry")
    if (loaded is None or getattr(loaded, "_families", None) is None) and _FACTS is not None:
        return _FACTS
    from proactive_tui.core import registry

    installed = registry.families()
    return list(installed), frozenset(name for name, fam in installed.items() if fam.group_by_tier)


@dataclass
class Group:
    """One branch of the picker tree: a family, a domain or a tier, with the environments under it."""

    label: str
    path: tuple[str, ...]
    environments: list[Any] = field(default_factory=list)
    children: list["Group"] = field(default_factory=list)
    origin: Any = None
    """For a family's branch of one source (`source:family`) and the branches under it: that
    source (envs.sources.Origin), which the preview names."""

    @property
    def count(self) -> int:
        return len(self.environments)


LEAVES_PER_GROUP = 200
"""The most environments one branch of the tree lists; the rest are one "… N more" line. A
tree of 40,000 leaves took about 20 s to build at start-up and was rebuilt on every filter key
(half a minute for a 5-letter word), and nobody scrolls past a few hundred titles: typing a word
is the way to the others."""


@dataclass(frozen=True)
class MoreEnvironments:
    """Node data of the line that stands for the environments a branch does not list.

    Not an environment: selecting it opens nothing, and the preview says how to reach them."""

    group: Group
    count: int

    @property
    def label(self) -> str:
        return f"… {self.count:,} more: type to filter"


def is_environment(data: Any) -> bool:
    """Whether tree node data is an environment (not a branch, not the "more" line)."""
    return data is not None and not isinstance(data, (Group, MoreEnvironments))


class EnvironmentIndex:
    """The environments plus a lower-cased haystack per environment for the filter.

    The haystack holds the id, title, summary, domain and tier (`search_text()`) and the full
    description with the reference shown, so a word from a persona or a timeline finds its
    environment. Haystacks are built on the first filter, not at start-up: describing 40,000
    environments costs about a second, which a person who never filters should not wait for.
    `warm()` builds them a slice at a time (the picker calls it while idle), and the first
    filter builds whatever is still missing.

    A query that narrows the previous one (each previous word is inside a new word: "clim" ->
    "climb", "climb" -> "climb shoe") searches only the previous matches, so typing a word
    letter by letter costs one full scan, not one per letter.
    """

    def __init__(self, environments: Sequence[Any]) -> None:
        self.environments = list(environments)
        self._pairs: list[tuple[Any, str]] = []  # (environment, haystack), built in order
        self._families: dict[str, Any] = {}
        self._last: tuple[list[str], list[tuple[Any, str]]] | None = None

    def __len__(self) -> int:
        return len(self.environments)

    def matches(self, query: str) -> list[Any]:
        """Environments containing every whitespace-separated word of the query (any order)."""
        words = query.lower().split()
        if not words:
            return list(self.environments)
        pool = self._haystacks()
        if self._last is not None and narrows(self._last[0], words):
            pool = self._last[1]
        if len(words) == 1:
            word = words[0]
            found = [pair for pair in pool if word in pair[1]]
        else:
            found = [pair for pair in pool if all(word in pair[1] for word in words)]
        self._last = (words, found)
        return [env for env, _ in found]

    def warm(self, count: int) -> bool:
        """Build up to `count` more haystacks; True once every haystack is built."""
        start = len(self._pairs)
        families = self._families
        self._pairs += [(env, _haystack(env, families)) for env in self.environments[start : start + count]]
        return len(self._pairs) >= len(self.environments)

    @property
    def warmed(self) -> bool:
        return len(self._pairs) >= len(self.environments)

    def _haystacks(self) -> list[tuple[Any, str]]:
        if not self.warmed:
            self.warm(len(self.environments))
        return self._pairs


def narrows(previous: Sequence[str], words: Sequence[str]) -> bool:
    """Whether every match of `words` is a match of `previous` (each previous word is a part of
    some new word), so the new query may search the previous matches only."""
    return all(any(old in new for new in words) for old in previous)


def _haystack(env: Any, families: dict[str, Any]) -> str:
    """What `describe(env, reveal_reference=True)` shows, lower-cased, after `search_text()`.

    The same text as joining describe()'s bodies; the family lookup and the benchmark citation
    (the same for every environment of a family) are worked out once per family, not per
    environment."""
    family = families.get(env.family)
    if family is None:
        family = families[env.family] = _family_parts(env.family)
    found, citation = family
    if hasattr(type(env), "described"):  # a catalog entry (envs.catalog): its words from the index
        try:
            described = env.described()
        except LookupError:  # its file changed since the start: what the index knows
            described = None
        bodies = [header_text(env)]
        if found is not None:
            if citation is not None:
                bodies.append(citation)
            if described:
                bodies.append(described)
        return f"{env.search_text()} {' '.join(bodies).lower()}"
    bodies = [header_text(env)]
    if found is not None:
        if citation is not None:
            bodies.append(citation)
        bodies += [body for _, body in found.environments.describe(env, True)]
    text = " ".join(bodies)
    return f"{env.search_text()} {text.lower()}"


def _family_parts(name: str) -> tuple[Any, str | None]:
    """(the family, the body of describe()'s "Benchmark" section or None), as envs.describe builds them."""
    from proactive_tui.core import registry

    family = registry.find(name)
    if family is None or family.source is None:
        return family, None
    ref = family.source
    text = ref.citation(family.title)
    if ref.distinct_from:
        text += "\nnot to be confused with " + "; ".join(ref.distinct_from)
    return family, text


def mixed_families(environments: Sequence[Any]) -> set[str]:
    """The families whose environments come from more than one source (the built-in ones, your
    envs folder, a folder given with --envs): the tree gives each source its own branch there."""
    seen: dict[str, set[str]] = {}
    for env in environments:
        origin = getattr(env, "origin", None)
        seen.setdefault(env.family, set()).add(origin.name if origin is not None else "")
    return {family for family, names in seen.items() if len(names) > 1}


def group(environments: Sequence[Any], mixed: set[str] | frozenset[str] = frozenset()) -> list[Group]:
    """Nest environments as family -> domain (-> tier for proactiveeval), in a stable order:
    families in their canonical order, then domains and tiers alphabetically, environments in
    load order.

    A family in `mixed` (`mixed_families` of everything loaded, so a filter does not reshape the
    tree) is one top-level branch per source, named as its ids are qualified (`dataset:proactiveeval`,
    `builtin:proactiveeval`, envs.sources), yours first and the built-in ones last: where an
    environment comes from is visible in the list, and a person's own data comes first. A branch
    of its own rather than a level or a tag per line: no depth or width lost, which an 80-column
    tree has none of to spare."""
    families: dict[tuple[str, str], Group] = {}
    names, by_tier = family_facts()
    order = {name: i for i, name in enumerate(names)}
    for env in environments:
        origin = getattr(env, "origin", None) if env.family in mixed else None
        key = (env.family, origin.name if origin is not None else "")
        fam = families.get(key)
        if fam is None:
            label = qualified(origin.name, env.family) if origin is not None else env.family
            fam = families[key] = Group(label, (label,), origin=origin)
        fam.environments.append(env)
        dom = _child(fam, env.domain)
        dom.environments.append(env)
        if env.family in by_tier and env.tier:
            tier = _child(dom, env.tier)
            tier.environments.append(env)
    seen = {key: i for i, key in enumerate(families)}

    def rank(key: tuple[str, str]) -> tuple[int, str, bool, int]:
        origin = families[key].origin
        return (order.get(key[0], len(order)), key[0], origin is not None and not origin.yours, seen[key])

    result = [families[key] for key in sorted(families, key=rank)]
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
    child = Group(label, parent.path + (label,), origin=parent.origin)
    parent.children.append(child)
    return child
