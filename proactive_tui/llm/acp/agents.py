"""Which agent program an `acp:` seat starts, and how it is allowed to behave.

Two spellings, both a seat value wherever a model string goes (`--agent`, `[roles.agent] model`,
the setup screen):

- `acp:NAME`: the config file's `[acp_agents.NAME]` entry (command, args, env, a pinned version,
  the permission policy, the per-turn deadline);
- `acp:COMMAND ARG...`: a command line (split like a shell would, no shell run), defaults for the
  rest. A NAME that is not configured and is not a program on PATH is refused with both reasons.

No SDK import here: the config file is read at startup.
"""

from __future__ import annotations

import shlex
import shutil
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from proactive_tui.llm.acp import PREFIX

PermissionPolicy = Literal["deny", "allow_once", "ask"]
DEFAULT_TURN_TIMEOUT = 300.0


class AcpAgentConfig(BaseModel):
    """`[acp_agents.NAME]` in the config file."""

    model_config = ConfigDict(extra="forbid")

    command: str
    """The program to start (a name on PATH or a path)."""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """Added to the small environment the program gets (PATH, HOME, USER...). Values are never
    written to records or logs: an API key may be among them."""
    version: str | None = None
    """When set, the agent's reported version (`agentInfo.version`) must equal it, or the seat
    refuses to start: a run record names exactly which agent answered."""
    permission: PermissionPolicy = "deny"
    """How `session/request_permission` is answered: `deny` (default: the agent gets a reject
    option, or a cancel), `allow_once` (the agent's allow-once option), `ask` (the playground asks
    the person in a modal; headless runs, with nobody to ask, deny)."""
    turn_timeout: float = Field(default=DEFAULT_TURN_TIMEOUT, gt=0)
    """Seconds one prompt turn may take before `session/cancel` is sent (then the process is
    stopped if it still does not end the turn)."""
    keep_workdir: bool = False
    """Keep each session's scratch folder (under the cache dir) after the session, for a look at
    what the agent wrote there; removed by default."""


class AgentSpec(BaseModel):
    """A resolved `acp:` seat: what to start and how."""

    seat: str
    """The seat value as given (`acp:gemini`), what records name the seat by."""
    name: str
    config: AcpAgentConfig

    @property
    def argv(self) -> list[str]:
        return [self.config.command, *self.config.args]


class AcpSeatError(ValueError):
    """An `acp:` seat value that cannot start anything; the message says why and what to write."""


def resolve(seat: str, agents: dict[str, AcpAgentConfig] | None = None) -> AgentSpec:
    """The agent an `acp:` seat value names, from the configured `agents` or as a command line."""
    value = seat.strip()
    if not value.startswith(PREFIX):
        raise AcpSeatError(f"{seat!r} is not an ACP seat (write acp:NAME or acp:COMMAND ARGS)")
    rest = value[len(PREFIX):].strip()
    if not rest:
        raise AcpSeatError("acp: needs an agent: acp:NAME (an [acp_agents.NAME] config entry) or acp:COMMAND ARGS")
    agents = agents or {}
    if rest in agents:
        return AgentSpec(seat=value, name=rest, config=agents[rest])
    try:
        argv = shlex.split(rest)
    except ValueError as exc:
        raise AcpSeatError(f"{value}: the command line cannot be split ({exc})") from None
    return AgentSpec(seat=value, name=argv[0].rsplit("/", 1)[-1], config=AcpAgentConfig(command=argv[0], args=argv[1:]))


def problem(seat: str, agents: dict[str, AcpAgentConfig] | None = None) -> str | None:
    """Why an `acp:` seat cannot start (for preflight and the setup screen), or None."""
    try:
        spec = resolve(seat, agents)
    except AcpSeatError as exc:
        return str(exc)
    if shutil.which(spec.config.command) is None:
        configured = ", ".join(sorted(agents or {})) or "none"
        return (f"no program {spec.config.command!r} on PATH, and no [acp_agents.{spec.name}] in the config file "
                f"(configured: {configured})")
    return None


def configured_agents() -> dict[str, AcpAgentConfig]:
    """The config file's agents; none when the file cannot be read (its own error is shown elsewhere)."""
    from proactive_tui.config import ConfigError, load_config

    try:
        return dict(load_config().acp_agents)
    except ConfigError:
        return {}
