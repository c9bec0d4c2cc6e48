"""`run` offers only the chosen family's flags: another family's flag is an error naming both."""

from __future__ import annotations

import pytest

from proactive_tui.cli.main import main


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PROACTIVE_TUI_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("PROACTIVE_TUI_CONFIG", str(tmp_path / "config.toml"))


@pytest.mark.parametrize("argv, family, owner", [
    (["run", "chronos/car-purchase/positive", "--candidates", "3"], "chronos", "proactivebench"),
    (["run", "chronos/car-purchase/positive", "--agreeableness", "low"], "chronos", "proactiveeval"),
    (["run", "proactivebench/coding_01", "--max-turns", "2"], "proactivebench", "proactiveeval, chronos, proactbench"),
    (["run", "proactiveeval/persuasion/fair/0", "--no-feedback"], "proactiveeval", "proactivebench"),
])
def test_a_flag_of_another_family_is_an_error_that_names_the_family(argv, family, owner, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{argv[2]} does not apply to {family} sessions (a {owner} flag)" in err
    assert f"{family} takes:" in err


def test_an_unknown_flag_is_named_with_what_the_family_takes(capsys) -> None:
    assert main(["run", "chronos/car-purchase/positive", "--frobnicate"]) == 2
    assert "--frobnicate does not apply to chronos sessions; chronos takes: --confirmation-reader, --max-turns" in capsys.readouterr().err


def test_judge_is_refused_where_the_family_has_no_judge_seat(capsys) -> None:
    assert main(["run", "proactivebench/coding_01", "--judge", "openai/gpt-4.1"]) == 2
    assert "--judge does not apply to proactivebench sessions: they have no judge seat" in capsys.readouterr().err


def test_family_settings_are_validated_by_the_typed_model(capsys) -> None:
    assert main(["run", "proactiveeval/persuasion/fair/0", "--max-turns", "0"]) == 1
    assert "invalid settings" in capsys.readouterr().err


def test_help_lists_each_family_flags(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    for family, flag in (("proactiveeval", "--agreeableness"), ("proactivebench", "--candidates"), ("chronos", "--max-turns")):
        assert f"{family} flags" in out and flag in out


def test_help_after_an_env_id_lists_only_that_family(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "chronos/car-purchase/positive", "--help"])
    out = capsys.readouterr().out
    assert "chronos flags" in out and "--candidates" not in out and "proactiveeval flags" not in out


def test_flags_reach_the_typed_settings() -> None:
    import argparse

    from proactive_tui.cli.family_flags import parse_family_flags
    from proactive_tui.core import registry

    family = registry.get("proactivebench")
    args = parse_family_flags(family, argparse.Namespace(), ["--candidates", "3", "--no-feedback", "--max-events", "4"])
    settings = family.settings_from_args(args)
    assert settings == {**family.settings().model_dump(), "candidates": 3, "feedback": False, "max_events": 4}


def test_a_bad_setting_names_the_flag_without_pydantic_noise(capsys) -> None:
    assert main(["run", "chronos/car-purchase/positive", "--max-turns", "-1"]) != 0
    err = capsys.readouterr().err
    assert "--max-turns: should be greater than or equal to 1 (got -1)" in err
    assert "pydantic" not in err and "type=greater_than_equal" not in err


@pytest.mark.parametrize("command", [["eval", "proactiveeval"], ["eval", "chronos", "--reference"],
                                     ["eval", "run", "chronos/car-purchase/positive"], ["eval", "reward-judge"]])
def test_concurrency_below_one_is_refused_before_anything_runs(capsys, command) -> None:
    assert main([*command, "--concurrency", "0"]) == 2
    assert "--concurrency must be at least 1" in capsys.readouterr().err


def test_an_unwritable_out_is_refused_before_anything_runs(capsys, tmp_path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    a_file = tmp_path / "a-file"
    a_file.write_text("x")  # a path through a file cannot be created, even by root
    for out, why in ((folder, "is a folder"), (a_file / "run.json", "cannot create the folder")):
        assert main(["run", "chronos/car-purchase/positive", "--no-store", "--out", str(out)]) != 0
        err = " ".join(capsys.readouterr().err.split())
        assert "--out:" in err and why in err and "Traceback" not in err
    assert not any(folder.iterdir())


@pytest.mark.parametrize("command", [["eval", "chronos/car-purchase/", "--reference"],
                                     ["eval", "proactiveeval/persuasion/fair/0"]])
def test_an_unusable_batch_folder_is_refused_before_anything_runs(capsys, tmp_path, command) -> None:
    """The batch's `--out` is a folder: a file there, or a path through a file, is refused before
    any session runs (and nothing is written)."""
    a_file = tmp_path / "a-file"
    a_file.write_text("x")  # a path through a file cannot be created, even by root
    for out, why in ((a_file, "is a file; give a folder"), (a_file / "batch", "cannot create the folder")):
        assert main([*command, "--out", str(out)]) != 0
        err = " ".join(capsys.readouterr().err.split())
        assert "--out:" in err and why in err and "Traceback" not in err
    assert a_file.read_text() == "x"


def test_early_stopping_flags_set_it_either_way_and_leave_it_to_the_judge_by_default() -> None:
    import argparse

    from proactive_tui.cli.family_flags import parse_family_flags
    from proactive_tui.core import registry

    family = registry.get("proactiveeval")
    for extra, expected in (([], None), (["--early-stop"], True), (["--no-early-stop"], False)):
        args = parse_family_flags(family, argparse.Namespace(), extra)
        assert family.settings_from_args(args)["early_stop"] is expected, extra


@pytest.mark.parametrize("command", [["eval", "proactiveeval"], ["eval", "chronos"], ["eval", "reward-judge"]])
def test_an_api_base_that_is_no_url_is_refused_before_a_batch_runs(capsys, command) -> None:
    assert main([*command, "--api-base", "localhost:8000"]) == 2
    err = capsys.readouterr().err
    assert "--api-base: api base 'localhost:8000' is not a URL" in err and "http://localhost:8000" in err
