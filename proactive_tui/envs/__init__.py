"""Environment loading for every installed family: schemas and loaders live in each family's
folder; this package holds the shared base, the problem type and the folder scan.

`load_paths` is the one entry point; `load_default` adds the shipped samples and the user's folder.

The names below are imported on first use (PEP 562), not with the package: the playground's
first frame reads `envs.catalog` and `envs.first_frame`, which must not pull in pydantic and the
loader with the package (`tests/test_import_contracts.py` checks the first frame's imports).
"""

from __future__ import annotations

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
    from proactive_tui.paths import default_env_sources, user_envs_dir

    if seen_by is not None:  # listed only when it exists: its appearing changes what is loaded
        seen_by.root(user_envs_dir())
    return load_paths(default_env_sources(extra), lazy=lazy, seen_by=seen_by, later=later)


__all__ = ["Environment", "EnvironmentSet", "EnvSource", "LoadProblem", "load_default", "load_paths"]
