"""Forking a session: a branch that shares its parent's turns up to a point, then goes its own way.

A branch starts at a fork point (`ForkPoint`: a turn and the seat whose reply there is changed)
with a change (`ForkChange`): the reply edited by a person, or asked again (of another model,
temperature or with an added instruction). Everything before the fork point is the parent's:

- **In the store the prefix is not copied.** A branch's rows hold its own SessionStarted (with
  `forked_from`) and the events after the fork point; reading it (`store.queries.load_events`)
  stitches the parent's prefix in between, recomputed from the parent's events with the family's
  own rule of which events come before the fork point (`ForkPart.sides`). The parent's events
  are append-only, so the prefix read later is the prefix the branch was built on, and a branch of
  a branch stitches through every ancestor.
- **The engine does not trust a copy either.** The branch session runs its protocol from the
  start, with every seat's replies before the fork point handed back from the parent's record
  (`core.replay`, the way resume works) or, for ProactiveEval, its turns restored from the prefix;
  what it emits while catching up is dropped (`SessionBase.inherit`), and the parent's own prefix
  events are passed on in its place, so every consumer (screens, printers, the recorder's record)
  sees one stream: the branch's start, the parent's prefix, then the branch's own events.

Which events come before the fork point is a family fact (its event types), so each family gives
a classifier, `ForkPart.sides(point)`: "before", "after", or None for an event that carries no
turn (a retry notice, a usage line); those count by position, before the first "after" event.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Callable, Literal

from pydantic import BaseModel, Field

from proactive_tui.core.writers import EDITED_BY as EDITED_BY  # noqa: F401 - the name every fork module imports

Side = Literal["before", "after"] | None
Classifier = Callable[[Any], Side]



class ForkError(ValueError):
    """A fork that cannot be made, worded for the person asking (which session, turn or file)."""


class ForkPoint(BaseModel):
    turn: int
    """ProactiveEval: the dialogue turn; ProactiveBench: the trace event's index; Chronos: the turn."""
    seat: str
    """Whose reply at that turn is changed: "agent" or "user" (ProactiveBench's user seat gives
    the verdict)."""


class ForkChange(BaseModel):
    text: str | None = None
    """The reply as edited (a message's text; ProactiveBench a proposal's task or its JSON, a
    verdict word or JSON; Chronos the agent's reply JSON); None asks the seat again."""
    instruction: str = ""
    """Added to the seat's system prompt for the regenerated reply (its re-asks included)."""
    temperature: float | None = None
    """The forked seat's temperature in the branch, when the fork changed it (the spec applies
    it; kept here so the branch says so)."""

    @property
    def kind(self) -> Literal["edited", "regenerated"]:
        return "edited" if self.text is not None else "regenerated"


class ForkedFrom(BaseModel):
    """What a branch records of where it comes from (SessionStarted, the run record, the store)."""

    session_id: str
    """The parent session."""
    turn: int
    seat: str
    change: Literal["edited", "regenerated"]
    instruction: str = ""
    temperature: float | None = None
    changed_seats: dict[str, str] = Field(default_factory=dict)
    """Seats whose model the branch changed: seat -> the branch's model (the parent's is in its record)."""
    prefix_events: int = 0
    """How many of the parent's events the branch inherits (stitched in after its start event)."""


class ForkStep(BaseModel):
    """One place a session can be forked at, as the fork picker and `sessions fork` list it."""

    turn: int
    seat: str
    label: str
    """How a person finds it: "turn 3 · agent message", "event 2 · verdict"."""
    text: str
    """The reply there as recorded: what an edit starts from."""
    summary: str = ""
    """One line for a list of steps (default: the text, flattened)."""

    def line(self) -> str:
        return self.summary or " ".join(self.text.split())


def prefix_events(events: list[Any], sides: Classifier) -> list[Any]:
    """The parent's events a branch inherits: those its family places before the fork point, and
    those it cannot place (None) that come before the first event after it; the start and end of
    the parent are never inherited. Retry notices right before the first "after" event belong to
    the forked call, not the prefix."""
    out: list[Any] = []
    pending: list[Any] = []  # retry notices whose call is not yet known
    seen_after = False
    for event in events:
        kind = getattr(event, "type", "")
        if kind in ("session_started", "session_ended"):
            continue
        side = sides(event)
        if side == "after":
            seen_after = True
            pending.clear()
        elif side == "before":
            out.extend(pending)
            pending.clear()
            out.append(event)
        elif not seen_after:
            if kind == "retrying":
                pending.append(event)
            else:
                out.extend(pending)
                pending.clear()
                out.append(event)
    return out


