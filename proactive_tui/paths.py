"""Where proactive-tui keeps things: config, data (sessions, user environments) and user themes.

Every location can be moved by an environment variable so tests and CI never touch a real home.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "proactive-tui"


def _dirs():
    import platformdirs

    return platformdirs.PlatformDirs(APP_NAME, appauthor=False)


def config_file() -> Path:
    override = os.environ.get("PROACTIVE_TUI_CONFIG")
    if override:
        return Path(override).expanduser()
    return Path(_dirs().user_config_dir) / "config.toml"


def data_dir() -> Path:
    override = os.environ.get("PROACTIVE_TUI_DATA")
    return Path(override).expanduser() if override else Path(_dirs().user_data_dir)


def cache_dir() -> Path:
    """What can be rebuilt from other files (the environment catalog, `envs.catalog`):
    `PROACTIVE_TUI_CACHE`, else `cache` in the data folder when `PROACTIVE_TUI_DATA` moves that
    (tests and benchmarks then keep their caches in their own folders too), else the platform's
    cache folder."""
    override = os.environ.get("PROACTIVE_TUI_CACHE")
    if override:
        return Path(override).expanduser()
    if os.environ.get("PROACTIVE_TUI_DATA"):
        return data_dir() / "cache"
    return Path(_dirs().user_cache_dir)


def user_envs_dir() -> Path:
    """Drop environment files here to have them listed next to the samples."""
    return data_dir() / "envs"


def user_themes_dir() -> Path:
    return data_dir() / "themes"


def builtin_themes_dir() -> Path:
    """The themes shipped inside the package (`proactive_tui/data/themes`), in a source tree and
    in an installed wheel alike (both are folders on disk; `importlib.resources` cost the first
    frame 3 ms for the same path)."""
    return Path(__file__).resolve().parent / "data" / "themes"


def sample_sources() -> list:
    """Every installed family's shipped environments (package data), as loader sources.

    `PROACTIVE_TUI_SAMPLE_ENVS` replaces them with one folder (tests and benchmarks use it)."""
    from proactive_tui.envs.registry import EnvSource

    override = os.environ.get("PROACTIVE_TUI_SAMPLE_ENVS")
    if override:
        return [EnvSource(Path(override), kind="builtin")]
    from proactive_tui.core import registry

    return [EnvSource(path, family.name, kind="builtin") for family in registry.families().values()
            for path in family.sample_sources() if path.exists()]


def default_env_sources(extra: list[str] | None = None) -> list:
    """The user's folder (if it exists) first, then the shipped samples, then the `extra` paths
    (the config's `envs`, then `--envs`). An id several of them hold stays with the user's own
    data and the others are listed as `<source>:<id>` (`envs.sources`)."""
    from proactive_tui.envs.registry import EnvSource

    sources: list = []
    user = user_envs_dir()
    if user.exists():
        sources.append(EnvSource(user, kind="envs_folder"))
    sources.extend(sample_sources())
    sources.extend(Path(p) for p in (extra or []))
    return sources
