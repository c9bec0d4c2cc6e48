"""Property-based bad input, second part: command lines, and the user's other files.

tests/test_bad_input_properties.py holds that a bad environment file, config file or theme file
loads or becomes one line naming it. These hold the rest of the promise: whatever the input, no
other file of the user's changes (config, themes, environment folders, a file beside them), and a
command line, however mistyped or hostile, gives a result or a clear error, never a traceback and
never a raw control character on the terminal. Each case runs in this process against a home
holding a config, a theme, an environment folder and one recorded session. Derandomized, bounded
example counts and no deadline (a loaded machine neither flakes nor slows the suite).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from proactive_tui.config import ConfigError, load_config
from proactive_tui.envs import load_paths
from proactive_tui.textsafe import plain
from proactive_tui.ui.themes import load_themes
from test_bad_input_properties import (BYTE_ACTIONS, GOOD_CONFIG, GOOD_THEME, LAYOUTS, REPLACEMENT, encode,
                                       mutate, mutated_toml, paths_of, toml_doc)
from test_cli_text_safety import raw_controls

PROPERTY = settings(derandomize=True, max_examples=60, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
STORE_NAMES = ("sessions.db",)
"""The session store may be opened (and its journal files made) by a command that only reads."""


def snapshot(*roots: Path) -> dict[str, str]:
    """Every file under the roots, by path, with a hash of its bytes (the store's files aside)."""
    out = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.name.startswith(STORE_NAMES):
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def home(isolated_dirs: Path, tmp_path: Path) -> dict[str, Any]:
    """A person's setup: a config naming an environment folder, a theme of their own, a notes file
    beside it all, and one recorded ProactiveEval session."""
    from family_runs import run_in_process
    from proactive_tui.config import AppConfig, save_config
    from proactive_tui.paths import config_file, data_dir, user_themes_dir
    from proactive_tui.testing.fake_openai import FakeOpenAIServer
    from test_envs_loaders import CHRONOS
    from test_run_command import judge_aware_responder

    envs = tmp_path / "my-envs"
    (envs / "chronos").mkdir(parents=True)
    (envs / "chronos" / "mine.json").write_text(json.dumps(CHRONOS), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("my own notes\n", encoding="utf-8")
    save_config(AppConfig(envs=[str(envs)], recent_models=["openai/gpt-4.1"]))
    user_themes_dir().mkdir(parents=True, exist_ok=True)
    (user_themes_dir() / "mine.toml").write_text(toml_doc({**GOOD_THEME, "name": "mine"}), encoding="utf-8")
    with FakeOpenAIServer(responder=judge_aware_responder) as server:
        session = run_in_process("proactiveeval", server.base_url, tmp_path / "run.json")
    roots = (tmp_path, config_file().parent, data_dir())
    return {"envs": envs, "session": session, "roots": roots, "tmp": tmp_path}


# -- loaders: a bad file beside the user's own changes none of them ----------------------------------


@PROPERTY
@given(data=st.data())
def test_loading_a_bad_environment_file_changes_no_file(home, data) -> None:
    family = data.draw(st.sampled_from(sorted(LAYOUTS)), label="family")
    folder = home["tmp"] / "drop"
    bad, good, doc, _ = LAYOUTS[family](folder)
    good.parent.mkdir(parents=True, exist_ok=True)
    good.write_text(json.dumps(doc), encoding="utf-8")
    mutated = mutate(doc, data.draw(st.sampled_from(paths_of(doc)), label="path"),
                     data.draw(st.sampled_from(["replace", "delete", "wrap"]), label="action"),
                     data.draw(REPLACEMENT, label="replacement"))
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(encode(mutated, data.draw(BYTE_ACTIONS, label="bytes"), data.draw(st.floats(0, 1), label="cut")))
    before = snapshot(*home["roots"])
    loaded = load_paths([folder, home["envs"]])  # returns, never raises
    assert loaded.get("chronos/mine") is not None
    assert snapshot(*home["roots"]) == before


@PROPERTY
@given(data=st.data())
def test_a_bad_config_file_is_one_line_per_setting_and_never_rewritten(home, data) -> None:
    from proactive_tui.cli.main import main
    from proactive_tui.paths import config_file

    config_file().write_bytes(mutated_toml(data, GOOD_CONFIG))
    before = snapshot(*home["roots"])
    try:
        load_config()
    except ConfigError as exc:
        assert all(line.startswith(f"{config_file()}: ") for line in str(exc).splitlines())
    assert main(["locate", "config"]) == 0  # a command that reads the config still answers
    assert snapshot(*home["roots"]) == before


@PROPERTY
@given(data=st.data())
def test_a_bad_theme_file_changes_no_file(home, data) -> None:
    from proactive_tui.paths import builtin_themes_dir, user_themes_dir

    (user_themes_dir() / "z-bad.toml").write_bytes(mutated_toml(data, {**GOOD_THEME, "name": "z-bad"}))
    before = snapshot(*home["roots"])
    themes, problems = load_themes([builtin_themes_dir(), user_themes_dir()])
    assert "mine" in [t.name for t in themes] and "proactive-dark" in [t.name for t in themes]
    assert all("\n" not in p and p.startswith(str(user_themes_dir() / "z-bad.toml")) for p in problems)
    assert snapshot(*home["roots"]) == before


# -- command lines: a result or a clear error, never a traceback, nothing else changed ----------------

HOSTILE = ["\x1b]0;TITLE\x07", "\x1b]52;c;cHduZWQ=\x07", "\x1b[2J", "a\x9bb", "\u202eevil", "a\udcffb", "", " ", "-",
           "--", "[bold]x[/]", "x" * 300]
SAFE_COMMANDS = [
    ["envs", "list"], ["envs", "show"], ["envs", "validate"], ["sessions", "list"], ["sessions", "show"],
    ["sessions", "fork"], ["sessions", "tree"], ["labels", "list"], ["labels", "verdicts"], ["labels", "add"],
    ["labels", "clear"], ["locate"], ["report", "show"], ["eval", "splits"], ["compare", "list"], ["keys", "list"],
]
"""Commands that call no model and start no server or screen, whatever their arguments."""
FLAGS = ["--json", "--limit", "--family", "--domain", "--env", "--list", "--turn", "--seat", "--verdict", "--kind",
         "--envs", "--out", "--format", "-h", "--help", "--nonsense"]


def tokens(home: dict[str, Any]) -> st.SearchStrategy[str]:
    tmp = home["tmp"]
    known = [home["session"], home["session"][:4], "proactiveeval", "chronos", "chronos/mine", "agent",
             "user", "0", "1", "-1", "99999999999999999999999", "nan", "agree", "disagree", "config", "data", "themes",
             str(home["envs"]), str(tmp / "missing"), str(tmp / "notes.txt"), str(tmp), "/dev/null"]
    return st.sampled_from(known) | st.sampled_from(HOSTILE) | st.sampled_from(FLAGS) | st.text(max_size=12)


@PROPERTY
@given(data=st.data())
def test_any_command_line_gives_a_result_or_a_clear_error(home, data, capsys) -> None:
    from proactive_tui.cli.main import main

    command = data.draw(st.sampled_from(SAFE_COMMANDS), label="command")
    rest = data.draw(st.lists(tokens(home), max_size=5), label="rest")
    before = snapshot(*home["roots"])
    capsys.readouterr()
    try:
        code = main([*command, *rest])
    except SystemExit as exc:  # argparse: a usage error (2) or --help (0)
        code = exc.code
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (command, rest, code, err)
    assert "Traceback" not in out + err
    for stream in (out, err):
        assert raw_controls(stream.encode("utf-8", "replace")) == [], (command, rest, stream[-500:])
    if code:  # the reason is on stderr, or on stdout for a report (`envs validate`'s problems)
        lines = [line for line in (err or out).splitlines() if line.strip()]
        assert lines, (command, rest, "failed without saying why")
        assert all(plain(line) == line for line in lines)
    assert snapshot(*home["roots"]) == before, (command, rest)
