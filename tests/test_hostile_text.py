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


# -- hostile model output and environment files, through every surface ----------------------------
#
# One string holds each kind of hostile content: Rich markup, a Textual action link, OSC 52 (set
# the clipboard), OSC 0 (set the window title), CSI 2J (clear the screen), bidi overrides, a NUL
# and a lone surrogate. Text surfaces show it literally, with the escapes removed and the bidi
# controls as <U+202E> tags; JSON keeps it as data (the same string after loading, the controls
# written as \u escapes); the store keeps it byte for byte; the lone surrogate, which cannot be
# stored as UTF-8, is U+FFFD everywhere (textsafe.scrub, where text enters).

HOSTILE = ("[bold]B[/] [@click=app.quit]Q[/] \x1b]52;c;cHduZWQ=\x07\x1b]0;title\x07\x1b[2J "
           "\u202eevil\u202c nul\x00 lone\ud800 end")
STORED = HOSTILE.replace("\ud800", "\ufffd")
"""What every store and JSON surface holds: the same text, the lone surrogate replaced."""
SHOWN = "[bold]B[/] [@click=app.quit]Q[/]  <U+202E>evil<U+202C> nul lone\ufffd end"
"""What every text surface shows: markup literal, escapes and NUL removed, bidi made visible."""
RAW_BYTES = (b"\x1b", b"\x07", b"\x00", "\u202e".encode(), "\u202c".encode(), b"\xc2\x9b", b"\xed\xa0\x80")
"""Bytes no output may hold: ESC, BEL, NUL, the raw bidi controls, 8-bit CSI, a surrogate."""


def assert_no_raw(data: bytes, where: object) -> None:
    found = [b for b in RAW_BYTES if b in data]
    assert not found, (where, found)


