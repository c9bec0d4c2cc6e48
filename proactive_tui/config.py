"""The user's config file: TOML in the platformdirs config dir (`PROACTIVE_TUI_CONFIG` overrides).

Validated by pydantic; every problem is reported as one readable line naming the file and the
setting, never a traceback. The app writes it back only for choices a person makes in the UI
(theme, recent models), with a tiny writer so no TOML-writing dependency is needed.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from proactive_tui.textsafe import field_path
from proactive_tui.llm.acp.agents import AcpAgentConfig
from proactive_tui.llm.limits import ModelLimits
from proactive_tui.llm.settings import RoleSettings
from proactive_tui.tomlfile import read_toml


class ConfigError(Exception):
    """The config file could not be used; the message says where and why."""


class AppConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    theme: str = "proactive-dark"
    roles: RoleSettings = Field(default_factory=RoleSettings)
    recent_models: list[str] = Field(default_factory=list)
    envs: list[str] = Field(default_factory=list)
    """Extra environment folders loaded on every start."""
    local_threads: int | None = Field(default=None, ge=1)
    """Threads for the embedded model (local/smollm2); unset: the cores free when it loads.
    `PROACTIVE_TUI_LOCAL_THREADS` wins over it."""
    synth: dict[str, str] = Field(default_factory=dict)
    """`[synth]`: a model per `synth` pipeline role (`generator = "openai/gpt-4.1"`), or per group of
    numbered roles (`probe = "..."` seats probe1..probe3); `--role` wins over it, and it wins over
    the seat defaults a role otherwise takes. A role no pipeline has is refused when `synth` runs."""
    models: dict[str, ModelLimits] = Field(default_factory=dict)
    """Per litellm model string (`[models."openai/gpt-4.1-mini"]`): `max_parallel_requests`, `rpm`,
    `tpm`, enforced by the gateway for every call of that model (llm/limits.py says why not
    litellm's Router). The embedded model runs one call at a time whatever is set."""
    acp_agents: dict[str, AcpAgentConfig] = Field(default_factory=dict)
    """`[acp_agents.NAME]`: agent programs spoken to over ACP, seated as `acp:NAME` (llm/acp)."""


def load_config(path: Path | None = None) -> AppConfig:
    """Read the config file; a missing file means defaults. Raises ConfigError with a readable message."""
    from proactive_tui.paths import config_file

    path = path or config_file()
    if not path.exists():
        return AppConfig()
    data = read_toml(path, ConfigError)
    try:
        return AppConfig.model_validate(data)
    except ValidationError as exc:
        lines = []
        for err in exc.errors(include_url=False):
            where = field_path(tuple(err.get("loc", ()))) or "(top level)"
            msg = "unknown setting" if err.get("type") == "extra_forbidden" else err.get("msg", "invalid")
            lines.append(f"{path}: {where}: {msg}")
        raise ConfigError("\n".join(lines)) from None


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    # JSON string escaping is valid TOML basic-string escaping for everything we write.
    return json.dumps(str(value), ensure_ascii=False)


def dump_config(config: AppConfig) -> str:
    data = config.model_dump(exclude_defaults=True, exclude_none=True)
    lines: list[str] = []
    roles = data.pop("roles", {})
    models = data.pop("models", {})
    synth = data.pop("synth", {})
    acp_agents = data.pop("acp_agents", {})
    for key, value in data.items():
        lines.append(f"{key} = {_toml_value(value)}")
    if synth:
        lines.append("\n[synth]")
        lines.extend(f"{json.dumps(role)} = {_toml_value(model)}" for role, model in synth.items())
    for role, values in roles.items():
        if values:
            lines.append(f"\n[roles.{role}]")
            lines.extend(f"{k} = {_toml_value(v)}" for k, v in values.items())
    for model, values in models.items():
        lines.append(f"\n[models.{json.dumps(model)}]")
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in values.items())
    for name, values in acp_agents.items():  # written back as read: a theme change must not drop them
        lines.append(f"\n[acp_agents.{json.dumps(name)}]")
        env = values.pop("env", {})
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in values.items())
        if env:
            lines.append("env = {" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in env.items()) + "}")
    return "\n".join(lines).lstrip("\n") + "\n"


def save_config(config: AppConfig, path: Path | None = None) -> Path:
    """Write atomically (temp file + rename) so a crash never leaves half a config."""
    from proactive_tui.paths import config_file

    path = path or config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(dump_config(config), encoding="utf-8")
    tmp.replace(path)
    return path
