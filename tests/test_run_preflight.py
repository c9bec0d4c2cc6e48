"""A headless `run` checks every seat's model string and key before the session starts, and
`--judge` is taken only by families whose sessions have a judge seat (read from `family.seats`
at run time, so a family that gains or loses a judge seat needs no change here).

The fake server proves "before": a run refused by the checks sends it no request at all.
"""

from __future__ import annotations

import pytest

from proactive_tui.cli.headless import HeadlessRun, SetupError
from proactive_tui.cli.main import build_parser, main
from proactive_tui.llm.preflight import model_problem
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
    monkeypatch.setattr(keys, "_from_keyring", lambda provider, fresh=False: None)
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


@pytest.mark.parametrize("bad", ["notaurl", "ftp://x", "localhost:8000"])
def test_an_api_base_that_is_no_url_is_refused_before_any_call(bad: str, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """It used to be sent, failing as "provider failed (500)" five times over; now each seat that
    would use it is named once, with the value, before the session starts."""
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("PROACTIVE_TUI_USER_API_BASE", server.base_url)  # the user seat's base is good
        code = main(["run", PE_ENV, "--no-store", "--agent", "openai/a", "--user", "openai/u", "--judge", "openai/j",
                     "--max-turns", "1", "--no-planning"] + ["--api-base", bad])
        requests = list(server.requests)
    err = capsys.readouterr().err
    assert code == 1 and requests == []
    assert "provider failed" not in err and "Retrying" not in err
    lines = [line.strip() for line in err.splitlines() if line.strip().startswith("seat ")]
    assert any(line.startswith("seat agent (openai/a): api base") and repr(bad) in line for line in lines), err
    assert all("api base" in line for line in lines) and len(lines) == len({line.split(" ")[1] for line in lines})


def test_a_bad_api_base_never_shows_its_credentials(capsys: pytest.CaptureFixture[str]) -> None:
    secret = "sk-" + "Q" * 24
    code = main(["run", PE_ENV, "--no-store", "--agent", "openai/a", "--user", "openai/u", "--judge", "openai/j",
                 "--api-base", f"bob:{secret}@localhost:8000/v1"])
    err = capsys.readouterr().err
    assert code == 1 and "seat agent (openai/a): api base" in err
    assert secret not in err and "[redacted]" in err


def test_a_good_api_base_passes_the_check() -> None:
    assert keys.api_base_problem("http://localhost:8000/v1") is None
    assert keys.api_base_problem("https://api.example.com/v1") is None
    assert keys.api_base_problem(None) is None
    assert "did you mean http://localhost:8000?" in (keys.api_base_problem("localhost:8000") or "")


def test_a_family_that_names_no_printer_runs_with_the_base_printer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A family's printer is a dotted path (`Parts.printer`), so the engine names no CLI class (the
    layers contract): no printer means the CLI's own EventPrinter, and a family's own still wins."""
    import dataclasses

    from proactive_tui.cli.printer import EventPrinter

    family = registry.get("proactiveeval")
    own = from_args(["run", PE_ENV]).printer
    assert isinstance(own, EventPrinter) and type(own) is family.printer_class() is not EventPrinter
    monkeypatch.setattr(family, "parts", dataclasses.replace(family.parts, printer=None))
    assert family.printer_class() is None
    assert type(from_args(["run", PE_ENV]).printer) is EventPrinter
