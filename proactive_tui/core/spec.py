"""Build a runnable session from a plain description (a SessionSpec).

The headless command, the playground and resume all describe a session the same way (which
environment, who sits in each seat, which model settings, which protocol settings) and get the
same engine object back.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from proactive_tui.core.family import UnsupportedFamily  # noqa: F401  (raised here)
from proactive_tui.core.participants import HumanParticipant, LLMParticipant, Participant
from proactive_tui.llm.acp import is_acp_seat
from proactive_tui.llm.settings import ROLES, ModelSettings, RoleSettings

SeatKind = Literal["model", "human"]


def _model_seats() -> dict[str, SeatKind]:
    """Every seat a model's (the spec's default); a function so the dict is typed as seat kinds."""
    return {"agent": "model", "user": "model", "judge": "model"}


class SessionSpec(BaseModel):
    env_id: str
    roles: RoleSettings = Field(default_factory=RoleSettings)
    seats: dict[str, SeatKind] = Field(default_factory=_model_seats)
    settings: dict[str, Any] = Field(default_factory=dict)
    """Protocol settings (for ProactiveEval: ProactiveEvalSettings fields)."""

    def storable(self) -> dict[str, Any]:
        """The spec as the store keeps it (for resume): api bases without credentials. A session
        resumed from it needs the credentials again, from the keyring, the environment or a flag."""
        from proactive_tui.redact import public_api_base

        data = self.model_dump(mode="json")
        for role in data.get("roles", {}).values():
            if isinstance(role, dict) and role.get("api_base"):
                role["api_base"] = public_api_base(role["api_base"])
        return data

    @property
    def human_seats(self) -> list[str]:
        return [s for s, kind in self.seats.items() if kind == "human"]

    def models_summary(self) -> dict[str, dict[str, Any]]:
        """Per seat: model, api base (credentials stripped), temperature, the token caps its calls
        send (`max_tokens` for replies, `max_tokens_structured` for JSON replies; the seat's own or
        its default, `max_tokens_default` says which), the structured mode setting, and for the
        embedded model the thread count it computes with and why (for run records; never keys)."""
        from proactive_tui.redact import public_api_base

        out: dict[str, dict[str, Any]] = {}
        for role in ROLES:
            s = self.roles.for_role(role)
            out[role] = {"model": "person" if self.seats.get(role) == "human" else s.model,
                         "api_base": public_api_base(s.api_base) if s.api_base else None,
                         "temperature": s.temperature, "max_tokens": s.token_cap(),
                         "max_tokens_structured": s.token_cap(structured=True),
                         "max_tokens_default": s.max_tokens is None, "structured": s.structured}
            if self.seats.get(role) != "human" and is_acp_seat(s.model):
                from proactive_tui.llm.acp.agents import configured_agents, resolve

                agent = resolve(s.model, configured_agents())  # what was started; env names only, never values
                from proactive_tui.redact import redact

                # an agent program: none of our model settings (temperature, token caps) reach it
                out[role].update(temperature=None, max_tokens=None, max_tokens_structured=None, structured=None)
                out[role]["acp"] = {"name": agent.name, "command": [redact(a) for a in agent.argv], "version_pin": agent.config.version,
                                    "env": sorted(agent.config.env), "permission": agent.config.permission,
                                    "turn_timeout": agent.config.turn_timeout, "protocol_version": 1}
            if self.seats.get(role) != "human" and s.is_local:
                # The embedded model's speed depends on it more than on anything else.
                from proactive_tui.llm.local.loader import thread_choice

                out[role]["local_threads"] = thread_choice().model_dump()
        return out


def with_family_seat_settings(spec: SessionSpec, family: Any) -> SessionSpec:
    """`spec` with what the family decides for every seat set explicitly: its temperature
    (`EnginePart.seat_temperature`) and, where nobody chose a cap, the protocol's token cap
    (`EnginePart.default_max_tokens`; never for the embedded model). Explicit, so the decision
    survives storing the spec (a fork or resume of it runs as the session ran) and every start path
    gives one seat one temperature and one cap."""
    updates: dict[str, ModelSettings] = {}
    for role in ROLES:
        settings = spec.roles.for_role(role)
        update: dict[str, Any] = {"temperature": family.engine.seat_temperature(role, spec.roles, spec.settings)}
        cap = family.engine.default_max_tokens(role)
        if cap and settings.max_tokens is None and not settings.is_local:  # the protocol's cap, unless someone chose one
            update["max_tokens"] = cap
        updates[role] = settings.model_copy(update=update)
    return spec.model_copy(update={"roles": spec.roles.model_copy(update=updates)})


def seat_family_settings(spec: SessionSpec, seats: dict[str, Any], family: Any) -> SessionSpec:
    """For a family's session builder: `with_family_seat_settings`, and every model seat among
    `seats` (behind a replaying wrapper too, as a fork or resume seats it) set to call its model at
    its decided temperature and token cap. `family`: the Family or its name. Returns the decided spec, whose
    `models_summary` the run record keeps."""
    if isinstance(family, str):
        from proactive_tui.core import registry

        family = registry.get(family)
    spec = with_family_seat_settings(spec, family)
    for role, participant in seats.items():
        live = participant
        while live is not None and "live" in vars(live):
            live = vars(live)["live"]
        if isinstance(live, LLMParticipant) and role in ROLES:
            decided = spec.roles.for_role(role)
            update: dict[str, Any] = {"temperature": decided.temperature}
            if live.settings.max_tokens is None and decided.max_tokens is not None:
                update["max_tokens"] = decided.max_tokens  # the family's cap (default_max_tokens)
            live.settings = live.settings.model_copy(update=update)
    return spec


def build_seats(spec: SessionSpec, gateway: Any) -> dict[str, Participant]:
    seats: dict[str, Participant] = {}
    for role in ROLES:
        if spec.seats.get(role) == "human":
            seats[role] = HumanParticipant()
        elif is_acp_seat(spec.roles.for_role(role).model):  # an agent program over ACP (llm/acp)
            from proactive_tui.core.acp_seat import participant_for

            seats[role] = participant_for(spec.roles.for_role(role).model)
        else:
            seats[role] = LLMParticipant(gateway, spec.roles.for_role(role))
    return seats


def build_session(spec: SessionSpec, env: Any, gateway: Any, seats: dict[str, Participant] | None = None,
                  session_id: str | None = None, resume_from: Any = None, branch: Any = None) -> Any:
    """The engine session for `env`'s family, seated per the spec.

    `resume_from` (a RunRecord) continues an interrupted session, for families with a
    `resume` part; `branch` (a `core.fork.BranchStart`) when that session is a branch.
    """
    from proactive_tui.core import registry

    family = registry.get(env.family)
    seated = seats or build_seats(spec, gateway)
    if resume_from is None:
        session = family.engine.build_session(spec, env, seated, session_id=session_id)
    elif family.resume is None:
        raise UnsupportedFamily(f"{env.family} sessions cannot be resumed yet")
    else:
        session = family.resume.session(spec, env, seated, resume_from, session_id=session_id)
    if branch is not None:
        branch.apply(session, family)
    return session
