"""Config precedence and errors; keys never printed, never written to a file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from proactive_tui.config import AppConfig, ConfigError, dump_config, load_config, save_config
from proactive_tui.llm import keys
from proactive_tui.llm.settings import DEFAULT_MODEL, ModelSettings, RoleSettings, resolve_roles


def test_defaults_are_the_embedded_model() -> None:
    roles = resolve_roles(environ={})
    assert {roles.agent.model, roles.user.model, roles.judge.model} == {DEFAULT_MODEL}
    assert roles.agent.temperature == 0.0


def test_precedence_cli_over_env_over_file() -> None:
    file_roles = RoleSettings(agent=ModelSettings(model="openai/from-file", temperature=0.5), judge=ModelSettings(model="openai/judge-file"))
    env = {"PROACTIVE_TUI_AGENT_MODEL": "openai/from-env", "PROACTIVE_TUI_API_BASE": "http://127.0.0.1:1/v1"}
    roles = resolve_roles(file_roles, cli={"agent": {"model": "openai/from-cli", "temperature": None}}, environ=env)
    assert roles.agent.model == "openai/from-cli"
    assert roles.agent.temperature == 0.5  # file value survives where nothing higher set it
    assert roles.judge.model == "openai/judge-file"
    assert roles.user.model == DEFAULT_MODEL
    assert {roles.agent.api_base, roles.user.api_base, roles.judge.api_base} == {"http://127.0.0.1:1/v1"}
    roles = resolve_roles(file_roles, environ=env)
    assert roles.agent.model == "openai/from-env"


def test_config_round_trip(tmp_path: Path) -> None:
    cfg = AppConfig(theme="proactive-light", recent_models=["openai/gpt-4.1", 'we"ird'])
    cfg.roles.judge = ModelSettings(model="anthropic/claude-sonnet-4-5", temperature=0.2)
    path = save_config(cfg, tmp_path / "c.toml")
    assert load_config(path) == cfg
    assert "[roles.judge]" in dump_config(cfg)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("theme = \n", "invalid TOML"),
        ("[roles.agent]\ntemperature = 'hot'\n", "roles.agent.temperature: Input should be a valid number"),
        ("[roles.agent]\ntemprature = 0.2\n", "roles.agent.temprature: unknown setting"),
        ("[roles.critic]\nmodel = 'x'\n", "roles.critic: unknown setting"),
        ("[roles.judge]\ntimeout = -1\n", "roles.judge.timeout: Input should be greater than 0"),
    ],
)
def test_config_errors_are_readable(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(str(path))
    assert expected in str(info.value)


def test_config_env_override_path(isolated_dirs: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "proactive_tui", "locate", "config"], cwd=ROOT, capture_output=True, text=True)
    assert proc.stdout.strip() == str(isolated_dirs / "config.toml")


def test_key_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-xxxxxxxxxxxxxxxx")
    assert keys.key_source("anthropic") == "env"
    assert keys.key_source("local") == "not needed"
    assert keys.key_source("openai", api_base="http://127.0.0.1:8000/v1") == "not needed"
    if not keys.keyring_available():
        assert keys.key_source("openai") == "none"
    assert keys.provider_of("claude-3-5-sonnet") == "anthropic"
    assert keys.provider_of("ollama/qwen2.5") == "ollama"


def test_keys_list_shows_sources_never_values(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = "sk-canary-" + "Q" * 20
    env = {**__import__("os").environ, "OPENAI_API_KEY": canary}
    proc = subprocess.run([sys.executable, "-m", "proactive_tui", "keys", "list"], cwd=ROOT, capture_output=True, text=True, env=env)
    assert proc.returncode == 0
    assert canary not in proc.stdout + proc.stderr
    line = next(l for l in proc.stdout.splitlines() if l.startswith("openai "))
    assert line.split()[1] == "env"


def test_keys_set_without_keyring_says_so_and_writes_nothing(isolated_dirs: Path) -> None:
    if keys.keyring_available():
        pytest.skip("this machine has a working keyring backend")
    proc = subprocess.run(
        [sys.executable, "-m", "proactive_tui", "keys", "set", "anthropic"], cwd=ROOT, capture_output=True, text=True, input="sk-ant-secret\n"
    )
    assert proc.returncode == 1
    assert "no OS keyring backend" in proc.stderr and "export ANTHROPIC_API_KEY=" in proc.stderr
    written = [p for p in isolated_dirs.rglob("*") if p.is_file()]
    assert all("sk-ant-secret" not in p.read_text(errors="ignore") for p in written)
