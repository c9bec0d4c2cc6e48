"""Re-running a recorded session against a new agent (issue 18), and comparing it with the original.

Same environment, same settings (seed included), same user and judge models; only the agent
changes. The user's turns are either **frozen** (the recorded user messages are sent again
verbatim, in the order they were said: `core.replay.FrozenSeat`; if the new agent's dialogue runs
longer than the recording, the user model answers from there, and the record says how many were
frozen) or **simulated** (the user model answers the new agent as it goes). Frozen turns isolate
the agent: the same user said the same things, so a score difference is the agent's.

Which replies are "the user's turns" is a family fact (`RerunPart.user_turns`): ProactiveEval's
user messages, Chronos's user messages after the scenario's opening. ProactiveBench has none (its
observations come from the trace, and its user seat is the reward judge): a re-run there is
always simulated, which for that family means judged anew.

The new session records `rerun_of` (the original session, frozen or simulated, how many user turns
were given) in its start event, so History, `sessions show` and exports say what it is.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

UserTurns = Literal["frozen", "simulated"]


class RerunError(ValueError):
    """A re-run that cannot be made, worded for the person asking."""


class RerunPlan(BaseModel):
    model_config = {"arbitrary_types_allowed": True}

    original_id: str
    original: Any
    """The original session's RunRecord."""
    spec: Any
    """The original's SessionSpec with the new agent."""
    env: Any
    user: UserTurns = "frozen"


def frozen_answers(family: Any, record: Any) -> list[Any]:
    """The user's recorded turns as `RecordedAnswer`s, in the order they were said."""
    from proactive_tui.core.replay import RecordedAnswer

    return [RecordedAnswer(seat="user", turn=m.turn, text=m.content, model=m.model, usage=m.usage)
            for m in (family.rerun.user_turns(record) if family.rerun is not None else [])]


def check_rerun(plan: RerunPlan) -> list[Any]:
    """The frozen user turns the re-run gives (none when simulated); RerunError when the family
    has no user turns to freeze or the original finished none."""
    from proactive_tui.core import registry

    family = registry.get(plan.original.family)
    if plan.user != "frozen":
        return []
    if family.parts.rerun is None:
        raise RerunError(f"{family.name} sessions have no user turns to freeze ({family.no_frozen_user_reason}): "
                         "re-run with the user simulated")
    answers = frozen_answers(family, plan.original)
    if not answers:
        raise RerunError(f"session {plan.original_id} has no finished user message to freeze")
    return answers


def build_rerun(plan: RerunPlan, gateway: Any, seats: dict[str, Any] | None = None,
                session_id: str | None = None) -> Any:
    """The new session, ready to run: the original's seats and settings, the new agent, the user
    frozen or simulated."""
    from proactive_tui.core.replay import FrozenSeat
    from proactive_tui.core.spec import build_seats, build_session

    answers = check_rerun(plan)
    seats = dict(seats or build_seats(plan.spec, gateway))
    if answers:
        seats["user"] = FrozenSeat(seats["user"], answers)
    given = len(answers)
    session = build_session(plan.spec, plan.env, gateway, seats=seats, session_id=session_id)
    session.rerun_of = {"session_id": plan.original_id, "user": plan.user, "user_turns_recorded": given,
                        "agent": plan.spec.roles.for_role("agent").model}
    return session


def describe_rerun(rerun_of: dict[str, Any]) -> str:
    """One line: "re-run of 3f2a… against openai/gpt-4o, the user's 3 turns frozen"."""
    agent = rerun_of.get("agent") or "a new agent"
    if rerun_of.get("user") == "frozen":
        n = rerun_of.get("user_turns_recorded") or 0
        user = f"the user's {n} recorded turn{'s' * (n != 1)} frozen (simulated beyond them)"
    else:
        user = "the user simulated"
    return f"re-run of {rerun_of.get('session_id')} against {agent}, {user}"
