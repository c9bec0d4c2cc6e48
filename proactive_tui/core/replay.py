"""Resume by replay: a seat that answers from an interrupted session's record, then lives.

A family that resumes this way (ProactiveBench, Chronos) does not rebuild its engine's state by
hand from the run record: it runs its protocol again from the start with every seat wrapped in a
`ReplaySeat`, which hands back the replies the interrupted session recorded for its complete
steps, in order, without calling anyone. The engine therefore takes exactly the path it took the
first time (same prompts, same state, same events into the new session's log), and once a seat's
recorded answers are used up, its calls go to the live participant: the session continues from
the first step that was not complete. What counts as a complete step, and which recorded events
hold a seat's replies, is the family's part (`<family>/resume.py`); this module knows neither.

A replayed call that does not match the recording (another seat or turn than the next recorded
answer) raises `ReplayMismatch`, so a record this version would play differently ends the resumed
session with an error instead of silently mixing two histories.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from pydantic import BaseModel, Field

from proactive_tui.core.events import SeatInfo, UsageInfo
from proactive_tui.core.participants import Participant, Reply, ReplyRequest, T
from proactive_tui.llm.errors import ModelError


class ReplayMismatch(RuntimeError):
    """The resumed engine asked for something else than the interrupted session recorded next."""


class RecordedAnswer(BaseModel):
    """One reply a seat gave in the interrupted session, as its events recorded it."""

    seat: str
    turn: int
    """The request's `turn` (ProactiveBench: the trace event index; Chronos: the turn number)."""
    text: str = ""
    """The reply's text (a model's raw text is read again by the family's own reader)."""
    value: dict[str, Any] | None = None
    """The structured value, when the record holds it rather than text to read (scripted seats,
    a person's verdict); validated again with the schema the engine asks for."""
    model: str = ""
    usage: UsageInfo = Field(default_factory=UsageInfo)
    asks: int = 1
    error: str | None = None
    """The call failed with an unusable structured reply: replayed as that ModelError."""


class ReplaySeat(Participant):
    """The live participant of a seat, preceded by the answers it already gave."""

    def __init__(self, live: Participant, answers: list[RecordedAnswer]) -> None:
        self.live = live
        self.answers = list(answers)
        self.replayed = 0

    @property
    def info(self) -> SeatInfo:  # type: ignore[override]  # read-only: the live seat's own
        """The live seat's, as it is now (an agent program names its version once started)."""
        return self.live.info

    async def start(self, seat: str = "agent") -> None:
        await self.live.start(seat)

    def __getattr__(self, name: str) -> Any:  # attach(), calls, settings ... are the live seat's
        if name == "live":
            raise AttributeError(name)
        return getattr(self.live, name)

    @property
    def shared_instance(self) -> str | None:  # type: ignore[override]
        return self.live.shared_instance

    @property
    def replaying(self) -> bool:
        return bool(self.answers)

    def _next(self, request: ReplyRequest) -> RecordedAnswer:
        answer = self.answers[0]
        if answer.seat != request.seat or answer.turn != request.turn:
            raise ReplayMismatch(
                f"resuming: the {request.seat} seat was asked for turn {request.turn}, but the recording's next "
                f"{answer.seat} reply is for turn {answer.turn}; this session cannot be replayed by this version")
        self.answers.pop(0)
        self.replayed += 1
        if answer.error is not None:
            raise ModelError(answer.error, "structured", answer.model, partial_text=answer.text)
        return answer

    @staticmethod
    def _reply(answer: RecordedAnswer) -> Reply:
        return Reply(text=answer.text, model=answer.model, usage=answer.usage, asks=answer.asks)

    async def reply(self, request: ReplyRequest) -> Reply:
        if not self.replaying:
            return await self.live.reply(request)
        answer = self._next(request)
        if request.on_delta is not None and answer.text:  # the text arrives whole, as one delta
            result = request.on_delta(answer.text)
            if asyncio.iscoroutine(result):
                await result
        return self._reply(answer)

    async def reply_structured(
        self, request: ReplyRequest, schema: type[T], parse_text: Callable[[str], T] | None = None
    ) -> tuple[T, Reply]:
        if not self.replaying:
            return await self.live.reply_structured(request, schema, parse_text)
        answer = self._next(request)
        if answer.value is not None:
            value = schema.model_validate(answer.value)
        else:
            value = parse_text(answer.text) if parse_text else schema.model_validate_json(answer.text)
        return value, self._reply(answer)

    def replay_read(self, request: ReplyRequest, read: Callable[[str], Any], schema: type[BaseModel]) -> tuple[Any, Reply, Any]:
        """For callers that read a model's text with their own reader (ProactiveBench's `ask`):
        (value, reply, reading) as the live call gave them: text is read again with `read`, a
        recorded value is validated with `schema` (reading None, as for a scripted seat)."""
        answer = self._next(request)
        if answer.value is not None:
            return schema.model_validate(answer.value), self._reply(answer), None
        reading = read(answer.text)
        return reading, self._reply(answer), reading


class FrozenSeat(ReplaySeat):
    """A seat that gives recorded replies in the order they were given, whatever turn asks for
    them: a session re-run against a new agent with the user's turns frozen (`core.rerun`). The
    new agent may take the dialogue elsewhere, so turns cannot be matched one to one as a
    resume does; the k-th time the seat is asked it says what it said the k-th time. Once the
    recording is used up the live participant answers (the user is simulated from there)."""

    def _next(self, request: ReplyRequest) -> RecordedAnswer:
        answer = self.answers.pop(0)
        self.replayed += 1
        if answer.error is not None:
            raise ModelError(answer.error, "structured", answer.model, partial_text=answer.text)
        return answer


def next_writer(participant: Any, seat: str, turn: int) -> str:
    """Who writes the seat's reply for `turn`: the recorded answer's writer when the seat hands
    one back for it (a fork's edit says `person (edited)`), else the seat's own label. What a
    message's start names, so a replayed or edited reply is not announced as the live model's."""
    if isinstance(participant, ReplaySeat) and participant.answers:
        answer = participant.answers[0]
        if answer.seat == seat and answer.turn == turn and answer.model:
            return answer.model
    label: str = participant.info.label
    return label


def wrap_seats(seats: dict[str, Participant | None], answers: list[RecordedAnswer]) -> dict[str, Participant | None]:
    """Every present seat behind a ReplaySeat holding its own recorded answers, in order."""
    return {seat: None if p is None else ReplaySeat(p, [a for a in answers if a.seat == seat])
            for seat, p in seats.items()}


def is_replaying(participant: Any) -> bool:
    """This seat's next answer comes from the recording: a person in it is not asked (a protocol
    announces AwaitingHuman only when this is False, so nobody is prompted for a replayed reply)."""
    return isinstance(participant, ReplaySeat) and participant.replaying


def replaying(seats: dict[str, Any]) -> bool:
    """Whether any seat still has recorded answers to give (the engine is still catching up)."""
    return any(isinstance(p, ReplaySeat) and p.replaying for p in seats.values())


def unreplayed(seats: dict[str, Any]) -> dict[str, int]:
    """Recorded answers left over per seat once the session ended (0 everywhere when the resumed
    engine used every committed reply)."""
    return {seat: len(p.answers) for seat, p in seats.items() if isinstance(p, ReplaySeat)}
