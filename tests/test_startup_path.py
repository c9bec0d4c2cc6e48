"""What opening the playground costs before the first screen: the CLI side of start-up.

`proactive-tui` with no command must reach `run_app` without building the full parser (which
loads every family's `eval` and `run` flags); anything else still gets the full parser and its
messages. Measured in a fresh interpreter so modules imported by other tests do not hide it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT
from proactive_tui.cli import main as cli_main

PROBE = """
import json, sys
from proactive_tui.cli import app_cmd
seen = []
app_cmd.run_app = lambda args: seen.append(list(args.envs)) or 0
from proactive_tui.cli.main import main
code = main({argv!r})
loaded = sorted(m for m in sys.modules if m.endswith(".eval_cli") or m == "proactive_tui.evalrun.options")
print(json.dumps({{"code": code, "envs": seen, "loaded": loaded}}))
"""


def probe(argv: list[str]) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_opening_the_playground_skips_the_command_parsers() -> None:
    assert probe([]) == {"code": 0, "envs": [[]], "loaded": []}


def test_envs_option_reaches_the_playground() -> None:
    assert probe(["--envs", "a", "--envs=b"]) == {"code": 0, "envs": [["a", "b"]], "loaded": []}


@pytest.mark.parametrize("argv", [["-h"], ["--version"], ["--bogus"], ["--envs"], ["envs", "list"]])
def test_anything_else_goes_to_the_full_parser(argv: list[str]) -> None:
    assert cli_main._playground_args(argv) is None


def test_a_mistake_is_still_reported_by_the_full_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main.main(["--bogus"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_report_option_opens_the_playground_on_the_fast_path() -> None:
    """`proactive-tui --report DIR` is the playground (the results screen on top of the picker),
    so it takes the light parser like `--envs`; `report show DIR` stays a command."""
    args = cli_main._playground_args(["--report", "runs/sweep1", "--envs", "e"])
    assert args is not None and args.report == "runs/sweep1" and args.envs == ["e"]
    assert cli_main._playground_args(["report", "show", "runs/sweep1"]) is None
