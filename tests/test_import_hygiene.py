"""Cheap start-up: the package and its headless commands never import the heavy layers.

Copied from Harlequin's idea: a subprocess imports and runs, then reports `sys.modules`.
"""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

PROBE = """
import json, sys, io, contextlib
from proactive_tui.cli.main import main
out = io.StringIO()
code = None
with contextlib.redirect_stdout(out):
    try:
        code = main({argv!r})
    except SystemExit as exc:
        code = exc.code
heavy = sorted({{m.split('.')[0] for m in sys.modules}} & {{'litellm', 'textual', 'llama_cpp', 'openai', 'scipy', 'sklearn', 'krippendorff'}})
print(json.dumps({{"code": code, "heavy": heavy}}))
"""


def probe(argv: list[str]) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_package_is_light() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import proactive_tui, proactive_tui.envs, proactive_tui.cli.main, sys; "
         "print(sorted({m.split('.')[0] for m in sys.modules} & {'litellm','textual','llama_cpp','rich','scipy','sklearn','krippendorff'}))"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_help_does_not_import_heavy_layers() -> None:
    assert probe(["--help"]) == {"code": 0, "heavy": []}


def test_envs_list_does_not_import_heavy_layers() -> None:
    assert probe(["envs", "list"]) == {"code": 0, "heavy": []}


def test_scipy_is_imported_only_to_compute_an_interval() -> None:
    """The report's modules, its bootstrap record and a figure with one environment (no interval)
    leave scipy unloaded; the first interval over two environments loads it."""
    code = (
        "import sys\n"
        "from proactive_tui.evalrun import report, stats\n"
        "figure = lambda sums: sums[..., 1] / sums[..., 0]\n"
        "steps = [stats.bootstrap_library().startswith('scipy '), stats.bootstrap_interval([[[1.0, 2.0]]], figure),\n"
        "         'scipy' in sys.modules]\n"
        "low, high = stats.bootstrap_interval([[[1.0, 2.0]], [[1.0, 5.0]], [[1.0, 3.0]]], figure)\n"
        "print(steps + [2.0 <= low <= high <= 5.0, 'scipy' in sys.modules])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "[True, None, False, True, True]", proc.stdout + proc.stderr
