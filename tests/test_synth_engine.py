"""The synth engine's contracts: headless and storeless, seeds stable across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT
from proactive_tui.synth.engine import stable_seed

PROBE = """
import importlib, json, sys
for name in ("proactive_tui.synth", "proactive_tui.synth.engine", "proactive_tui.families.proactiveeval.synth"):
    importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ("textual", "rich")
                        or m.startswith(("proactive_tui.store", "proactive_tui.cli", "proactive_tui.ui")))))
"""


def test_the_engine_imports_no_ui_store_or_cli() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_seeds_are_the_same_in_every_process() -> None:
    code = "from proactive_tui.synth.engine import stable_seed; print(stable_seed(7, 'persuasion-0001', 'candidate-2'))"
    seen = set()
    for hash_seed in ("1", "2"):  # Python's own str hash differs between these two processes
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": hash_seed})
        seen.add(int(proc.stdout))
    assert seen == {stable_seed(7, "persuasion-0001", "candidate-2")}
    assert stable_seed(7, "persuasion-0001") != stable_seed(8, "persuasion-0001")
    assert 0 <= stable_seed(7, "x") < 2 ** 31
