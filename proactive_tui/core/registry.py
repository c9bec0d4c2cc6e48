"""The family registry: every family installed, found through the `proactive_tui.families`
entry-point group.

The three built-in families are declared in this package's `pyproject.toml`; another package
adds a family by declaring its own entry point (`name = "my_pkg.family:family"`, a
`core.family.Family` declaration, whose parts load by dotted path at first use), with no change here. When this package runs without
its metadata (a source tree on `PYTHONPATH`, never pip-installed) the built-ins are loaded by
module path so the app still works.

One broken plug-in costs only itself: the problem is kept in `problems()` and shown by
`envs validate`, and the others load.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

from proactive_tui.core.family import Family, UnsupportedFamily

GROUP = "proactive_tui.families"
BUILTINS = {
    "proactiveeval": "proactive_tui.families.proactiveeval:family",
    "proactivebench": "proactive_tui.families.proactivebench:family",
    "chronos": "proactive_tui.families.chronos:family",
    "proactbench": "proactive_tui.families.proactbench:family",
}

_families: dict[str, Family] | None = None
_problems: list[str] = []


def _resolve(target: Any) -> Family:
    family = target() if isinstance(target, type) else target
    if not isinstance(family, Family):
        raise TypeError(f"{target!r} is not a proactive_tui Family")
    return family


def _load_path(path: str) -> Family:
    module, _, attr = path.partition(":")
    return _resolve(getattr(importlib.import_module(module), attr))


def _discover() -> dict[str, Family]:
    found: dict[str, Family] = {}
    _problems.clear()
    entries = list(metadata.entry_points(group=GROUP))
    names = {e.name for e in entries}
    # Built-ins first (a stable order for pickers and listings), then plug-ins by name.
    for name, path in BUILTINS.items():
        if name not in names:
            entries.append(metadata.EntryPoint(name=name, value=path, group=GROUP))
    order = {name: i for i, name in enumerate(BUILTINS)}
    seen_values: set[str] = set()
    for entry in sorted(entries, key=lambda e: (order.get(e.name, len(order)), e.name)):
        if entry.value in seen_values or entry.name in found:
            continue
        seen_values.add(entry.value)
        try:
            family = _resolve(entry.load())
        except Exception as exc:  # a broken plug-in never stops the others
            _problems.append(f"family {entry.name} ({entry.value}) could not be loaded: {type(exc).__name__}: {exc}")
            continue
        if family.name != entry.name:
            _problems.append(f"family entry point {entry.name} names a family called {family.name}; skipped")
            continue
        found[family.name] = family
    return found


def families() -> dict[str, Family]:
    """Name -> family, built-ins first."""
    global _families
    if _families is None:
        _families = _discover()
    return _families


def problems() -> list[str]:
    families()
    return list(_problems)


def get(name: str) -> Family:
    family = families().get(name)
    if family is None:
        raise UnsupportedFamily(f"no family named {name!r} is installed (installed: {', '.join(families())})")
    return family


def find(name: str) -> Family | None:
    return families().get(name)


def names() -> list[str]:
    return list(families())


def reset() -> None:
    """Forget what was discovered (tests that install a plug-in family call this)."""
    global _families
    _families = None
    from proactive_tui.core import events

    events.reset_adapter()
