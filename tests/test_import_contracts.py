"""Import contracts of the family layout.

1. The engine side stays headless: importing any `proactive_tui.core` module, or any engine part
   of a built-in family (everything under `families/<f>/` except `cli.py` and `ui/`), in a fresh
   interpreter leaves `textual` and `rich` out of `sys.modules`.
2. Families are reached only through the registry: no family imports another, and nothing outside
   `proactive_tui/families/` imports a family module (read statically, lazy imports included).
3. The playground's first frame, drawn from the previous start's snapshot, imports neither
   pydantic nor a family (nor the registry, the loader, the config's model): checked in a fresh
   interpreter at the moment the picker has painted.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PACKAGE, ROOT

UI_LAYERS = ("textual", "rich")
FAMILIES_DIR = PACKAGE / "families"
BUILTIN_FAMILIES = sorted(p.name for p in FAMILIES_DIR.iterdir() if (p / "__init__.py").exists())
OUTSIDE = ("core", "ui", "cli", "export", "store", "envs")
"""The packages that must reach families through the registry (the brief's list; see also
`test_nothing_else_outside_the_families_imports_a_family`)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def core_modules() -> list[str]:
    return sorted(module_name(p) for p in (PACKAGE / "core").glob("*.py"))


def engine_modules() -> list[str]:
    """Every module of every built-in family but its printer (`cli.py`) and its screens (`ui/`)."""
    out = []
    for family in BUILTIN_FAMILIES:
        for path in sorted((FAMILIES_DIR / family).rglob("*.py")):
            rel = path.relative_to(FAMILIES_DIR / family)
            if rel.parts[0] == "ui" or rel.name == "cli.py":
                continue
            out.append(module_name(path))
    return out


PROBE = """
import importlib, json, sys
importlib.import_module({module!r})
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {layers!r})))
"""


def loaded_ui_layers(module: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(module=module, layers=set(UI_LAYERS))],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_module_lists_are_not_empty() -> None:
    assert len(core_modules()) >= 8 and "proactive_tui.core.family" in core_modules()
    assert BUILTIN_FAMILIES == ["chronos", "proactbench", "proactivebench", "proactiveeval"]
    for family in BUILTIN_FAMILIES:
        for part in ("", ".env", ".events", ".settings", ".record", ".report", ".protocol"):
            assert f"proactive_tui.families.{family}{part}" in engine_modules(), (family, part)


@pytest.mark.parametrize("module", core_modules())
def test_core_module_imports_no_ui_layer(module: str) -> None:
    assert loaded_ui_layers(module) == [], f"importing {module} imports {loaded_ui_layers(module)}"


@pytest.mark.parametrize("module", engine_modules())
def test_family_engine_module_imports_no_ui_layer(module: str) -> None:
    assert loaded_ui_layers(module) == [], f"importing {module} imports {loaded_ui_layers(module)}"


HEADLESS_RUN = """
import json, sys
from pathlib import Path
from proactive_tui import envs
from proactive_tui.core import registry
from proactive_tui.core.events import parse_event
from proactive_tui.core.run_record import fold, read_record
loaded = envs.load_default()
assert loaded.environments and not loaded.problems
for family in registry.families().values():
    family.record.events; family.record.legacy_types; family.settings()
legacy = Path("tests/fixtures/legacy")
for path in sorted(legacy.glob("*-run-record-v1.json")):
    record = read_record(path.read_text(encoding="utf-8"))
    registry.get(record.family).report.sections(record)
for path in sorted(legacy.glob("*-events-v1.jsonl")):
    fold(parse_event(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {"textual", "rich"})))
"""


