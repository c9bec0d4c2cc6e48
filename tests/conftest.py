"""Shared fixtures: every test runs with its own config and data dirs, never the real home."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "proactive_tui"
# Each family's shipped sample environments: one top-level folder per family (the wheel carries
# them inside the package, `proactive_tui.paths.bundled_dir`).
SAMPLE_ENVS = ROOT / "sample_envs"
SAMPLE_DIRS = {
    "proactiveeval": SAMPLE_ENVS / "proactiveeval",
    "proactivebench": SAMPLE_ENVS / "proactivebench",
    "chronos": SAMPLE_ENVS / "chronos",
}
THEMES_DIR = ROOT / "themes"
# The real ProactiveBench data (Apache-2.0, unmodified upstream copy) shipped in the package.
PROACTIVEBENCH_DATA = PACKAGE / "families" / "proactivebench" / "data"
REAL_TRACES = PROACTIVEBENCH_DATA / "real"
REWARD_DATA = PROACTIVEBENCH_DATA / "reward_test.jsonl"

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# `snap_compare` for the screens' SVG snapshots (syrupy; see the module for why it is ours).
pytest_plugins = ("textual_snapshots",)


def chromium() -> str | None:
    """The headless browser the browser tests drive (Debian's `chromium`, installed by `./dev
    test` when it can be), or None: those tests then skip and say why."""
    import shutil

    return next((found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))),
                None)


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("PROACTIVE_TUI_CONFIG", str(home / "config.toml"))
    monkeypatch.setenv("PROACTIVE_TUI_DATA", str(home / "data"))
    return home
