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


BUNDLED = "_bundled"
"""The package folder the wheel carries the top-level `themes/` and `sample_envs/` in (the build maps
them there: see `[tool.setuptools.package-dir]` in pyproject.toml)."""


def bundled_dir(name: str) -> Path:
    """Where the shipped folder `name` (`themes`, `sample_envs`) is, the one answer for both ways of
    running: in an installed wheel, `proactive_tui/_bundled/<name>`; in a source checkout (run as
    `PYTHONPATH=$PWD python -m proactive_tui`, or an editable install), the repository's top-level
    `<name>/`, which is the source of truth. The wheel's copy is looked for first: a folder beside an
    installed package (site-packages/themes) could be anybody's."""
    package = Path(__file__).resolve().parent
    installed = package / BUNDLED / name
    return installed if installed.is_dir() else package.parent / name


def builtin_themes_dir() -> Path:
    """The shipped themes (top-level `themes/`), in a source tree and in an installed wheel alike."""
    return bundled_dir("themes")


def sample_envs_dir(family: str) -> Path:
    """A built-in family's shipped environments (top-level `sample_envs/<family>/`)."""
    return bundled_dir("sample_envs") / family