def test_loading_folding_and_reporting_stay_headless() -> None:
    """The registry, environment loading, event parsing, folding and report sections together."""
    proc = subprocess.run([sys.executable, "-c", HEADLESS_RUN], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


# -- static: who imports which family ----------------------------------------------------------

def imported_modules(path: Path, package: str | None = None) -> list[tuple[int, str]]:
    """(line, module) for every import in the file, lazy ones included; `from a import b` counts
    as importing both `a` and `a.b` (b may be a submodule); relative imports are resolved;
    `importlib.import_module("literal")` counts too. `package`: the package relative imports are
    resolved against (by default the file's own)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    if package is None:
        package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names if alias.name != "*"]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value))
    return found


def family_of_module(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) >= 3 and parts[:2] == ["proactive_tui", "families"]:
        return parts[2]
    return None


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def family_imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, module, family) for each import statement of a family module (one per line: the
    module itself, not the names taken from it)."""
    by_line: dict[int, str] = {}
    for line, module in imported_modules(path):
        if family_of_module(module) is not None and (line not in by_line or len(module) < len(by_line[line])):
            by_line[line] = module
    return [(line, module, family_of_module(module) or "") for line, module in sorted(by_line.items())]


def test_no_family_imports_another() -> None:
    offences = []
    for family in BUILTIN_FAMILIES:
        for path in sorted((FAMILIES_DIR / family).rglob("*.py")):
            for line, module, other in family_imports(path):
                if other != family:
                    offences.append(f"{_where(path, line)} imports {module}")
    assert offences == [], "families import each other:\n" + "\n".join(offences)


@pytest.mark.parametrize("package", OUTSIDE)
def test_shared_packages_reach_families_only_through_the_registry(package: str) -> None:
    offences = []
    for path in sorted((PACKAGE / package).rglob("*.py")):
        for line, module, _ in family_imports(path):
            offences.append(f"{_where(path, line)} imports {module}")
    assert offences == [], f"proactive_tui/{package} imports family modules directly:\n" + "\n".join(offences)


def test_nothing_else_outside_the_families_imports_a_family() -> None:
    """The rest of the package (top-level modules, llm/, testing/) too."""
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).parts
        if rel[0] == "families" or rel[0] in OUTSIDE:
            continue
        for line, module, _ in family_imports(path):
            offences.append(f"{_where(path, line)} imports {module}")
    assert offences == [], "\n".join(offences)


def test_the_static_reader_sees_lazy_relative_and_from_imports(tmp_path: Path) -> None:
    """The checker itself: the import forms a family reference could take are all seen."""
    source = ("import proactive_tui.families.proactiveeval.env\n"
              "from proactive_tui.families import proactivebench\n"
              "def f():\n    from ..proactiveeval import report\n"
              "    importlib.import_module('proactive_tui.families.chronos.protocol')\n")
    probe = tmp_path / "probe.py"
    probe.write_text(source, encoding="utf-8")
    found = imported_modules(probe, package="proactive_tui.families.countdown")
    assert {family_of_module(m) for _, m in found} >= {"proactiveeval", "proactivebench", "chronos"}
    assert (4, "proactive_tui.families.proactiveeval.report") in found


# -- the playground's first frame -------------------------------------------------------------

FIRST_FRAME = """
import json, os, sys
from proactive_tui.ui.app import ProactiveApp

class Probe(ProactiveApp):
    def _picker_ready(self):  # the picker has painted: what the first frame needed is imported
        self.seen = sorted(sys.modules)
        self.exit()  # before the settling step: the snapshot is then left when the app unmounts

app = Probe()
app.run(headless=True, size=(120, 40))
print(json.dumps({"first_frame": app._first_frame is not None, "modules": app.seen}))
"""


def test_the_first_frame_imports_neither_pydantic_nor_a_family(tmp_path: Path) -> None:
    """A start that finds the previous start's snapshot (`envs.first_frame`) draws the picker
    without pydantic, without any family and without the loader: each costs the first screen
    tens of milliseconds (issue 35). Checked in fresh interpreters: the first start (no snapshot,
    the usual load, which leaves one) and the second (drawn from it)."""
    env = dict(os.environ, PROACTIVE_TUI_CONFIG=str(tmp_path / "config.toml"), PROACTIVE_TUI_DATA=str(tmp_path / "data"),
               PROACTIVE_TUI_PRELOAD="off")
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", FIRST_FRAME], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert not first["first_frame"] and "pydantic" in first["modules"]  # the usual load: the probe sees what it loads
    assert second["first_frame"]
    heavy = [m for m in second["modules"] if m == "pydantic" or m.startswith(("pydantic.", "proactive_tui.families",
                                                                               "proactive_tui.core", "litellm"))
             or m in ("proactive_tui.envs.registry", "proactive_tui.config")]
    assert heavy == [], f"the first frame imports {heavy}"
    assert "proactive_tui.ui.screens.picker" in second["modules"] and "proactive_tui.envs.first_frame" in second["modules"]
