"""Per-role model settings and where they come from.

Precedence, highest first: command-line flags, environment variables, the config file, defaults.
Defaults put the embedded offline model in every seat so the app works with no keys and no network.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["agent", "user", "judge"]
ROLES: tuple[Role, ...] = ("agent", "user", "judge")
DEFAULT_MODEL = "local/smollm2"


class ModelSettings(BaseModel):
    """How one seat's model is called."""

    model_config = ConfigDict(extra="forbid")

    model: str = DEFAULT_MODEL
    api_base: str | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, ge=1)
    """None lets the gateway pick: short for the embedded model, the provider's default otherwise."""
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=10)
    structured: Literal["auto", "json_schema", "prompt"] = "auto"
    """How structured output is asked for: `auto` uses the provider's JSON-schema mode where known."""
    seed: int | None = None
    """Sent as the request's `seed` (OpenAI-compatible servers and the embedded model honour it;
    litellm drops it for providers that take none)."""

    @property
    def is_local(self) -> bool:
        return self.model.startswith("local/")


class RoleSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent: ModelSettings = Field(default_factory=ModelSettings)
    user: ModelSettings = Field(default_factory=ModelSettings)
    judge: ModelSettings = Field(default_factory=ModelSettings)

    def for_role(self, role: Role) -> ModelSettings:
        return getattr(self, role)


ENV_FIELDS = {
    "MODEL": "model",
    "API_BASE": "api_base",
    "TEMPERATURE": "temperature",
    "MAX_TOKENS": "max_tokens",
    "TIMEOUT": "timeout",
}


def env_overrides(role: Role, environ: dict[str, str] | None = None) -> dict[str, str]:
    """Settings from `PROACTIVE_TUI_<ROLE>_<FIELD>`, with `PROACTIVE_TUI_<FIELD>` for every role."""
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for suffix, field in ENV_FIELDS.items():
        for name in (f"PROACTIVE_TUI_{suffix}", f"PROACTIVE_TUI_{role.upper()}_{suffix}"):
            if env.get(name):
                out[field] = env[name]
    return out


def resolve_roles(
    file_roles: RoleSettings | None = None,
    cli: dict[Role, dict[str, object]] | None = None,
    environ: dict[str, str] | None = None,
) -> RoleSettings:
    """Merge defaults < config file < environment < command line, validating the result."""
    merged: dict[str, dict[str, object]] = {}
    base = file_roles or RoleSettings()
    for role in ROLES:
        values: dict[str, object] = base.for_role(role).model_dump(exclude_unset=True)
        values.update(env_overrides(role, environ))
        values.update({k: v for k, v in ((cli or {}).get(role) or {}).items() if v is not None})
        merged[role] = values
    return RoleSettings.model_validate(merged)
