"""The `envs` command end to end, as a script would call it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import PACKAGE, ROOT, SAMPLE_DIRS
from test_envs_loaders import PE_ITEM, write


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "proactive_tui", *args], cwd=cwd, capture_output=True, text=True, timeout=120,
        env={**__import__("os").environ, "COLUMNS": "200"},
    )


def test_validate_samples_exits_zero() -> None:
    proc = cli("envs", "validate", *map(str, SAMPLE_DIRS.values()))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("OK: ")


def test_list_counts_every_family() -> None:
    proc = cli("envs", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    families = [r["family"] for r in rows]
    assert families.count("proactiveeval") >= 18
    assert families.count("proactivebench") >= 4
    assert families.count("chronos") >= 8


def test_list_table_and_filters() -> None:
    proc = cli("envs", "list", "--family", "chronos")
    assert proc.returncode == 0
    assert "chronos/car-purchase/positive" in proc.stdout
    assert "proactiveeval/" not in proc.stdout
    proc = cli("envs", "list", "--domain", "persuasion", "--json")
    assert {json.loads(x)["domain"] for x in proc.stdout.splitlines()} == {"persuasion"}


def test_list_with_extra_envs_path(tmp_path: Path) -> None:
    write(tmp_path / "glasses_assistant" / "fair.json", [PE_ITEM])
    proc = cli("envs", "list", "--json", "--envs", str(tmp_path), "--family", "proactiveeval", "--domain", "glasses_assistant")
    rows = {json.loads(x)["id"]: json.loads(x) for x in proc.stdout.splitlines()}
    # the user's item has the sample's id: the user's keeps it, the sample is listed as builtin:<id>,
    # and the shared id is a note (not a problem, nothing skipped)
    assert rows["proactiveeval/glasses_assistant/fair/0"]["title"] == "Beekeeping"
    assert rows["proactiveeval/glasses_assistant/fair/0"]["source"] == tmp_path.name
    assert rows["builtin:proactiveeval/glasses_assistant/fair/0"]["source"] == "builtin"
    assert "note: id proactiveeval/glasses_assistant/fair/0 is in 2 sources" in proc.stderr
    assert "duplicate" not in proc.stderr and "problem" not in proc.stderr


def test_show_is_readable_and_literal(tmp_path: Path) -> None:
    write(tmp_path / "persuasion" / "fair.json", [{**PE_ITEM, "target": "[bold]Walk[/bold] \x1b[31mdaily"}])
    proc = cli("envs", "show", "proactiveeval/persuasion/fair/0", "--envs", str(tmp_path))
    assert proc.returncode == 0
    assert "User information" in proc.stdout and "Reference sub-targets" in proc.stdout
    proc = cli("--envs", str(tmp_path), "envs", "show", "proactiveeval/persuasion/fair/0", "--json")
    assert json.loads(proc.stdout)["id"] == "proactiveeval/persuasion/fair/0"


def test_show_unknown_id() -> None:
    proc = cli("envs", "show", "chronos/car-purchase")
    assert proc.returncode == 1
    assert "no environment with id 'chronos/car-purchase'" in proc.stderr
    assert "chronos/car-purchase/positive" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_validate_bad_folder_lists_each_problem(tmp_path: Path) -> None:
    write(tmp_path / "recommendation" / "fair.json", [PE_ITEM, {**PE_ITEM, "sub_target": None}])
    write(tmp_path / "recommendation" / "hard.json", "{not json")
    write(tmp_path / "proactivebench" / "empty.json", "")
    proc = cli("envs", "validate", str(tmp_path))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert any(l.endswith("recommendation/fair.json: record 1: field sub_target: Input should be a valid list (got NoneType)") for l in lines), lines
    assert any("recommendation/hard.json: invalid JSON at line 1 column 2" in l for l in lines)
    assert any(l.endswith("proactivebench/empty.json: empty file: expected JSON") for l in lines)
    # the one good record has a sample's id: a note (the app lists both), not a problem
    assert any(l.startswith("note: id proactiveeval/recommendation/fair/0 is in 2 sources") for l in lines)
    assert lines[-1] == ("FAILED: 1 environment(s) loaded from 3 file(s), 3 problem(s), "
                         "1 id(s) shared with other sources (notes above)")
    assert "Traceback" not in proc.stdout + proc.stderr


def test_validate_never_tracebacks_on_odd_paths(tmp_path: Path) -> None:
    (tmp_path / "recommendation").mkdir()
    (tmp_path / "recommendation" / "fair.json").mkdir()  # a directory where a file should be
    deep = "[" * 100000 + "]" * 100000
    write(tmp_path / "proactivebench" / "deep.json", deep)
    proc = cli("envs", "validate", str(tmp_path), str(tmp_path / "missing"))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "missing: no such file or folder" in proc.stdout
    assert "deep.json" in proc.stdout


def test_validate_reports_ids_the_app_already_has(tmp_path: Path) -> None:
    # a hand-written file whose ids are the samples': the app lists it under those ids and the
    # samples as builtin:<id>; validate says so in a note and passes
    write(tmp_path / "glasses_assistant" / "fair.json", [PE_ITEM])
    proc = cli("envs", "validate", str(tmp_path))
    assert proc.returncode == 0, proc.stdout
    assert ("note: id proactiveeval/glasses_assistant/fair/0 is in 2 sources: kept by "
            f"{tmp_path / 'glasses_assistant' / 'fair.json'} record 0; also listed as "
            "builtin:proactiveeval/glasses_assistant/fair/0 (built-in sample, ") in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("OK: 1 environment(s) loaded from 1 file(s), 0 problem(s), 1 id(s) shared")
    # the samples themselves validate clean (the same files are no clash with themselves)
    proc = cli("envs", "validate", str(SAMPLE_DIRS["proactiveeval"]))
    assert proc.returncode == 0, proc.stdout
    # an exported session's record has its own id: OK, and listed
    write(tmp_path / "x" / "glasses_assistant" / "fair.json", [{**PE_ITEM, "meta": {"session_id": "abc123", "env_id": "proactiveeval/glasses_assistant/fair/0"}}])
    proc = cli("envs", "validate", str(tmp_path / "x"))
    assert proc.returncode == 0 and "OK: 1 environment(s)" in proc.stdout, proc.stdout
    proc = cli("envs", "list", "--json", "--envs", str(tmp_path / "x"), "--domain", "glasses_assistant")
    assert "proactiveeval/glasses_assistant/fair/0@abc123" in proc.stdout and "duplicate" not in proc.stderr


def test_a_built_in_sample_is_named_by_its_place_in_sample_envs_not_this_machine(tmp_path, monkeypatch) -> None:
    """The preview and `envs show` say where an environment comes from without the install path
    (which differs per machine and venv, and fills screenshots); a user's file keeps its path."""
    from types import SimpleNamespace

    from proactive_tui.envs.describe import header_text, shown_source

    sample = SAMPLE_DIRS["proactiveeval"] / "persuasion" / "fair.json"
    assert shown_source(f"{sample} record 0") == "built-in sample, sample_envs/proactiveeval/persuasion/fair.json record 0"
    monkeypatch.chdir(SAMPLE_DIRS["proactiveeval"].parent)  # the loader may name it relative to the cwd
    assert shown_source("proactiveeval/persuasion/fair.json").startswith("built-in sample, sample_envs/proactiveeval/")
    # ProactiveBench's real traces stay in the package (upstream data beside its NOTICE)
    trace = PACKAGE / "families" / "proactivebench" / "data" / "real" / "code_11.json"
    assert shown_source(str(trace)) == "built-in sample, families/proactivebench/data/real/code_11.json"
    # a file elsewhere in the source checkout is not a built-in sample
    assert not shown_source(str(SAMPLE_DIRS["proactiveeval"].parent.parent / "mine.json")).startswith("built-in")
    mine = tmp_path / "envs" / "mine.json"
    assert shown_source(str(mine)) == str(mine)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert shown_source(str(mine)) == "~/envs/mine.json"
    env = SimpleNamespace(id="x/y", title="T", family="f", domain="d", tier=None, source=str(sample))
    assert header_text(env).splitlines()[-1] == "source: built-in sample, sample_envs/proactiveeval/persuasion/fair.json"


def test_a_checkout_reads_the_top_level_themes_and_sample_envs() -> None:
    """The top-level folders are the source of truth; only a wheel has `proactive_tui/_bundled`
    (tests/test_wheel.py checks that side)."""
    from proactive_tui.core import registry
    from proactive_tui.paths import builtin_themes_dir, bundled_dir, sample_envs_dir

    assert not (PACKAGE / "_bundled").exists()
    assert builtin_themes_dir() == ROOT / "themes" and sorted(builtin_themes_dir().glob("*.toml"))
    assert bundled_dir("sample_envs") == ROOT / "sample_envs"
    for name in ("proactiveeval", "proactivebench", "chronos", "proactbench"):
        assert sample_envs_dir(name) in registry.find(name).environments.sample_sources()
        assert sample_envs_dir(name).is_dir()
