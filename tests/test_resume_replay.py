"""Resume by replay for ProactiveBench and Chronos: a session cut off anywhere, resumed with the
same scripted seats, ends with the result the uninterrupted run gave, asks nobody again for a
committed step, and skips none.

An interruption is simulated by folding a prefix of the uninterrupted run's events: that is what
the store holds when the process dies after committing that many events (tests/test_crash_safety.py
does it for real, with SIGKILL).
"""

from __future__ import annotations

import json

import pytest

from chronos_helpers import chronos_env
from conftest import SAMPLE_DIRS
from engine_helpers import collect
from proactive_tui.core.participants import HumanParticipant, ScriptedParticipant
from proactive_tui.core.replay import ReplaySeat, unreplayed
from proactive_tui.core.run_record import fold
from proactive_tui.envs import load_paths
from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession, ChronosSettings
from proactive_tui.families.chronos.testing import OracleAgent, ScriptedPersona
from proactive_tui.families.proactivebench.judges import JudgeVerdict
from proactive_tui.families.proactivebench.protocol import ProactiveBenchSeats, ProactiveBenchSession, ProactiveBenchSettings
from proactive_tui.families.proactivebench.resume import complete_events


def pb_env():
    return load_paths([SAMPLE_DIRS["proactivebench"]]).get("proactivebench/coding_01")


def pb_seats() -> ProactiveBenchSeats:
    """An agent proposing on even events, a judge rejecting every first attempt on event 2 and
    accepting the rest: retries and verdicts depend only on the request, never on call counts."""

    def propose(request, schema):
        n = request.turn
        retry = request.messages[-1]["content"].startswith("The user rejected")
        task = f"task {n}{' again' if retry else ''}" if n % 2 == 0 else "null"
        return {"Purpose": f"purpose {n}", "Thoughts": f"thoughts {n}", "Proactive Task": task,
                "Response": None if task == "null" else f"offer {n}"}

    def judge(request, schema):
        data = json.loads(request.messages[-1]["content"])
        index, task = len(data["Observations (Time Ascending)"]), data["Proposed Task"]
        ok = not (index == 2 and task and "again" not in task)
        return JudgeVerdict(thought=f"judged {index}", judgement="accepted" if ok else "rejected")

    return ProactiveBenchSeats(agent=ScriptedParticipant([], structured=propose, label="agent"),
                               user=ScriptedParticipant([], structured=judge, label="judge"))


def same_result(a, b) -> None:
    assert b.section.model_dump() == a.section.model_dump()
    assert [s.model_dump() for s in b.scores] == [s.model_dump() for s in a.scores]
    assert b.termination.reason == a.termination.reason
    assert [(m.role, m.turn, m.content) for m in b.messages] == [(m.role, m.turn, m.content) for m in a.messages]


@pytest.mark.asyncio
async def test_proactivebench_resumes_from_every_cut_to_the_uninterrupted_result() -> None:
    settings = ProactiveBenchSettings(max_events=5, retries=1, feedback=True)
    seats = pb_seats()
    full_events = await collect(ProactiveBenchSession(pb_env(), seats, settings))
    full = fold(full_events)
    calls_by_event = [r.turn for s in (seats.agent, seats.user) for r in s.calls]
    assert full.section.events[1].attempts[-1].attempt == 1  # the retry is exercised
    for cut in range(1, len(full_events) - 1):
        interrupted = fold(full_events[:cut])
        kept = complete_events(interrupted)
        live = pb_seats()
        session = ProactiveBenchSession(pb_env(), live, settings, resume_from=interrupted)
        resumed = fold(await collect(session))
        same_result(full, resumed)
        assert resumed.resumed_from == {"session_id": interrupted.id, "turns": kept}
        live_calls = [r.turn for s in (live.agent, live.user) for r in s.calls]
        assert sorted(live_calls) == sorted(t for t in calls_by_event if t > kept), f"cut {cut}"
        assert unreplayed({s: session.seats.get(s) for s in ("agent", "user")}) == {"agent": 0, "user": 0}


def chronos_session(name: str, resume_from=None, **settings) -> ChronosSession:
    return ChronosSession(chronos_env(name), ChronosSeats(agent=OracleAgent(), user=ScriptedPersona()),
                          ChronosSettings(**settings), resume_from=resume_from)


CHRONOS_SCENARIO = "car-purchase/positive"


