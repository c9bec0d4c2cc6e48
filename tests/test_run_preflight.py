"""A headless `run` checks every seat's model string and key before the session starts, and
`--judge` is taken only by families whose sessions have a judge seat (read from `family.seats`
at run time, so a family that gains or loses a judge seat needs no change here).

The fake server proves "before": a run refused by the checks sends it no request at all.
"""

from __future__ import annotations

import pytest

from proactive_tui.cli.headless import HeadlessRun, SetupError
from proactive_tui.cli.main import build_parser, main
from proactive_tui.cli.preflight import model_problem
from proactive_tui.core import registry
from proactive_tui.envs import load_default
from proactive_tui.llm import keys
from proactive_tui.testing.fake_openai import FakeOpenAIServer

PE_ENV = "proactiveeval/persuasion/fair/0"


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No provider key anywhere: none in the environment, none in a keyring."""
    for var in set(keys.PROVIDER_ENV_VARS.values()):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(keys, "_from_keyring", lambda provider: None)
    for role in ("AGENT", "USER", "JUDGE"):
        monkeypatch.delenv(f"PROACTIVE_TUI_{role}_MODEL", raising=False)
    monkeypatch.delenv("PROACTIVE_TUI_MODEL", raising=False)


def family_env(has_judge: bool) -> tuple[object, str]:
    """A family whose seats do (or do not) include a judge, as installed now, and one of its envs."""
    family = next((f for f in registry.families().values() if ("judge" in f.seats) == has_judge), None)
    if family is None:
        pytest.skip(f"no installed family {'with' if has_judge else 'without'} a judge seat")
    env = next(e for e in load_default().environments if e.family == family.name)
    return family, env.id


def from_args(argv: list[str]) -> HeadlessRun:
    args, extra = build_parser().parse_known_args(argv)
    return HeadlessRun.from_args(args, extra)


def test_every_bad_seat_is_named_and_nothing_is_called(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer() as server:
        code = main(["run", PE_ENV, "--no-store", "--agent", "foo/bar", "--user", "http://localhost:8000/v1",
                     "--judge", "anthropic/claude-sonnet-4-5"])
        requests = list(server.requests)
    err = capsys.readouterr().err
    assert code == 1
    assert "3 seat(s) cannot run, so the session was not started" in err
    assert "seat agent (foo/bar): unknown provider foo" in err  # the provider, not a key
    assert "seat user (http://localhost:8000/v1): 'http://localhost:8000/v1' is a URL, not a model string" in err
    assert "seat judge (anthropic/claude-sonnet-4-5): no API key for provider anthropic: set ANTHROPIC_API_KEY" in err
    assert requests == []


def test_a_missing_key_stops_the_run_before_the_first_call(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer() as server:
        # agent and user at the fake server (no key needed there); the judge at OpenAI itself, keyless
        monkeypatch.setenv("PROACTIVE_TUI_AGENT_API_BASE", server.base_url)
        monkeypatch.setenv("PROACTIVE_TUI_USER_API_BASE", server.base_url)
        code = main(["run", PE_ENV, "--no-store", "--agent", "openai/agent-m", "--user", "openai/user-m",
                     "--judge", "openai/gpt-4.1", "--max-turns", "1"])
        requests = list(server.requests)
    assert code == 1 and requests == []
    err = capsys.readouterr().err
    assert "seat judge (openai/gpt-4.1): no API key for provider openai" in err
    assert "seat agent" not in err and "seat user" not in err


def test_good_seats_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    runner = from_args(["run", PE_ENV, "--api-base", "http://127.0.0.1:9/v1", "--agent", "openai/a", "--user", "openai/u",
                        "--judge", "openai/j"])
    assert runner.spec.roles.judge.model == "openai/j"
    runner.check_seats()  # keys are not needed at an api base: nothing to report
    assert model_problem("anthropic/claude-sonnet-4-5", None) is None
    assert model_problem("local/smollm2", None) is None
    assert model_problem("local/gpt-5", None) == "the embedded model is local/smollm2; there is no local/gpt-5"


def test_judge_is_refused_by_a_family_without_a_judge_seat(capsys: pytest.CaptureFixture[str]) -> None:
    family, env_id = family_env(has_judge=False)
    assert main(["run", env_id, "--judge", "openai/gpt-4.1"]) == 2
    err = capsys.readouterr().err
    assert f"--judge does not apply to {family.name} sessions: they have no judge seat" in err
    assert f"(seats: {', '.join(family.seats)})" in err


def test_judge_is_taken_by_a_family_with_a_judge_seat(monkeypatch: pytest.MonkeyPatch) -> None:
    family, env_id = family_env(has_judge=True)
    runner = from_args(["run", env_id, "--api-base", "http://127.0.0.1:9/v1", "--agent", "openai/a", "--user", "openai/u",
                        "--judge", "openai/the-judge"])
    assert runner.spec.roles.judge.model == "openai/the-judge" and runner.family.name == family.name
    runner.check_seats()


def test_seats_the_family_does_not_use_or_a_person_fills_are_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    family, env_id = family_env(has_judge=False)
    monkeypatch.setenv("PROACTIVE_TUI_JUDGE_MODEL", "foo/never-called")  # this family calls no judge
    runner = from_args(["run", env_id, "--api-base", "http://127.0.0.1:9/v1", "--agent", "openai/a", "--user", "human"])
    assert runner.spec.seats["user"] == "human"
    runner.check_seats()  # the judge's bad model is never looked at
    with pytest.raises(SetupError, match=r"seat agent \(foo/bar\)"):
        from_args(["run", env_id, "--agent", "foo/bar", "--user", "human"]).check_seats()
