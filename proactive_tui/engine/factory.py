"""Build a runnable session from a plain description (a SessionSpec).

The headless command, the playground and resume all describe a session the same way (which
environment, who sits in each seat, which model settings, which protocol settings) and get the
same engine object back.
"""

from __future__ import annotations

from typing import Any, Callable, Literal

from pydantic import BaseModel, Field

from proactive_tui.engine.participants import HumanParticipant, LLMParticipant, Participant
from proactive_tui.llm.settings import ROLES, RoleSettings

SeatKind = Literal["model", "human"]


class SessionSpec(BaseModel):
    env_id: str
    roles: RoleSettings = Field(default_factory=RoleSettings)
    seats: dict[str, SeatKind] = Field(default_factory=lambda: {"agent": "model", "user": "model", "judge": "model"})
    settings: dict[str, Any] = Field(default_factory=dict)
    """Protocol settings (for ProactiveEval: GuidanceSettings fields)."""

    @property
    def human_seats(self) -> list[str]:
        return [s for s, kind in self.seats.items() if kind == "human"]

    def models_summary(self) -> dict[str, dict[str, Any]]:
        """Per seat: model, api base, temperature, max tokens (for run records; never keys)."""
        out = {}
        for role in ROLES:
            s = self.roles.for_role(role)
            out[role] = {"model": "person" if self.seats.get(role) == "human" else s.model, "api_base": s.api_base,
                         "temperature": s.temperature, "max_tokens": s.max_tokens}
        return out


class UnsupportedFamily(ValueError):
    pass


def build_seats(spec: SessionSpec, gateway: Any) -> dict[str, Participant]:
    seats: dict[str, Participant] = {}
    for role in ROLES:
        if spec.seats.get(role) == "human":
            seats[role] = HumanParticipant()
        else:
            seats[role] = LLMParticipant(gateway, spec.roles.for_role(role))
    return seats


def _guidance(spec: SessionSpec, env: Any, seats: dict[str, Participant], session_id: str | None,
              resume_from: Any = None):
    from proactive_tui.engine.protocols.guidance import GuidanceSession, GuidanceSettings, Seats

    return GuidanceSession(env, Seats(**seats), GuidanceSettings(**spec.settings), session_id=session_id,
                           models=spec.models_summary(), resume_from=resume_from)


def _proposals(spec: SessionSpec, env: Any, seats: dict[str, Participant], session_id: str | None):
    from proactive_tui.engine.protocols.proposals import ProposalSeats, ProposalSession, ProposalSettings

    return ProposalSession(env, ProposalSeats(agent=seats["agent"], user=seats["user"]), ProposalSettings(**spec.settings),
                           session_id=session_id, models=spec.models_summary())


# family -> builder(spec, env, seats, session_id); each family's protocol registers one here.
SESSION_BUILDERS: dict[str, Callable[..., Any]] = {"proactiveeval": _guidance}
SESSION_BUILDERS["proactivebench"] = _proposals


def _timeline(spec: SessionSpec, env: Any, seats: dict[str, Participant], session_id: str | None):
    from proactive_tui.engine.protocols.timeline import build_timeline_session

    return build_timeline_session(spec, env, seats, session_id)


SESSION_BUILDERS["chronos"] = _timeline


def build_session(spec: SessionSpec, env: Any, gateway: Any, seats: dict[str, Participant] | None = None,
                  session_id: str | None = None, resume_from: Any = None):
    """The engine session for `env`'s family, seated per the spec.

    `resume_from` (a RunRecord) continues an interrupted session; only builders that take a
    `resume_from` argument support it.
    """
    builder = SESSION_BUILDERS.get(env.family)
    if builder is None:
        raise UnsupportedFamily(f"{env.family} sessions are not available yet (environment {env.id})")
    if resume_from is None:
        return builder(spec, env, seats or build_seats(spec, gateway), session_id)
    import inspect

    if "resume_from" not in inspect.signature(builder).parameters:
        raise UnsupportedFamily(f"{env.family} sessions cannot be resumed yet")
    return builder(spec, env, seats or build_seats(spec, gateway), session_id, resume_from=resume_from)
