"""Shared fixtures: every test runs with its own config and data dirs, never the real home."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
PROACTIVEBENCH_DATA = SHARED / "data" / "proactivebench"
SAMPLE_ENVS = ROOT / "sample_envs"

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("PROACTIVE_TUI_CONFIG", str(home / "config.toml"))
    monkeypatch.setenv("PROACTIVE_TUI_DATA", str(home / "data"))
    return home
