"""`--structured-mode` before or after the command, what it sets, and a setup failure printed once."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT
from proactive_tui.llm import model_flags
from proactive_tui.cli.main import build_parser
from proactive_tui.llm.settings import resolve_roles


@pytest.mark.parametrize("argv", [
    ["--structured-mode", "json_object", "run", "proactiveeval/persuasion/fair/0"],
    ["run", "proactiveeval/persuasion/fair/0", "--structured-mode", "json_object"],
    ["eval", "proactiveeval", "--structured-mode", "json_object"],
])
def test_flag_reaches_every_seat_wherever_it_is_given(argv: list[str]) -> None:
    args, extra = build_parser().parse_known_args(argv)
    assert extra == [] and args.structured_mode == "json_object"
    env = {"PROACTIVE_TUI_AGENT_STRUCTURED_MODE": "prompt"}  # the flag wins over the variables
    model_flags.apply(args, env)
    roles = resolve_roles(environ=env)
    assert {roles.agent.structured, roles.user.structured, roles.judge.structured} == {"json_object"}


def test_no_flag_changes_nothing_and_a_bad_mode_is_a_usage_error() -> None:
    args, _ = build_parser().parse_known_args(["run", "proactiveeval/persuasion/fair/0"])
    env: dict[str, str] = {}
    model_flags.apply(args, env)
    assert env == {} and resolve_roles(environ=env).agent.structured == "auto"
    with pytest.raises(SystemExit) as info:
        build_parser().parse_known_args(["--structured-mode", "xml", "run", "x"])
    assert info.value.code == 2


def test_a_setup_failure_is_printed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`foo/bar` in the agent seat: the run is refused before the session (the seat check), and the
    cause appears once, as the unknown provider it is (never a missing key)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROACTIVE_TUI_") or k in ("PROACTIVE_TUI_CONFIG", "PROACTIVE_TUI_DATA")}
    proc = subprocess.run(
        [sys.executable, "-m", "proactive_tui", "run", "proactiveeval/persuasion/fair/0", "--agent", "foo/bar",
         "--max-turns", "1", "--no-store"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1
    assert out.count("unknown provider foo") == 1, out
    assert "API key" not in out and "FOO_API_KEY" not in out
    assert "the session was not started" in out
