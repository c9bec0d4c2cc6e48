"""Text that is not storable or would act on the terminal: lone surrogates, bidi controls, NaN."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SAMPLE_DIRS
from proactive_tui.envs import load_paths
from proactive_tui.envs.reading import Unreadable, read_json
from proactive_tui.textsafe import plain, scrub


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json_numbers(tmp_path: Path, constant: str) -> None:
    f = tmp_path / "x.json"
    f.write_text('{"turn_limit": %s}' % constant, encoding="utf-8")
    with pytest.raises(Unreadable) as info:
        read_json(f)
    assert f"{constant} is not a JSON number" in info.value.problem.message and info.value.problem.file == str(f)


def test_an_environment_file_spelling_a_lone_surrogate_loads_with_a_replacement(tmp_path: Path) -> None:
    raw = json.loads((SAMPLE_DIRS["chronos"] / "car-purchase.json").read_text(encoding="utf-8"))
    raw["persona"] = "Rafael \ud800 Souza"
    folder = tmp_path / "chronos"
    folder.mkdir()
    (folder / "odd.json").write_text(json.dumps(raw), encoding="utf-8")  # json.dumps spells it \ud800
    assert "\\ud800" in (folder / "odd.json").read_text(encoding="utf-8")
    loaded = load_paths([tmp_path])
    assert not loaded.problems
    env = loaded.get("chronos/odd/positive")
    assert env.scenario.persona == "Rafael \ufffd Souza"
    env.model_dump_json()  # storable: this raised before


def test_plain_shows_bidi_controls_and_replaces_surrogates() -> None:
    assert plain("pay \u202eevil\u202c now") == "pay <U+202E>evil<U+202C> now"
    assert plain("\u2066x\u2069\u200f") == "<U+2066>x<U+2069><U+200F>"
    assert plain("a\ud800b") == "a\ufffdb" and scrub("ok") == "ok"
    assert plain("é ✓ 😀") == "é ✓ 😀"  # ordinary text untouched


ESCAPES = "\x1b]0;pwned title\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[31m"


def test_envs_list_and_show_never_print_a_files_escape_sequences(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from conftest import ROOT

    raw = json.loads((SAMPLE_DIRS["chronos"] / "car-purchase.json").read_text(encoding="utf-8"))
    raw["title"] = "Hatchback" + ESCAPES + " \u202eevil"
    raw["persona"] = "Rafael" + ESCAPES
    folder = tmp_path / "chronos"
    folder.mkdir()
    (folder / "esc.json").write_text(json.dumps(raw), encoding="utf-8")
    env = {**os.environ, "COLUMNS": "160"}
    for args in (["envs", "list", "--family", "chronos"], ["envs", "show", "chronos/esc/positive"]):
        proc = subprocess.run([sys.executable, "-m", "proactive_tui", "--envs", str(tmp_path), *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout + proc.stderr
        assert "Hatchback" in out and "\x1b]" not in out and "\x07" not in out and "\x1b[2J" not in out, args
        assert "\u202e" not in out and "<U+202E>evil" in out.replace("\n", "")


@pytest.mark.parametrize("content", ["a = " + "[" * 3000 + "]" * 3000, "a = " + "{b = " * 3000 + "1" + "}" * 3000])
def test_deeply_nested_toml_is_a_readable_error_for_config_and_themes(tmp_path: Path, content: str) -> None:
    from proactive_tui.config import ConfigError, load_config
    from proactive_tui.ui.themes import load_themes

    config = tmp_path / "config.toml"
    config.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_config(config)
    themes_dir = tmp_path / "themes"
    themes_dir.mkdir()
    (themes_dir / "deep.toml").write_text(content, encoding="utf-8")
    themes, problems = load_themes([themes_dir])  # one bad theme never stops the others (or the app)
    assert any("nested too deeply" in p and "deep.toml" in p for p in problems)


def test_toml_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    from proactive_tui.config import load_config

    config = tmp_path / "config.toml"
    config.write_bytes("\ufeff".encode("utf-8") + b'[roles.agent]\nmodel = "openai/gpt-4.1"\n')
    assert load_config(config).roles.agent.model == "openai/gpt-4.1"


def test_folder_scans_name_what_they_cannot_read(tmp_path: Path) -> None:
    import os

    root = tmp_path / "envs"
    (root / "chronos").mkdir(parents=True)
    good = json.loads((SAMPLE_DIRS["chronos"] / "car-purchase.json").read_text(encoding="utf-8"))
    (root / "chronos" / "ok.json").write_text(json.dumps(good), encoding="utf-8")
    os.symlink(root, root / "chronos" / "loop")                       # a folder that leads back up
    os.symlink(root / "missing.json", root / "chronos" / "gone.json")  # a dangling file link
    os.symlink(root / "nowhere", root / "chronos" / "lost")            # a dangling folder link
    (root / "fair.json").mkdir()                                       # a folder named like a file
    loaded = load_paths([root])
    assert [e.id for e in loaded.environments] == ["chronos/ok/positive", "chronos/ok/negative"]  # read once
    messages = {Path(p.file).name: p.message for p in loaded.problems}
    assert "symlink loop" in messages["loop"]
    assert "broken symlink" in messages["gone.json"] and "broken symlink" in messages["lost"]
    assert "folder named like a .json file" in messages["fair.json"]
