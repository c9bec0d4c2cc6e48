"""Per-role model settings and where they come from.

Precedence, highest first: command-line flags, environment variables, the config file, defaults.
Defaults put the embedded offline model in every seat so the app works with no keys and no network.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["agent", "user", "judge"]
ROLES: tuple[Role, ...] = ("agent", "user", "judge")
DEFAULT_MODEL = "local/smollm2"

StructuredMode = Literal["json_schema", "json_object", "prompt"]
STRUCTURED_MODES: tuple[StructuredMode, ...] = ("json_schema", "json_object", "prompt")
"""How a structured reply is asked for, in the order `auto` negotiates them: the server constrains
the output to the schema (`json_schema`), to JSON with the schema beside it (`json_object`, which
llama-cpp-python constrains to the schema and others to any JSON), or only the prompt asks."""

# Token caps when a seat sets none: every seat has one, so a looping reply cannot run for minutes.
LOCAL_DEFAULT_MAX_TOKENS = 80
"""The embedded model rambles: short free-text replies (its structured replies get the handler's
larger default so the JSON can close)."""
SELF_HOSTED_DEFAULT_MAX_TOKENS = 1024
"""A seat with an api base: self-hosted servers are often CPU-bound (5-50 tokens/s), and a model
that loops without a stop token ran ~6 minutes with no cap."""
HOSTED_DEFAULT_MAX_TOKENS = 4096
"""Hosted providers: room for reasoning models, whose hidden reasoning counts against the cap."""


class ModelSettings(BaseModel):
    """How one seat's model is called."""

    model_config = ConfigDict(extra="forbid")

    model: str = DEFAULT_MODEL
    api_base: str | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, ge=1)
    """None means the seat's default cap (`token_cap`); the run record's models summary says which."""
    connect_timeout: float = Field(default=10.0, gt=0)
    """Seconds to open the connection: a dead or firewalled server fails fast."""
    first_token_timeout: float = Field(default=120.0, gt=0)
    """Seconds from the request to the first streamed token: a CPU server's slow prefill of a long
    prompt is not a dead server, so this is generous."""
    idle_timeout: float = Field(default=60.0, gt=0)
    """Longest silence between two streamed tokens before the stream counts as stalled."""
    timeout: float = Field(default=300.0, gt=0)
    """The whole call, first byte to last: a stream that never ends is cut here."""
    max_retries: int = Field(default=4, ge=0, le=10)
    structured: Literal["auto", "json_schema", "json_object", "prompt"] = "auto"
    """How structured output is asked for: `auto` negotiates (json_schema, then json_object with the
    schema, then the schema in the prompt) and remembers per api base what worked; any other value
    forces that one mode."""
    seed: int | None = None
    """Sent as the request's `seed` (OpenAI-compatible servers and the embedded model honour it;
    litellm drops it for providers that take none)."""

    @field_validator("api_base")
    @classmethod
    def _remember_credentials(cls, value: str | None) -> str | None:
        """Every api base (flag, environment, config, the setup screen) passes here: the
        credentials in it (user info, an `api_key=` parameter) become secrets the redactor masks
        by exact value wherever text is written, should a server or a message echo them."""
        if value:
            from proactive_tui.redact import remember_api_base

            remember_api_base(value)
        return value

    @property
    def is_local(self) -> bool:
        return self.model.startswith("local/")

    def token_cap(self, structured: bool = False) -> int:
        """The max_tokens every call of this seat sends: the seat's own, else its default."""
        if self.max_tokens:
            return self.max_tokens
        if self.is_local:
            if structured:
                from proactive_tui.llm.local.provider import DEFAULT_STRUCTURED_MAX_TOKENS

                return DEFAULT_STRUCTURED_MAX_TOKENS
            return LOCAL_DEFAULT_MAX_TOKENS
        return SELF_HOSTED_DEFAULT_MAX_TOKENS if self.api_base else HOSTED_DEFAULT_MAX_TOKENS


class RoleSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent: ModelSettings = Field(default_factory=ModelSettings)
    user: ModelSettings = Field(default_factory=ModelSettings)
    judge: ModelSettings = Field(default_factory=ModelSettings)

    def for_role(self, role: Role) -> ModelSettings:
        settings: ModelSettings = getattr(self, role)
        return settings


ENV_FIELDS = {
    "MODEL": "model",
    "API_BASE": "api_base",
    "TEMPERATURE": "temperature",
    "MAX_TOKENS": "max_tokens",
    "TIMEOUT": "timeout",
    "CONNECT_TIMEOUT": "connect_timeout",
    "FIRST_TOKEN_TIMEOUT": "first_token_timeout",
    "IDLE_TIMEOUT": "idle_timeout",
    "STRUCTURED_MODE": "structured",
    "MAX_RETRIES": "max_retries",
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
