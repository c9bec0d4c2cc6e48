"""Environment loading for every installed family: schemas and loaders live in each family's
folder; this package holds the shared base, the problem type and the folder scan.

`load_paths` is the one entry point; `load_default` adds the shipped samples and the user's folder
(`default_env_sources`, `sample_sources`: here rather than in `paths`, which knows locations only
and sits below the families it would otherwise have to ask).

The names below are imported on first use (PEP 562), not with the package: the playground's
first frame reads `envs.catalog` and `envs.first_frame`, which must not pull in pydantic and the
loader with the package (`tests/test_import_contracts.py` checks the first frame's imports).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from proactive_tui.envs.problems import LoadProblem
    from proactive_tui.envs.registry import Environment, EnvironmentSet, EnvSource, load_paths

_LAZY = {"LoadProblem": "proactive_tui.envs.problems", "Environment": "proactive_tui.envs.registry",
         "EnvironmentSet": "proactive_tui.envs.registry", "EnvSource": "proactive_tui.envs.registry",
         "load_paths": "proactive_tui.envs.registry"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def load_default(extra: list[str] | None = None, *, lazy: bool = False, seen_by: Any = None,
                 later: Any = None) -> "EnvironmentSet":
    """`lazy`: from the catalog's cached index, entries parsed on use (`envs.catalog`; the picker).
    `seen_by`: told what the load looked at (`envs.first_frame.Seen`); `later`: given the large
    files with no index yet instead of reading them (`registry.load_paths`)."""
    from proactive_tui.envs.registry import load_paths
    from proactive_tui.paths import user_envs_dir

    if seen_by is not None:  # listed only when it exists: its appearing changes what is loaded
        seen_by.root(user_envs_dir())
    return load_paths(default_env_sources(extra), lazy=lazy, seen_by=seen_by, later=later)


def sample_sources() -> list["EnvSource"]:
    """Every installed family's shipped environments (package data), as loader sources.

    `PROACTIVE_TUI_SAMPLE_ENVS` replaces them with one folder (tests and benchmarks use it)."""
    from proactive_tui.envs.registry import EnvSource

    override = os.environ.get("PROACTIVE_TUI_SAMPLE_ENVS")
    if override:
        return [EnvSource(Path(override), kind="builtin")]
    from proactive_tui.core import registry

    return [EnvSource(path, family.name, kind="builtin") for family in registry.families().values()
            for path in family.environments.sample_sources() if path.exists()]


def default_env_sources(extra: list[str] | None = None) -> list["EnvSource | Path"]:
    """The user's folder (if it exists) first, then the shipped samples, then the `extra` paths
    (the config's `envs`, then `--envs`). An id several of them hold stays with the user's own
    data and the others are listed as `<source>:<id>` (`envs.sources`)."""
    from proactive_tui.envs.registry import EnvSource
    from proactive_tui.paths import user_envs_dir

    sources: list[EnvSource | Path] = []
    user = user_envs_dir()
    if user.exists():
        sources.append(EnvSource(user, kind="envs_folder"))
    sources.extend(sample_sources())
    sources.extend(Path(p) for p in (extra or []))
    return sources


__all__ = ["Environment", "EnvironmentSet", "EnvSource", "LoadProblem", "default_env_sources", "load_default", "load_paths",
           "sample_sources"]
