"""Environment schemas and loaders for the three benchmark families.

`load_paths` is the one entry point; `load_default` adds the samples and the user's folder.
"""

from __future__ import annotations

from proactive_tui.envs.problems import LoadProblem
from proactive_tui.envs.registry import FAMILIES, Environment, EnvironmentSet, load_paths


def load_default(extra: list[str] | None = None) -> EnvironmentSet:
    from proactive_tui.paths import default_env_sources

    return load_paths(default_env_sources(extra))


__all__ = ["FAMILIES", "Environment", "EnvironmentSet", "LoadProblem", "load_default", "load_paths"]
