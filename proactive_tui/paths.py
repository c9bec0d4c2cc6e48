"""Where proactive-tui keeps things: config, data (sessions, user environments) and user themes.

Every location can be moved by an environment variable so tests and CI never touch a real home.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "proactive-tui"
PACKAGE_ROOT = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_ROOT.parent


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


def user_envs_dir() -> Path:
    """Drop environment files here to have them listed next to the samples."""
    return data_dir() / "envs"


def user_themes_dir() -> Path:
    return data_dir() / "themes"


def builtin_themes_dir() -> Path:
    return REPO_ROOT / "themes"


def sample_envs_dir() -> Path:
    override = os.environ.get("PROACTIVE_TUI_SAMPLE_ENVS")
    return Path(override) if override else REPO_ROOT / "sample_envs"


def default_env_sources(extra: list[str] | None = None) -> list[Path]:
    """The samples, the user's folder (if it exists) and any `--envs PATH` given."""
    sources = [sample_envs_dir()]
    user = user_envs_dir()
    if user.exists():
        sources.append(user)
    sources.extend(Path(p) for p in (extra or []))
    return sources