def strings_in(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in strings_in(k) + strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


def test_plain_shows_every_hostile_kind_literally() -> None:
    assert plain(HOSTILE) == SHOWN


def test_json_text_escapes_bidi_and_controls_and_round_trips() -> None:
    from proactive_tui.textsafe import json_text

    data = {"text": HOSTILE, "c1": "a\x9bb\u2028", "keys\u202e": [HOSTILE]}
    text = json_text(data, indent=2)
    assert_no_raw(text.encode("utf-8"), "json_text")
    assert "\\u202e" in text and "\\u009b" in text and "\\u2028" in text
    assert json.loads(text) == json.loads(json.dumps(data).replace("\\ud800", "\\ufffd"))
    assert json_text({"a": "é ✓ 😀"}) == '{"a": "é ✓ 😀"}'  # ordinary text stays as written


def check_text_surface(data: bytes, where: object, shown: str = SHOWN) -> None:
    assert_no_raw(data, where)
    assert shown in data.decode("utf-8"), where


def check_json_surface(data: bytes, where: object) -> list[str]:
    assert_no_raw(data, where)
    assert b"\\u202e" in data, where
    return strings_in(json.loads(data.decode("utf-8")))


@pytest.mark.parametrize("family", ["proactiveeval", "proactivebench", "chronos", "proactbench"])
def test_hostile_model_output_and_env_file_through_run_store_and_every_export(
        family: str, tmp_path: Path, isolated_dirs: Path) -> None:
    """A headless session whose model replies and environment file both carry HOSTILE: the
    run's output, `--out`, the store, `sessions show` (text and JSON), `sessions list --json` and
    every export format, each checked as text or as data."""
    from family_runs import RUNS, cli, export_all, hostile_env_files, run_family, session_id_of, with_text
    from proactive_tui.store.db import Store, default_path
    from proactive_tui.store.queries import load_record
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    run = RUNS[family]
    env_ids = hostile_env_files(tmp_path / "envs", HOSTILE)
    out = tmp_path / "run.json"
    with FakeOpenAIServer(responder=with_text(run.responder, HOSTILE)) as server:
        proc = run_family(run, server.base_url, out, env_id=env_ids[family], envs=tmp_path / "envs")
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    check_text_surface(proc.stdout, "run stdout")
    assert_no_raw(proc.stderr, "run stderr")
    assert "Traceback" not in proc.stderr.decode()
    assert any(STORED in s for s in check_json_surface(out.read_bytes(), "--out"))

    session_id = session_id_of(out)
    with Store(default_path()) as store:  # stored byte for byte, the surrogate as U+FFFD
        record = load_record(store, session_id)
    assert any(STORED in s for s in strings_in(record.model_dump(mode="json", exclude={"environment"})))  # model output
    assert any(STORED in s for s in strings_in(record.environment))  # the env file's text, too

    shown = cli(["sessions", "show", session_id])
    assert shown.returncode == 0 and "Traceback" not in shown.stderr.decode()
    assert_no_raw(shown.stdout, "sessions show")
    assert "<U+202E>evil" in shown.stdout.decode().replace("\n", "")
    as_json = cli(["sessions", "show", "--json", session_id])
    assert any(STORED in s for s in check_json_surface(as_json.stdout, "sessions show --json"))
    listed = cli(["sessions", "list", "--json"])
    assert listed.returncode == 0
    assert_no_raw(listed.stdout, "sessions list --json")

    json_strings: list[str] = []
    for path in export_all(run, session_id, tmp_path / "exports"):
        data = path.read_bytes()
        if path.suffix in (".json", ".jsonl"):
            lines = data.splitlines() if path.suffix == ".jsonl" else [data]
            for line in lines:
                assert_no_raw(line, path)
                json_strings += strings_in(json.loads(line.decode("utf-8")))
        elif path.suffix == ".md":  # Markdown escapes what a renderer acts on: <, >, [, ]
            check_text_surface(data, path, r"\[@click=app.quit\]Q\[/\]  \<U+202E\>evil\<U+202C\> nul lone" + "\ufffd")
        elif path.suffix == ".html":  # the viewer: the text only as escaped JSON data, drawn by textContent
            from proactive_tui.export.viewer import read_payload

            assert_no_raw(data, path)
            page = data.decode("utf-8")
            assert "<U+202E>" not in page and "\\u003cU+202E\\u003eevil" in page  # no raw < from the text
            payload = read_payload(page)
            shown = strings_in(payload["session"]["view"])
            assert any("[@click=app.quit]Q[/]  <U+202E>evil<U+202C> nul lone\ufffd" in s for s in shown), path
            json_strings += strings_in(payload["session"]["record"])
        else:  # svg: the text is split into positioned spans; what counts is that nothing raw is left
            assert path.suffix == ".svg" and b"U+202E" in data
            assert_no_raw(data, path)
    assert any(STORED in s for s in json_strings), "no JSON export kept the model output as data"


def test_envs_list_and_show_with_every_hostile_kind(tmp_path: Path) -> None:
    """Beyond the escapes test above: markup, an action link, NUL and a lone surrogate in every
    family's environment file, through `envs list`, `envs show` and `envs show --json`."""
    from family_runs import cli, hostile_env_files

    env_ids = hostile_env_files(tmp_path, HOSTILE)
    listed = cli(["--envs", str(tmp_path), "envs", "list"], env={"COLUMNS": "300"})  # room for the title's markup beside ProactBench's long ids
    assert listed.returncode == 0, listed.stderr
    assert_no_raw(listed.stdout + listed.stderr, "envs list")
    assert "[@click=app.quit]Q[/]" in listed.stdout.decode()  # the table crops long titles: the start of the text
    as_lines = cli(["--envs", str(tmp_path), "envs", "list", "--json"])
    titles = [json.loads(line)["title"] for line in as_lines.stdout.decode().splitlines()]
    assert_no_raw(as_lines.stdout, "envs list --json")
    assert any(STORED in t for t in titles)
    for env_id in env_ids.values():
        shown = cli(["--envs", str(tmp_path), "envs", "show", env_id])
        assert shown.returncode == 0, shown.stderr
        assert_no_raw(shown.stdout + shown.stderr, env_id)
        assert "[@click=app.quit]Q[/]" in shown.stdout.decode() and "<U+202E>evil" in shown.stdout.decode().replace("\n", "")
        as_json = cli(["--envs", str(tmp_path), "envs", "show", "--json", env_id])
        assert any(STORED in s for s in check_json_surface(as_json.stdout, env_id))


def stored_messages(session_id: str) -> list[str]:
    from proactive_tui.store.db import Store, default_path
    from proactive_tui.store.queries import load_record

    with Store(default_path()) as store:
        return [m.content for m in load_record(store, session_id).messages]


async def test_tui_transcript_and_picker_preview_show_hostile_text_literally(tmp_path: Path, monkeypatch) -> None:
    """The playground: the picker's preview of a hostile environment file and the transcript of
    a session whose agent replies HOSTILE, read from what the widgets render; then the store."""
    from family_runs import hostile_env_files, with_text
    from test_run_command import judge_aware_responder
    from test_ui_picker import highlight, shown_text
    from proactive_tui.testing.fake_openai import FakeOpenAIServer
    from proactive_tui.ui.app import ProactiveApp
    from proactive_tui.ui.widgets.message_view import MessageView
    from ui_helpers import fake_spec, wait_for

    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")
    env_ids = hostile_env_files(tmp_path, HOSTILE)

    def responder(body: dict) -> str:
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
        return judge_aware_responder(body) if name else with_text(lambda b: "hello", HOSTILE)(body)

    with FakeOpenAIServer(responder=responder) as server:
        app = ProactiveApp(extra_envs=[tmp_path])
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            for env_id in env_ids.values():
                await highlight(pilot, env_id)
                preview = shown_text(app.screen.preview)
                assert SHOWN in preview, (env_id, preview)
                assert_no_raw(preview.encode("utf-8"), env_id)
            assert_no_raw(app.export_screenshot().encode("utf-8"), "picker screenshot")
            env = app.environments.get(env_ids["proactiveeval"])
            app.start_session(env, fake_spec(env.id, server.base_url, max_turns=1, planning=False))
            screen = app.screen
            await wait_for(pilot, lambda: screen.ended is not None)
            view = [v for v in screen.query(MessageView) if v.role == "agent"][0]
            rendered = str(view.render())
            assert view.body == "hello " + SHOWN and "hello " + SHOWN in rendered, rendered
            assert_no_raw(rendered.encode("utf-8"), "transcript")
            assert_no_raw(app.export_screenshot().encode("utf-8"), "session screenshot")
    from proactive_tui.store.db import Store, default_path

    with Store(default_path()) as store:
        rows = store.sessions()
    assert rows, "the session was not recorded"
    assert any("hello " + STORED == text for text in stored_messages(rows[0].id))