def answers_before(answers: list[Any], point: ForkPoint) -> list[Any]:
    """The recorded answers (`core.replay.RecordedAnswer`) given before the fork point's reply."""
    for index, answer in enumerate(answers):
        if answer.seat == point.seat and answer.turn == point.turn:
            return answers[:index]
    raise ForkError(f"the recording has no {point.seat} reply at turn {point.turn} to fork from")


def steer_for(point: ForkPoint, instruction: str) -> Callable[[Any, list[dict[str, Any]]], list[dict[str, Any]]]:
    """The `llm.trace.STEER` that adds `instruction` to the system prompt of the fork point's calls."""

    def steer(label: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if label is None or label.seat != point.seat or label.turn != point.turn or not instruction:
            return messages
        note = f"\n\nAdditional instruction for this reply: {instruction}"
        if messages and messages[0].get("role") == "system":
            return [{**messages[0], "content": str(messages[0].get("content", "")) + note}, *messages[1:]]
        return [{"role": "system", "content": note.strip()}, *messages]

    return steer


class ForkPlan(BaseModel):
    """Everything building a branch needs, read from the store (`store.queries.fork_plan`)."""

    model_config = {"arbitrary_types_allowed": True}

    parent_id: str
    parent: Any
    """The parent's run record (RunRecord), its own prefix stitched in when it is a branch itself."""
    parent_events: list[Any]
    spec: Any
    """The branch's SessionSpec: the parent's, with any seat the fork changed."""
    env: Any
    point: ForkPoint
    change: ForkChange
    changed_seats: dict[str, str] = Field(default_factory=dict)


def branch_spec(spec: Any, models: dict[str, str] | None = None, temperature: float | None = None,
                temperature_seat: str | None = None, api_base: str | None = None) -> tuple[Any, dict[str, str]]:
    """The parent's SessionSpec with what a fork changes: seat -> model (`models`), the forked
    seat's temperature, every seat's api base. Returns it and seat -> the branch's model for the
    seats that changed (what `ForkedFrom.changed_seats` records). A seat given a model is a model
    seat in the branch, even where a person sat in the parent."""
    roles = spec.roles
    changed: dict[str, str] = {}
    updates: dict[str, Any] = {}
    for role in ("agent", "user", "judge"):
        settings = roles.for_role(role)
        change: dict[str, Any] = {}
        model = (models or {}).get(role)
        if model:
            change["model"] = model
            changed[role] = model
        if temperature is not None and role == temperature_seat:
            change["temperature"] = temperature
            changed.setdefault(role, settings.model)
        if api_base:
            change["api_base"] = api_base
        if change:
            updates[role] = settings.model_copy(update=change)
    seats = dict(spec.seats)
    for role in changed:
        seats[role] = "model"
    return spec.model_copy(update={"roles": roles.model_copy(update=updates), "seats": seats}), changed


class BranchStart(BaseModel):
    """How a session starts as a branch: where from, and the parent's events it inherits. Made by
    `build_fork` for a new branch, and by `store.queries.resume_spec` for an interrupted branch
    that is resumed (the resumed session is a branch of the same parent at the same point, so the
    tree keeps it and its prefix is still not copied)."""

    model_config = {"arbitrary_types_allowed": True}

    forked_from: ForkedFrom
    prefix: list[Any]
    resumed: bool = False
    """The session resumes an interrupted branch (its start event keeps `resumed_from`)."""

    def apply(self, session: Any, family: Any) -> None:
        point = ForkPoint(turn=self.forked_from.turn, seat=self.forked_from.seat)
        forked = self.forked_from.model_copy(update={"prefix_events": len(self.prefix)})
        session.inherit(forked, self.prefix, fork_part(family).sides(point), keep_resumed=self.resumed)


def fork_part(family: Any) -> Any:
    """The family's `fork` part (`core.family.ForkPart`); ForkError when it has none."""
    fork = family.fork
    if fork is None:
        raise ForkError(f"{family.name} sessions cannot be forked")
    return fork


def check_fork(plan: ForkPlan) -> Any:
    """The plan's family, once the fork point is one of its steps and the edit reads as the reply
    it replaces; ForkError naming what is wrong otherwise (before anything runs)."""
    from proactive_tui.core import registry

    family = registry.get(plan.parent.family)
    fork = fork_part(family)
    steps = {(s.turn, s.seat) for s in fork.steps(plan.parent)}
    if (plan.point.turn, plan.point.seat) not in steps:
        raise ForkError(f"session {plan.parent_id} has no {plan.point.seat} reply at turn {plan.point.turn} to fork "
                        f"from (see `proactive-tui sessions fork {plan.parent_id} --list`)")
    if plan.change.text is not None:
        if not plan.change.text.strip():
            raise ForkError(f"the edited {plan.point.seat} reply for turn {plan.point.turn} is empty")
        fork.check_edit(plan.point, plan.change.text, plan.parent)
    return family


def build_fork(plan: ForkPlan, gateway: Any, seats: dict[str, Any] | None = None,
               session_id: str | None = None) -> Any:
    """The branch session, ready to run: it inherits the parent's prefix and changes one reply."""
    from proactive_tui.core.run_record import fold
    from proactive_tui.core.spec import build_seats

    family = check_fork(plan)
    started = next(e for e in plan.parent_events if getattr(e, "type", "") == "session_started")
    prefix = prefix_events(plan.parent_events, fork_part(family).sides(plan.point))
    prefix_record = fold([started, *prefix])
    seats = seats or build_seats(plan.spec, gateway)
    session = fork_part(family).build(plan.spec, plan.env, seats, plan.parent, prefix_record, plan.point, plan.change,
                                session_id=session_id)
    forked = ForkedFrom(session_id=plan.parent_id, turn=plan.point.turn, seat=plan.point.seat,
                        change=plan.change.kind, instruction=plan.change.instruction,
                        temperature=plan.change.temperature, changed_seats=plan.changed_seats)
    BranchStart(forked_from=forked, prefix=prefix).apply(session, family)
    if plan.change.instruction:
        session.steer = steer_for(plan.point, plan.change.instruction)
    return session


def replay_fork(family: Any, spec: Any, env: Any, seats: dict[str, Any], parent: Any, point: ForkPoint,
                change: ForkChange, session_id: str | None = None) -> Any:
    """`ForkPart.build` for families that resume by replay (ProactiveBench, Chronos): every seat
    answers from the parent's record up to the fork point, the edit (if any) is the forked seat's
    next answer, and then the seats are live."""
    from proactive_tui.core.replay import wrap_seats

    fork = fork_part(family)
    answers = answers_before(fork.recorded_answers(parent), point)
    if change.text is not None:
        answers.append(fork.edit_answer(point, change.text, parent))
    return family.engine.build_session(spec, env, wrap_seats(dict(seats), answers), session_id=session_id)


# -- the tree -----------------------------------------------------------------------------------


class BranchNode(BaseModel):
    """One session of a fork tree, with its branches."""

    id: str
    forked_from: ForkedFrom | None = None
    summary: Any = None
    """store.queries.SessionSummary of the session (status, headline scores)."""
    children: list["BranchNode"] = Field(default_factory=list)

    def walk(self, depth: int = 0) -> Iterator[tuple[int, BranchNode]]:
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)

    def parents(self) -> dict[str, "BranchNode"]:
        """Session id -> the node it branches from, for every branch below this node."""
        return {child.id: node for _depth, node in self.walk() for child in node.children}


def describe_fork(forked: ForkedFrom) -> str:
    """One line saying where a branch starts and what it changed: "turn 2 agent · edited"."""
    what = forked.change + (f" ({forked.instruction!r})" if forked.instruction else "")
    if forked.temperature is not None:
        what += f" at temperature {forked.temperature:g}"
    if forked.changed_seats:
        what += " · " + ", ".join(f"{seat} {model}" for seat, model in sorted(forked.changed_seats.items()))
    return f"turn {forked.turn} {forked.seat} · {what}"
