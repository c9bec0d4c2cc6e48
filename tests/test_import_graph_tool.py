"""tools/import_graph.py, the script that prints the import picture (cycles, upward imports, large
modules): it tells top-level, lazy and TYPE_CHECKING imports apart, finds cycles, places modules
in the layers `.importlinter` checks, and reports the package as it is today."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

SCRIPT = ROOT / "tools" / "import_graph.py"


def load_tool():
    spec = importlib.util.spec_from_file_location("import_graph", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_imports_are_told_apart_by_where_they_run(tmp_path: Path) -> None:
    graph = load_tool()
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from proactive_tui.core import events\n"
        "if TYPE_CHECKING:\n    from proactive_tui.store.db import Store\n"
        "def f():\n    from proactive_tui.cli.printer import EventPrinter, SPEAKER_STYLE\n"
        "    import proactive_tui.ui.app\n",
        encoding="utf-8")
    modules = {m: Path() for m in ("proactive_tui.core.events", "proactive_tui.store.db", "proactive_tui.cli.printer",
                                   "proactive_tui.ui.app", "proactive_tui.core.probe")}
    edges = {(e.target, e.kind) for e in graph.imports_of("proactive_tui.core.probe", source, modules)}
    assert edges == {("proactive_tui.core.events", "top"), ("proactive_tui.store.db", "typing"),
                     ("proactive_tui.cli.printer", "lazy"), ("proactive_tui.ui.app", "lazy")}


def test_cycles_and_layers() -> None:
    graph = load_tool()
    found = graph.strongly_connected(["a", "b", "c", "d"], {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert sorted(map(tuple, found)) == [("a", "b", "c"), ("d",)]
    assert graph.layer_of("proactive_tui.core.events") == "engine"
    assert graph.layer_of("proactive_tui.families.chronos.protocol") == "families"
    assert graph.layer_of("proactive_tui.families.chronos.ui.session") == "ui"  # the longer prefix wins
    assert graph.layer_of("proactive_tui.families.chronos.cli") == "cli"
    assert graph.layer_of("proactive_tui.services.labels") == "services"
    assert graph.layer_of("proactive_tui.families.chronos.generate") == "pipelines"  # as .importlinter has it
    assert graph.is_plugin_load("proactive_tui.families.chronos", "proactive_tui.families.chronos.ui.session", "lazy")
    assert not graph.is_plugin_load("proactive_tui.families.chronos", "proactive_tui.families.chronos.ui.session", "top")


def test_the_package_has_no_upward_import_but_the_declared_ones() -> None:
    """What the script reports today: every upward import is TYPE_CHECKING-only (the family
    contract naming the types of the parts it hands out); none runs."""
    out = subprocess.run([sys.executable, str(SCRIPT), "--edges"], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    upward = out.split("== upward imports", 1)[1].split("== the 15 largest", 1)[0]
    edges = [line.strip() for line in upward.splitlines() if line.startswith("    ")]
    assert edges, upward
    executed = [e for e in edges if not e.endswith("[typing]")]
    assert executed == [], executed
    assert "== the 15 largest modules (lines)" in out
