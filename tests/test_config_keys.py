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


class CountingKeyring:
    """An in-memory keyring backend that counts its reads (each a D-Bus round trip on a desktop)."""

    def __init__(self) -> None:
        from keyring.backend import KeyringBackend
        from keyring.errors import PasswordDeleteError

        outer = self

        class Backend(KeyringBackend):
            priority = 1  # type: ignore[assignment]

            def get_password(self, service: str, username: str) -> str | None:
                outer.reads += 1
                return outer.data.get(username)

            def set_password(self, service: str, username: str, password: str) -> None:
                outer.data[username] = password

            def delete_password(self, service: str, username: str) -> None:
                if outer.data.pop(username, None) is None:
                    raise PasswordDeleteError(username)

        self.data: dict[str, str] = {}
        self.reads = 0
        self.backend = Backend()


@pytest.fixture
def counting_keyring(monkeypatch: pytest.MonkeyPatch):
    import keyring

    counting = CountingKeyring()
    previous = keyring.get_keyring()
    keyring.set_keyring(counting.backend)
    monkeypatch.setattr(keys, "_read", {})
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    try:
        yield counting
    finally:
        keyring.set_keyring(previous)


def test_a_calls_key_is_read_from_the_keyring_once_in_a_while_not_on_every_call(counting_keyring, monkeypatch) -> None:
    for _ in range(5):
        assert keys.get_key("openai") is None
    assert counting_keyring.reads == 1  # "none there" is reused too
    keys.set_key("openai", "sk-one-" + "x" * 20)  # this process's own change: at once
    assert [keys.get_key("openai") for _ in range(3)] == ["sk-one-" + "x" * 20] * 3
    assert counting_keyring.reads == 2
    counting_keyring.data["openai"] = "sk-two-" + "y" * 20  # another terminal's `keys set`
    assert keys.get_key("openai") == "sk-one-" + "x" * 20  # reused until KEY_REUSE_S has passed
    assert keys.key_source("openai") == "keyring" and counting_keyring.reads == 3  # the setup screen asks now
    now = keys.time.monotonic()
    monkeypatch.setattr(keys.time, "monotonic", lambda: now + keys.KEY_REUSE_S + 1)
    assert keys.get_key("openai") == "sk-two-" + "y" * 20
    assert keys.delete_key("openai") is True
    assert keys.get_key("openai") is None  # deleted here: at once


def test_preloading_the_keyring_for_a_fork_chooses_no_backend() -> None:
    """Before a fork the keyring's modules are imported, but no backend asked whether it works
    (one may open a D-Bus connection the workers would share); a fresh interpreter shows it."""
    code = ("import sys, keyring.core\n"
            "from proactive_tui.llm import keys\n"
            "keys.preload_for_fork()\n"
            "from keyring.compat.py312 import metadata\n"
            "names = [e.value.split(':')[0] for e in metadata.entry_points(group='keyring.backends')]\n"
            "print(keyring.core._keyring_backend is None, all(n in sys.modules for n in names), len(names) > 0)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "True"]


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
