"""Who wrote a reply: a model, or a person (playing a seat, or editing a reply when forking).

Every reply the record keeps names its writer in one field (`MessageRecord.model`, a
ProactiveBench proposal's `model` or verdict's `by`, a Chronos outcome's `model`): the model
string, `PERSON` for a person in the seat, `EDITED_BY` for a reply a person edited in a fork. The
views read that field and say it through the functions here (`speaker`, `seat_writers`,
`writers_text`), so a reply a person wrote is never credited to the seat's model in one view and
to the person in another.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

PERSON = "person"
"""The writer of a reply a person typed in the seat they play."""

EDITED_BY = "person (edited)"
"""The writer an edited reply carries: what the transcript, the record and every export say
wrote it (a person, in a fork), never the model that wrote the original."""


def by_person(writer: str | None) -> bool:
    """The writer is a person (in the seat, or editing a fork's reply), not a model or a script."""
    return writer in (PERSON, EDITED_BY)


def speaker(writer: str, played: bool = False, you: str = "you") -> str:
    """How a view names the writer of one reply: an edit as `person (edited)`, a reply of the
    seat a person plays as `you` (an export, read by others, passes `you="person"`), anything
    else as the record has it."""
    if writer == EDITED_BY:
        return EDITED_BY
    return you if played else writer


def seat_writers(record: Any) -> dict[str, list[str]]:
    """seat -> everyone who wrote that seat's replies in `record` (a RunRecord), in the order they
    first did: the seat's model, and any person who played it or edited one of its replies. Read
    from the replies themselves (their family's `RecordPart.reply_writers`), never from the spec."""
    from proactive_tui.core import registry

    family = registry.find(record.family)
    pairs = family.record.reply_writers(record) if family is not None else message_writers(record)
    out: dict[str, list[str]] = {}
    for seat, writer in pairs:
        if writer and writer not in out.setdefault(seat, []):
            out[seat].append(writer)
    return out


def message_writers(record: Any) -> list[tuple[str, str]]:
    """(seat, writer) of every dialogue message of the record, in order (`RecordPart.reply_writers`'s default)."""
    return [(m.role, m.model) for m in record.messages]


def writers_text(model: str, writers: list[str], played: bool = False, you: str = "you") -> str:
    """One seat as History's Models column names it: any person who wrote some of its replies
    besides its model, then the model (`you` when a person played it): `person (edited) +
    local/smollm2`. The person comes first so a narrow column that cuts the cell keeps them."""
    own = you if played else model
    people = [w for w in writers if by_person(w) and not (played and w == PERSON) and w != model]
    return " + ".join([*people, own] if own else people)


class PersonReply(BaseModel):
    """A reply a person wrote (in their seat, or as a fork's edit): where the call inspector lists
    the model calls behind a session's replies, this one stands for itself, since no model made it."""

    seq: int = 0
    """The event's position in the session (entries are listed in the order they happened)."""
    seat: str
    turn: int | None = None
    purpose: str
    """What the reply was (`agent message`, `event 2 verdict`), worded as a model call's purpose."""
    writer: str
    """`person` or `person (edited)`, as the record has it."""
    message_id: str | None = None
    text: str = ""


def person_reply(event: Any) -> PersonReply | None:
    """The person's reply an event records, or None (a model's, a script's, or no reply): a
    finished dialogue message whose writer is a person, or a family event that says so itself
    (its `person_reply()`, e.g. a ProactiveBench proposal or verdict)."""
    if getattr(event, "type", "") == "message_done":
        m = event.message
        if not by_person(m.model):
            return None
        return PersonReply(seq=event.seq, seat=m.role, turn=m.turn, purpose=f"{m.role} message", writer=m.model,
                           message_id=m.id, text=m.content)
    own = getattr(event, "person_reply", None)
    return own() if callable(own) else None
