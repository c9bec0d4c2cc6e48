"""Environment loading for every installed family: schemas and loaders live in each family's
folder; this package holds the shared base, the problem type and the folder scan.

`load_paths` is the one entry point; `load_default` adds the shipped samples and the user's folder.
"""

from __future__ import annotations

from proactive_tui.envs.problems import LoadProblem
from proactive_tui.envs.registry import Environment, EnvironmentSet, EnvSource, load_paths


def load_default(extra: list[str] | None = None, *, lazy: bool = False) -> EnvironmentSet:
    """`lazy`: from the catalog's cached index, entries parsed on use (`envs.catalog`; the picker)."""
    from proactive_tui.paths import default_env_sources

    return load_paths(default_env_sources(extra), lazy=lazy)


__all__ = ["Environment", "EnvironmentSet", "EnvSource", "LoadProblem", "load_default", "load_paths"]