@pytest.mark.asyncio
@pytest.mark.parametrize("name", [CHRONOS_SCENARIO, "car-purchase-shift/negative"])
async def test_chronos_resumes_from_every_cut_to_the_uninterrupted_result(name: str) -> None:
    full_events = await collect(chronos_session(name, monitor_delay_s=0))
    full = fold(full_events)
    assert len(full.section.turns) >= 3
    for cut in range(1, len(full_events) - 1):
        interrupted = fold(full_events[:cut])
        session = chronos_session(name, resume_from=interrupted, monitor_delay_s=0)
        resumed = fold(await collect(session))
        same_result(full, resumed)
        assert resumed.resumed_from["turns"] == len(interrupted.section.turns)
        assert unreplayed(session.seats.present) == {"agent": 0, "user": 0}


@pytest.mark.asyncio
async def test_chronos_resume_asks_the_live_seats_only_after_the_kept_turns() -> None:
    full_events = await collect(chronos_session(CHRONOS_SCENARIO, monitor_delay_s=0))
    judged = [i for i, e in enumerate(full_events) if e.type == "chronos.timeline_turn"]
    interrupted = fold(full_events[:judged[1] + 1])  # two complete turns
    asked: list[tuple[str, int]] = []

    class Counting(OracleAgent):
        async def reply_structured(self, request, schema, parse_text=None):
            asked.append(("agent", request.turn))
            return await super().reply_structured(request, schema, parse_text)

    session = ChronosSession(chronos_env(CHRONOS_SCENARIO), ChronosSeats(agent=Counting(), user=ScriptedPersona()),
                             ChronosSettings(monitor_delay_s=0), resume_from=interrupted)
    resumed = fold(await collect(session))
    assert asked[0] == ("agent", 3) and all(turn >= 3 for _, turn in asked)
    assert len(asked) == len(resumed.section.turns) - 2


@pytest.mark.asyncio
async def test_a_person_is_not_prompted_for_replayed_verdicts() -> None:
    """A person judging: the verdicts they gave are replayed without an AwaitingHuman (the
    headless stdin reader would otherwise take their next line for a replayed one)."""
    settings = ProactiveBenchSettings(max_events=3)
    person = HumanParticipant()
    for line in ("a fine", "r no", "a"):
        person.submit(line)
    full_events = await collect(ProactiveBenchSession(pb_env(), ProactiveBenchSeats(agent=pb_seats().agent, user=person), settings))
    full = fold(full_events)
    cut = next(i for i, e in enumerate(full_events) if e.type == "proactivebench.proposal_metrics" and e.index == 2) + 1
    again = HumanParticipant()
    again.submit("a")
    session = ProactiveBenchSession(pb_env(), ProactiveBenchSeats(agent=pb_seats().agent, user=again), settings,
                                    resume_from=fold(full_events[:cut]))
    events = await collect(session)
    asked = [e.turn for e in events if e.type == "awaiting_human"]
    assert asked == [3]
    same_result(full, fold(events))
    assert isinstance(session.seats.user, ReplaySeat)


class TypingPerson(ScriptedPersona):
    """A person in the user seat who types what the brief asks for, with the commands where they
    apply (/shift, /confirm, /dormant once a reminder is set): the replayed commands come back
    from the record, not from the text the user saw."""

    def __init__(self) -> None:
        super().__init__(label="person")
        from proactive_tui.core.events import SeatInfo

        self.info = SeatInfo(kind="human", label="person")
        self.asked: list[int] = []

    async def reply(self, request):
        self.asked.append(request.turn)
        b = self.session.current_brief
        if b.situation == "waiting" and self.session.state.reminder_active:
            text = "/dormant"
        elif b.situation == "shift":
            text = "/shift"
        elif b.situation == "offer_meets":
            text = "/confirm lovely"
        else:
            text = (await super().reply(request)).text
        from proactive_tui.core.participants import Reply

        return Reply(text=text, model="person")


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["car-purchase-shift/positive", "car-purchase/negative"])
async def test_chronos_resume_replays_a_persons_commands(name: str) -> None:
    def make(resume_from=None):
        person = TypingPerson()
        session = ChronosSession(chronos_env(name), ChronosSeats(agent=OracleAgent(), user=person),
                                 ChronosSettings(monitor_delay_s=0), resume_from=resume_from)
        return session, person

    session, person = make()
    full_events = await collect(session)
    full = fold(full_events)
    assert person.asked, "the person was asked"
    if "shift" in name:  # /shift and /confirm were typed, and must come back as commands
        assert [t.user_read_as for t in full.section.turns if t.user_read_by == "command"] == ["shift", "confirm"]
    for cut in range(1, len(full_events) - 1):
        interrupted = fold(full_events[:cut])
        kept = len(interrupted.section.turns)
        session, person = make(resume_from=interrupted)
        events = await collect(session)
        same_result(full, fold(events))
        assert all(turn > kept for turn in person.asked), f"cut {cut}: asked again for a kept turn"
        assert all(e.turn > kept for e in events if e.type == "awaiting_human"), f"cut {cut}"
