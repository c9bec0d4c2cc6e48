"""The Chronos protocol as a pure state machine: who is dormant, what the agent should do, what breaks it.

`ProtocolState` holds what the protocol knows at each point (the current state of the simulated
market, the reminders, what the user has said, whether the user is dormant). The session feeds it
the user's replies and the agent's actions and asks it three questions:

- `expect(state)`: the expected-action oracle. The correct `proactive_action` for the pending agent
  turn (plus the alternatives the protocol accepts) and the correct `status`.
- `critical(state, action)`: the failure rule an action breaks, if any (it ends the task).
- `brief(state, turn)`: what the simulated user must do in its next reply.

Expected actions (docs/protocols.md#chronos), in order of precedence:

1. The user confirmed the offer (explicitly) -> COMPLETE_TASK / COMPLETED.
2. The user refused or cancelled -> FAILED_TASK / FAILED.
3. The user is dormant (the input came from the monitor) -> FOLLOW_UP if the current state meets
   the needs, else KEEP_SILENT.
4. The user just voiced the intention shift -> SET_REMINDER (one INFO_RETRIEVAL is accepted too:
   the paper calls a re-check then "not wrong").
5. An offer that fits is on the table but not yet confirmed -> NO_ACTION.
6. The agent has not looked at the market yet -> INFO_RETRIEVAL.
7. Every constraint is known (all revealed, or the shift stated them) -> SET_REMINDER.
8. Otherwise -> NO_ACTION (details are still to come).
After the user has added details or shifted, one INFO_RETRIEVAL in place of 7 or 8 is accepted
(the paper accepts one re-check after a change of situation, not a repeat right after a check).
After a tool observation (user active): 7, else 8; never FOLLOW_UP or KEEP_SILENT.

Expected status: COMPLETED after the user's confirmation, FAILED after a refusal, IN_PROGRESS once
a reminder has been set (including the turn that sets it, and the turn answering a shift), else
PENDING. Status is judged against what actually happened (a reminder the agent really set), so a
wrong action does not make every later status wrong too.

Failure rules (`critical`): premature_silence (KEEP_SILENT while the user is active),
unconfirmed_completion (COMPLETE_TASK without the user's explicit confirmation),
unwarranted_failure (FAILED_TASK without a refusal), missed_offer (not following up on a state
that meets the needs), bad_follow_up (following up on a state that does not), and
no_reminder_after_shift (anything but SET_REMINDER, or one INFO_RETRIEVAL first, in answer to the
shift). Format failures and the turn limit are the session's.

Timeline convention: `timeline[0]` is the market as the dialogue opens (what an INFO_RETRIEVAL
sees before any reminder; the paper assumes it does not meet the needs); each monitor scan moves to
the next state and sets the clock to its time. After the shift the current state stays the one
just followed up (it no longer meets the changed needs) and the next scan moves to the first state
of the shift's timeline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from proactive_tui.families.chronos import prompts
from proactive_tui.families.chronos.events import InputKind, RevealedConstraint, StateView, TimelineView, UserBrief
from proactive_tui.families.chronos.env import ChronosScenario, TimelineState

Signal = Literal["opening", "reply", "confirm", "refuse", "shift"]


class Expectation(BaseModel):
    action: str
    acceptable: list[str]
    why: str


# -- reading a user's reply ----------------------------------------------------------------------

_ACCEPT = re.compile(
    r"\bthank(s| you)?\b|\bcheers\b|\bperfect\b|\bexactly what\b|\b(that|it) works\b|\bworks for me\b|"
    r"\bsounds (good|great)\b|\bneeds (are|have been) met\b|\bmeets (all )?my needs\b|\b(i'?ll|i will) take it\b|"
    r"\b(book|buy|reserve) it\b|\bgo ahead\b|\blove it\b|\bhow (do|can) i (buy|book|purchase|apply|reserve|get|rent)\b",
    re.IGNORECASE,
)
_REFUSE = re.compile(
    r"\bnot (what i|right|suitable|good enough|interested|for me)\b|\b(doesn'?t|does not|won'?t|will not) "
    r"(work|meet|fit|suit|do)\b|\bno,? thanks?\b|\bno thank you\b|\bcancel\b|\bstop (looking|searching)\b|"
    r"\bdisappoint|\btoo (expensive|far|small|big|old|late|early|pricey|high)\b|\bnever ?mind\b|\bforget it\b|"
    r"\bover (my|the) budget\b|\bpass on\b",
    re.IGNORECASE,
)


def classify_reply(text: str) -> Literal["confirm", "refuse", "reply"]:
    """How a reply to an offer reads: a refusal cue wins over a thanks ("thanks, but no")."""
    if _REFUSE.search(text):
        return "refuse"
    if _ACCEPT.search(text):
        return "confirm"
    return "reply"


# -- the state machine ---------------------------------------------------------------------------

@dataclass
class ProtocolState:
    scenario: ChronosScenario
    clock: str = ""
    phase: Literal["initial", "shifted"] = "initial"
    index: int = 0
    shifted_from: int | None = None
    """Index of the initial state that was current when the user shifted."""
    revealed: set[str] = field(default_factory=set)
    user_replies: int = 0
    observed: bool = False
    reminder_ever: bool = False
    reminder_active: bool = False
    monitoring: bool = False
    offer: Literal["meets", "fails"] | None = None
    input_kind: InputKind = "user"
    signal: Signal | None = "opening"
    new_info: bool = False
    verdict: Literal["confirmed", "refused"] | None = None
    shifted: bool = False
    reminder_due_after_shift: bool = False
    last_action: str | None = None

    def __post_init__(self) -> None:
        if not self.clock:
            self.clock = self.scenario.start_time
        self.revealed |= {c.key for c in self.scenario.constraints if c.reveal_turn == 0}

    # -- reading ------------------------------------------------------------------------------

    @property
    def states(self) -> list[TimelineState]:
        if self.phase == "shifted" and self.scenario.intention_shift is not None:
            return self.scenario.intention_shift.timeline
        return self.scenario.timeline

    @property
    def current(self) -> TimelineState:
        return self.states[self.index]

    @property
    def global_index(self) -> int:
        return self.index + (len(self.scenario.timeline) if self.phase == "shifted" else 0)

    def current_meets(self) -> bool:
        """Whether the current state meets the needs the user has now (the shift changes them)."""
        if self.shifted and self.phase == "initial":
            return False
        return self.current.meets_needs

    @property
    def needs_known(self) -> bool:
        return self.shifted or all(c.key in self.revealed for c in self.scenario.constraints)

    @property
    def can_shift(self) -> bool:
        return self.scenario.tier == "complex" and not self.shifted

    def told(self) -> dict[str, str]:
        """The requirements the user has stated so far (all of the shift's once it is voiced)."""
        if self.shifted and self.scenario.intention_shift is not None:
            return dict(self.scenario.intention_shift.constraints)
        return {c.key: c.value for c in self.scenario.constraints if c.key in self.revealed}

    @property
    def intention(self) -> str:
        shift = self.scenario.intention_shift
        return shift.intention if self.shifted and shift is not None else self.scenario.intention

    def due_constraints(self) -> list[RevealedConstraint]:
        """Constraints the user should add in the next reply (late ones too, if a reply was skipped)."""
        if self.shifted:
            return []
        due = self.user_replies + 1
        return [RevealedConstraint(key=c.key, value=c.value) for c in self.scenario.constraints
                if c.key not in self.revealed and c.reveal_turn <= due]

    def view(self) -> TimelineView:
        states: list[StateView] = []
        initial = self.scenario.timeline
        for i, s in enumerate(initial):
            if self.phase == "initial":
                pos = "past" if i < self.index else "current" if i == self.index else "upcoming"
            else:
                pos = "past" if i <= (self.shifted_from if self.shifted_from is not None else -1) else "skipped"
            states.append(StateView(index=i, phase="initial", time=s.time, listings=list(s.listings),
                                    meets_needs=s.meets_needs, note=s.note, position=pos))  # type: ignore[arg-type]
        if self.scenario.intention_shift is not None:
            for j, s in enumerate(self.scenario.intention_shift.timeline):
                if self.phase == "shifted":
                    pos = "past" if j < self.index else "current" if j == self.index else "upcoming"
                else:
                    pos = "upcoming"
                states.append(StateView(index=len(initial) + j, phase="shifted", time=s.time, listings=list(s.listings),
                                        meets_needs=s.meets_needs, note=s.note, position=pos))  # type: ignore[arg-type]
        return TimelineView(clock=self.clock, current=self.global_index, phase=self.phase, states=states)

    # -- transitions --------------------------------------------------------------------------

    def user_replied(self, signal: Signal, revealed: list[str]) -> None:
        self.user_replies += 1
        self.revealed |= set(revealed)
        self.input_kind = "user"
        self.signal = signal
        self.new_info = bool(revealed) or signal == "shift"
        self.monitoring = False
        if signal == "confirm":
            self.verdict, self.offer = "confirmed", None
        elif signal == "refuse":
            self.verdict, self.offer = "refused", None
        elif signal == "shift":
            self.shifted, self.shifted_from, self.offer = True, self.index, None
            self.reminder_due_after_shift = True

    def agent_acted(self, action: str) -> None:
        """Protocol effects of an agent action that does not end the task."""
        was_monitoring = self.monitoring
        self.last_action = action
        if action == "SET_REMINDER":
            self.reminder_ever = self.reminder_active = True
            self.monitoring, self.offer = True, None
            self.reminder_due_after_shift = False
        elif action in ("FOLLOW_UP", "NO_ACTION"):
            if was_monitoring:
                self.offer = ("meets" if self.current_meets() else "fails") if action == "FOLLOW_UP" else None
            self.monitoring = False

    def tool_observed(self) -> None:
        self.observed, self.input_kind, self.signal, self.new_info = True, "tool_call", None, False

    def go_dormant(self) -> None:
        self.monitoring, self.offer = True, None

    def advance(self) -> bool:
        """The monitor's next scan: move to the next state; False when the timeline is used up."""
        if self.shifted and self.phase == "initial":
            self.phase, self.index = "shifted", 0
        elif self.index + 1 < len(self.states):
            self.index += 1
        else:
            return False
        self.clock = self.current.time
        self.observed, self.input_kind, self.signal, self.new_info = True, "internal_trigger", None, False
        return True


# -- the oracle ----------------------------------------------------------------------------------

def _e(action: str, why: str, also: tuple[str, ...] = ()) -> Expectation:
    return Expectation(action=action, acceptable=[action, *also], why=why)


def expect(st: ProtocolState) -> Expectation:
    """The correct action for the agent turn now pending (see the module docstring for the rules)."""
    if st.verdict == "confirmed":
        return _e("COMPLETE_TASK", "the user confirmed the needs are met")
    if st.verdict == "refused":
        return _e("FAILED_TASK", "the user refused or cancelled")
    if st.monitoring:
        if st.current_meets():
            return _e("FOLLOW_UP", "the new state meets the needs")
        return _e("KEEP_SILENT", "the new state does not meet the needs")
    recheck = ("INFO_RETRIEVAL",) if st.new_info and st.last_action != "INFO_RETRIEVAL" else ()
    if st.input_kind == "user":
        if st.signal == "shift":
            return _e("SET_REMINDER", "the user changed the need: watch for the new one", ("INFO_RETRIEVAL",))
        if st.offer == "meets":
            return _e("NO_ACTION", "an offer that fits awaits the user's explicit confirmation")
        if not st.observed:
            return _e("INFO_RETRIEVAL", "the agent has not looked at the market yet")
        if st.needs_known:
            return _e("SET_REMINDER", "the needs are fully known and nothing available fits", recheck)
        return _e("NO_ACTION", "details of the need are still to come", recheck)
    if st.needs_known:
        return _e("SET_REMINDER", "the needs are fully known and nothing available fits")
    return _e("NO_ACTION", "report what is available; details of the need are still to come")


def expected_status(st: ProtocolState, action: str | None) -> str:
    if st.verdict == "confirmed":
        return "COMPLETED"
    if st.verdict == "refused":
        return "FAILED"
    if st.reminder_ever or action == "SET_REMINDER" or (st.input_kind == "user" and st.signal == "shift"):
        return "IN_PROGRESS"
    return "PENDING"


def critical(st: ProtocolState, action: str) -> str | None:
    """The failure rule `action` breaks in this state, or None."""
    if action == "KEEP_SILENT" and not st.monitoring:
        return "premature_silence"
    if action == "COMPLETE_TASK" and st.verdict != "confirmed":
        return "unconfirmed_completion"
    if action == "FAILED_TASK" and st.verdict != "refused":
        return "unwarranted_failure"
    if st.monitoring and st.verdict is None:
        if st.current_meets() and action in ("KEEP_SILENT", "SET_REMINDER", "NO_ACTION"):
            return "missed_offer"
        if not st.current_meets() and action == "FOLLOW_UP":
            return "bad_follow_up"
    if st.reminder_due_after_shift and action != "SET_REMINDER":
        first_answer = st.input_kind == "user" and st.signal == "shift"
        if not (action == "INFO_RETRIEVAL" and first_answer):
            return "no_reminder_after_shift"
    return None


CRITICAL_TEXT = {
    "premature_silence": "kept silent while the user was waiting for an answer",
    "unconfirmed_completion": "completed the task without the user's explicit confirmation",
    "unwarranted_failure": "gave the task up although the user had not refused",
    "missed_offer": "did not follow up on a state that meets the needs",
    "bad_follow_up": "followed up on a state that does not meet the needs",
    "no_reminder_after_shift": "did not set a new reminder after the intention shift",
    "format_failure": "no valid structured reply after the re-asks",
}


def brief(st: ProtocolState, turn: int) -> UserBrief:
    """What the simulated user must do in the reply that will be the input of agent turn `turn`."""
    sc = st.scenario
    if st.verdict == "confirmed":
        return UserBrief(turn=turn, situation="confirmed", instruction=prompts.CONFIRMED_INSTRUCTION)
    if st.offer == "meets":
        if st.can_shift and sc.intention_shift is not None:
            return UserBrief(turn=turn, situation="shift", offer_meets_needs=True,
                             instruction=prompts.shift_instruction(sc.intention_shift.utterance))
        return UserBrief(turn=turn, situation="offer_meets", offer_meets_needs=True,
                         instruction=prompts.OFFER_MEETS_INSTRUCTION)
    if st.offer == "fails":
        return UserBrief(turn=turn, situation="offer_fails", offer_meets_needs=False,
                         instruction=prompts.OFFER_FAILS_INSTRUCTION)
    due = st.due_constraints()
    if due:
        return UserBrief(turn=turn, situation="details", reveal=due,
                         instruction=prompts.details_instruction([f"{c.key}: {c.value}" for c in due]))
    return UserBrief(turn=turn, situation="waiting", instruction=prompts.WAITING_INSTRUCTION)
