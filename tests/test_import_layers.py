"""The layers of proactive_tui (`.importlinter`) hold: lint-imports keeps every contract.

Why a test and not only a CI step: a move that imports upward (an engine module reaching for the
store, a screen for the CLI, a lazy import inside a function included) then fails the suite where
it is made, with import-linter's chain of imports naming the line. The second test proves the
check can fail: the same run with one contract the code is known to break must report it.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

CONFIG = ROOT / ".importlinter"
# The console script's own entry point, run by this interpreter: the lint-imports of the test venv,
# whatever folder its scripts are in.
LINT_IMPORTS = "import sys; from importlinter.cli import lint_imports_command; sys.argv[0] = 'lint-imports'; " \
               "sys.exit(lint_imports_command())"


def lint_imports(config: Path) -> subprocess.CompletedProcess[str]:
    # This checkout's package, not another one installed in the venv (an editable install of
    # another clone would otherwise be the one analysed).
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               COLUMNS="200", NO_COLOR="1")
    return subprocess.run([sys.executable, "-c", LINT_IMPORTS, "--config", str(config), "--no-cache"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def contract_names(config: Path) -> list[str]:
    parser = configparser.ConfigParser(inline_comment_prefixes=None, comment_prefixes=(";", "#"))
    parser.read(config, encoding="utf-8")
    return [parser[s]["name"] for s in parser.sections() if s.startswith("importlinter:contract:")]


def test_every_layer_contract_is_kept() -> None:
    names = contract_names(CONFIG)
    assert len(names) >= 5, names  # layers, engine, services, families' engines and parts at least
    result = lint_imports(CONFIG)
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(names)} kept, 0 broken." in output, output
    for name in names:
        assert f"{name} KEPT" in output, (name, output)


def test_a_broken_contract_fails_the_check(tmp_path: Path) -> None:
    """The CLI imports the engine everywhere: forbidding it must break, so the run above would
    fail on any broken contract rather than pass by not looking."""
    config = tmp_path / "importlinter.ini"
    config.write_text(CONFIG.read_text(encoding="utf-8") + """
[importlinter:contract:deliberately-broken]
name = The CLI imports no engine (false on purpose)
type = forbidden
source_modules =
    proactive_tui.cli
forbidden_modules =
    proactive_tui.core
""", encoding="utf-8")
    result = lint_imports(config)
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 1, output
    assert "The CLI imports no engine (false on purpose) BROKEN" in output, output
    assert "proactive_tui.cli.headless -> proactive_tui.core." in output, output  # the chain, named
