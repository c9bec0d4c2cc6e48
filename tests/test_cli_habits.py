"""Habits every command line keeps (issue 36, point 6): a one-line description on every command,
help on every `--envs`, shell completion from the same tree, `locate` saying when a folder is not
there yet, a closed pipe ending a command quietly with 0, and no screen opened without a terminal.

Processes are real (`python -m proactive_tui`) wherever the behaviour depends on the streams: a
pipe whose reader has gone, stdin and stdout that are not terminals.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

ENV_ID = "proactiveeval/persuasion/fair/0"


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser, the help its parent gave it) for every parser under `parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*path, name), sub, helps.get(name)
                yield from walk(sub, (*path, name))


def test_every_command_has_a_one_line_help_and_every_envs_option_has_help() -> None:
    from proactive_tui.cli.main import build_parser

    root = build_parser()
    found = list(walk(root))
    assert len(found) > 30 and ("completion",) in [p for p, _, _ in found]
    missing = [" ".join(p) for p, _, h in found if not h or h == argparse.SUPPRESS or "\n" in h]
    assert missing == []
    with_envs = [(p, a) for p, sub, _ in [((), root, None), *found] for a in sub._actions if "--envs" in a.option_strings]
    assert {" ".join(p) for p, _ in with_envs} >= {"", "envs list", "envs show", "run", "compare run", "eval run"}
    assert [" ".join(p) for p, a in with_envs if not a.help or a.help == argparse.SUPPRESS] == []


def python_path() -> str:
    """This checkout first, then whatever the test run was given."""
    return os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)


def cli(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": python_path(), "COLUMNS": "120"}
    env.pop("TEXTUAL_DRIVER", None)
    return subprocess.run([sys.executable, "-m", "proactive_tui", *args], cwd=ROOT, env=env, text=True,
                          timeout=120, **kwargs)


def complete(script: Path, *words: str) -> list[str]:
    """What bash offers after `proactive-tui WORDS...` (the last word being the one typed so far)."""
    line = " ".join(("proactive-tui", *words))
    probe = (f'source "{script}"; COMP_WORDS=(proactive-tui {" ".join(repr(w) for w in words)}); '
             f"COMP_CWORD={len(words)}; COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}; "
             '_shtab_proactive_tui; printf "%s\\n" "${COMPREPLY[@]}"')
    proc = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completion_completes_commands_options_and_choices(tmp_path: Path) -> None:
    proc = cli("completion", "bash", capture_output=True)
    assert proc.returncode == 0, proc.stderr
    script = tmp_path / "proactive-tui.bash"
    script.write_text(proc.stdout)
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True, timeout=60).returncode == 0
    assert "complete -o bashdefault -F _shtab_proactive_tui proactive-tui" in proc.stdout
    assert complete(script, "loc") == ["locate"]
    assert complete(script, "locate", "") == ["config", "data", "envs", "themes"]
    assert "--envs" in complete(script, "envs", "show", "--e")
    assert {"bash", "zsh"} <= set(complete(script, "completion", ""))


def test_zsh_completion_names_every_command() -> None:
    from proactive_tui.cli.main import build_parser

    proc = cli("completion", "zsh", capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("#compdef proactive-tui")
    commands = {p[0] for p, _, _ in walk(build_parser())}
    assert sorted(c for c in commands if f"\n    {c}:'" not in proc.stdout) == []
    if shutil.which("zsh"):
        assert subprocess.run(["zsh", "-n"], input=proc.stdout, text=True, timeout=60).returncode == 0


def test_locate_says_when_the_folder_does_not_exist_yet(capsys: pytest.CaptureFixture[str]) -> None:
    from proactive_tui.cli.main import main
    from proactive_tui.paths import user_themes_dir

    folder = user_themes_dir()
    assert not folder.exists()
    assert main(["locate", "themes"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{folder}\n"  # the path alone on stdout: `cd "$(proactive-tui locate themes)"`
    assert f"{folder} does not exist yet" in err and "theme .toml" in err
    assert not folder.exists()  # a question, not a change
    folder.mkdir(parents=True)
    assert main(["locate", "themes"]) == 0
    assert capsys.readouterr() == (f"{folder}\n", "")


@pytest.mark.parametrize("args", [["envs", "list"], ["envs", "show", ENV_ID], ["envs", "show", ENV_ID, "--json"],
                                  ["envs", "show", "chronos/car-purchase/positive"]])
def test_a_closed_pipe_exits_0_quietly(args: list[str]) -> None:
    """The reader is gone before the first byte: every write fails (EPIPE), as for `... | head -1`
    when head has already exited. Rich's console used to turn that into exit 1."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = cli(*args, stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def test_head_closing_the_pipe_exits_0() -> None:
    env = {**os.environ, "PYTHONPATH": python_path()}
    for args in ("envs list", f"envs show {ENV_ID}"):
        line = f"set -o pipefail; {sys.executable} -m proactive_tui {args} | head -1"
        proc = subprocess.run(["bash", "-c", line], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (args, proc.stderr)
        assert len(proc.stdout.splitlines()) == 1 and proc.stderr == ""


@pytest.mark.parametrize("args", [[], ["--envs", str(ROOT / "sample_envs" / "chronos")]])
def test_no_terminal_no_screen_but_a_hint_and_exit_2(args: list[str]) -> None:
    """Piped or in CI, the playground would draw to nobody and wait for keys forever."""
    proc = cli(*args, capture_output=True, input="")
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "no terminal" in lines[0]
    assert all(f"`{c}" in lines[0] for c in ("run", "eval", "envs list"))
