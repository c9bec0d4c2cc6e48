"""The scripted persona: the Chronos user simulator that needs no model.

It says exactly what the user's brief asks for, in fixed words (`prompts.SCRIPTED_*`): the details
due now, the waiting line, thanks that confirm a fitting offer, a refusal of one that does not,
the scenario's own intention-shift utterance. It is the offline fallback
(`ChronosSettings.user_simulator = "scripted"`), what `eval chronos --reference` seats beside the
oracle agent, and what the tests play the user with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from proactive_tui.core.participants import Participant, Reply, ReplyRequest, _emit
from proactive_tui.families.chronos import prompts

if TYPE_CHECKING:
    from proactive_tui.families.chronos.protocol import ChronosSession


class ScriptedPersona(Participant):
    """A user that does exactly what its brief says, in fixed words (no model needed)."""

    def __init__(self, label: str = "scripted-user") -> None:
        from proactive_tui.core.events import SeatInfo

        self.info = SeatInfo(kind="scripted", label=label)
        self.session: ChronosSession | None = None

    def attach(self, session: ChronosSession) -> None:
        self.session = session

    async def reply(self, request: ReplyRequest) -> Reply:
        assert self.session is not None and self.session.current_brief is not None
        b = self.session.current_brief
        shift = self.session.scenario.intention_shift
        text = {
            "details": prompts.scripted_details([f"{c.key}: {c.value}" for c in b.reveal]),
            "waiting": prompts.SCRIPTED_WAITING,
            "offer_meets": prompts.SCRIPTED_CONFIRM,
            "offer_fails": prompts.SCRIPTED_REFUSE,
            "shift": shift.utterance if shift else prompts.SCRIPTED_CONFIRM,
            "confirmed": prompts.SCRIPTED_CONFIRMED,
        }[b.situation]
        for k, word in enumerate(text.split(" ")):
            await _emit(request.on_delta, word if k == 0 else " " + word)
        return Reply(text=text, model=self.info.label)


