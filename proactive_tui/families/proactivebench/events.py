"""Events of a ProactiveBench session: what the UI, the store and the run record fold.

Per trace event the session emits, in order:

    ObservationShown -> ProposalMade -> ProposalVerdict (one per candidate, or one for null)
      [-> ProposalMade -> ProposalVerdict ...  while retries after a rejection remain]
    -> ProposalMetricsUpdated (the event's outcome and the running confusion + six metrics)

`attempt` is 0 for the first reply to an event and counts retries after it. A person judging is
announced with the common AwaitingHuman (seat "user", `turn` = the event index).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from proactive_tui.core.events import EventBase, UsageInfo
from proactive_tui.families.proactivebench.metrics import Confusion, Judgement, Metrics, Outcome


class ObservationShown(EventBase):
    type: Literal["proactivebench.trace_observation"] = "proactivebench.trace_observation"
    index: int
    """1-based position in the trace."""
    total: int
    """Events this session will show (the trace length, or fewer with max_events)."""
    time: str
    event: str


class ProposalMade(EventBase):
    type: Literal["proactivebench.proposal_made"] = "proactivebench.proposal_made"
    index: int
    attempt: int = 0
    purpose: str
    thoughts: str
    tasks: list[str] = Field(default_factory=list)
    """The proposed task(s); empty means the agent proposed nothing (null)."""
    response: str | None = None
    model: str
    usage: UsageInfo = Field(default_factory=UsageInfo)
    raw: str = ""
    """The reply as the model wrote it (after any re-asks)."""

    @property
    def task(self) -> str | None:
        return self.tasks[0] if self.tasks else None

    def person_reply(self) -> Any:
        """This proposal as `core.writers.PersonReply` when a person wrote it (None: a model's)."""
        from proactive_tui.core.writers import PersonReply, by_person

        if not by_person(self.model):
            return None
        return PersonReply(seq=self.seq, seat="agent", turn=self.index, purpose=f"event {self.index} proposal",
                           writer=self.model, text=self.raw or "; ".join(self.tasks) or "null (no help proposed)")


class ProposalVerdict(EventBase):
    type: Literal["proactivebench.proposal_verdict"] = "proactivebench.proposal_verdict"
    index: int
    attempt: int = 0
    candidate: int | None = None
    """0-based position of the judged task in ProposalMade.tasks; None when judging a null proposal."""
    task: str | None = None
    judgement: Judgement
    thought: str = ""
    by: str
    """The judge's model string, or "person"."""
    by_kind: Literal["llm", "human", "scripted"]

    def person_reply(self) -> Any:
        """This verdict as `core.writers.PersonReply` when a person gave it (None: a model's)."""
        from proactive_tui.core.writers import PersonReply, by_person

        if not by_person(self.by):
            return None
        on = f" on {self.task!r}" if self.task else " on no offer"
        return PersonReply(seq=self.seq, seat="user", turn=self.index, purpose=f"event {self.index} verdict",
                           writer=self.by, text=f"{self.judgement}{on}" + (f": {self.thought}" if self.thought else ""))


class ProposalMetricsUpdated(EventBase):
    type: Literal["proactivebench.proposal_metrics"] = "proactivebench.proposal_metrics"
    index: int
    outcome: Outcome | None
    """This event's outcome as a whole (TP/FP/TN/FN), None when it was skipped."""
    judgement: Judgement
    """The event as a whole: accepted if any verdict accepted (what an event card shows)."""
    cells: list[Outcome] = Field(default_factory=list)
    """The cells this event added, one per judged (task, verdict) pair, as upstream counts."""
    attempts: int = 1
    confusion: Confusion
    metrics: Metrics
    format_error: str = ""
    """Why the agent gave no usable reply for this event (no JSON object, none of the expected
    keys): an agent format error, so the event is not counted. Empty when it replied."""


EVENTS = (ObservationShown, ProposalMade, ProposalVerdict, ProposalMetricsUpdated)

LEGACY_TYPES = {cls.model_fields["type"].default.split(".", 1)[1]: cls.model_fields["type"].default for cls in EVENTS}
"""Event names written before the family prefix (proactive-tui 0.1 stores)."""
