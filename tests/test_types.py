"""The type check (`[tool.mypy]` in pyproject.toml) passes: strict for the engine (core), the model
layer (llm) and the store, so a missing annotation, an unchecked None or an `Any` leaking into a typed
return fails the suite where it was written rather than in review."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STRICT_PACKAGES = ["proactive_tui/core", "proactive_tui/llm", "proactive_tui/store"]


def mypy(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """mypy from this venv (the test lock pins it) with the project's config; its cache in the
    test's temporary folder, so nothing is written into the repository."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (./dev test installs it from requirements/test.lock)")
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(cache), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=900)


def test_the_type_check_passes(tmp_path: Path) -> None:
    """No arguments: mypy checks the config's `files`, which hold the strict packages, and every
    module there is checked (a `files` list that lost a folder would pass while checking less)."""
    files = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["files"]
    assert set(STRICT_PACKAGES) <= set(files)
    proc = mypy(ROOT, tmp_path / "cache")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checked = re.search(r"no issues found in (\d+) source files", proc.stdout)
    assert checked, proc.stdout
    expected = sum(len(list((ROOT / f).rglob("*.py"))) if (ROOT / f).is_dir() else 1 for f in files)
    assert int(checked.group(1)) == expected, proc.stdout


def test_the_strict_config_is_live(tmp_path: Path) -> None:
    """The same untyped code fails as a module of a strict package and passes outside them: the
    strict override matches the real module names (a pattern that matched nothing would leave
    the first test checking only the lenient defaults)."""
    code = "import json\n\ndef untyped(x):\n    return x\n\ndef loose(d: dict) -> int:\n    return json.loads('1')\n"
    for folder in ("proactive_tui/core", "proactive_tui/ui"):
        package = tmp_path / "src" / folder
        package.mkdir(parents=True)
        (package / "probe.py").write_text(code, encoding="utf-8")
    for init in ("proactive_tui", "proactive_tui/core", "proactive_tui/ui"):
        (tmp_path / "src" / init / "__init__.py").write_text("", encoding="utf-8")

    strict = mypy(tmp_path / "src", tmp_path / "cache", "proactive_tui/core/probe.py")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    for code_name in ("no-untyped-def", "type-arg", "no-any-return"):
        assert f"[{code_name}]" in strict.stdout, strict.stdout

    lenient = mypy(tmp_path / "src", tmp_path / "cache", "proactive_tui/ui/probe.py")
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
