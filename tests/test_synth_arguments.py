"""The studio parses the `synth` command a form builds with the CLI's own definitions
(`synth.arguments`): the same argv gives the same options both ways, and a refusal is argparse's."""

from __future__ import annotations

import pytest

from proactive_tui.cli.main import build_parser
from proactive_tui.synth.arguments import parse_family_command
from proactive_tui.synth.setup import synth_families

EXTRA = {"proactiveeval": ["--domain", "recommendation"], "chronos": ["--template", "car_purchase", "--tier", "simple"],
         "proactivebench": ["--scene", "coding", "--batches", "2"]}


@pytest.mark.parametrize("family", sorted(synth_families()))
def test_the_studio_and_the_cli_read_a_synth_command_alike(family: str) -> None:
    argv = ["synth", family, "--n", "3", "--seed", "5", "--out", "runs/x", "--role", "judge=openai/j",
            "--concurrency", "2", "--structured-mode", "json_object", *EXTRA.get(family, [])]
    cli = vars(build_parser().parse_args(argv))
    cli.pop("func")
    studio = vars(parse_family_command(argv))
    assert {k: studio[k] for k in studio} == {k: cli[k] for k in studio}
    assert studio["synth_family"] == family and studio["n"] == 3 and studio["role"] == ["judge=openai/j"]


def test_a_refused_synth_command_is_one_line_naming_the_option() -> None:
    with pytest.raises(ValueError, match="--n"):
        parse_family_command(["synth", sorted(synth_families())[0], "--out", "x"])
    with pytest.raises(ValueError, match="invalid int value: 'many'"):
        parse_family_command(["synth", sorted(synth_families())[0], "--n", "many", "--out", "x"])
