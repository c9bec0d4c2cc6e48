"""The lint (`[tool.ruff]` in pyproject.toml: pyflakes, syntax errors, bugbear) passes on the package,
the tests, the benchmarks and the tools, so an unused import, an undefined name or a closure over a
loop variable fails the suite where it was written rather than in review."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ["proactive_tui", "tests", "benchmarks", "tools"]


def ruff() -> list[str]:
    """ruff from this venv (the test lock pins it), as a module so no PATH is needed."""
    try:
        import ruff  # noqa: F401
    except ImportError:
        if shutil.which("ruff") is None:
            pytest.skip("ruff is not installed (./dev test installs it from requirements/test.lock)")
        return ["ruff"]
    return [sys.executable, "-m", "ruff"]


def test_the_lint_passes() -> None:
    proc = subprocess.run([*ruff(), "check", "--no-cache", *FOLDERS], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_lint_finds_what_it_is_for(tmp_path: Path) -> None:
    """The rule set is live: a file with an unused import, an undefined name and a mutable default
    fails with each named (so a config that silently checks nothing would fail here)."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\ndef f(x=[]):\n    return y\n", encoding="utf-8")
    proc = subprocess.run([*ruff(), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(bad)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    for code in ("F401", "F821", "B006"):
        assert code in proc.stdout, proc.stdout
