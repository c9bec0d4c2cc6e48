"""One trace event on the timeline: what the user did, the agent's proposal (or "no help needed")
with its Purpose / Thoughts on demand, and the verdict on it (by the judge model or a person).

A retry after a rejection adds another proposal and verdict under the same event; the card's
subtitle carries the event's outcome (TP / FP / TN / FN, or skipped) once it is scored; an event
the agent never answered usably says why (an agent format error) in its body.
All model text goes through `plain` into rich Text, so markup in it stays literal.
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Collapsible, Static

from proactive_tui.textsafe import plain

VERDICT_STYLE = {"accepted": "bold green", "rejected": "bold red", "skipped": "bold yellow"}
VERDICT_MARK = {"accepted": "✓", "rejected": "✗", "skipped": "–"}


def clock_time(raw: str) -> str:
    """HH:MM:SS (UTC) of an upstream unix-seconds time; the raw text when it is not one."""
    from datetime import datetime, timezone

    try:
        return f"{datetime.fromtimestamp(float(raw), tz=timezone.utc):%H:%M:%S}"
    except (TypeError, ValueError, OverflowError, OSError):
        return plain(str(raw))[:19]


class EventCard(Vertical):
    """The card of trace event `index` (1-based)."""

    def __init__(self, index: int, total: int, time: str, event: str, **kwargs) -> None:
        # The event text is a constructor child, not composed: proposals mounted before the card
        # is composed would otherwise land above it.
        super().__init__(Static(Text(plain(event)), classes="event-text"), **kwargs)
        self.index = index
        self.total = total
        self.time = time
        self.event = event
        self.outcome: str | None = None
        self.judgement: str | None = None
        self.verdicts: list[tuple[str, str, str]] = []
        """(judgement, by, thought) in arrival order."""
        self.border_title = f"event {index}/{total} · {clock_time(time)}"

    def add_proposal(self, tasks: list[str], purpose: str, thoughts: str, response: str | None, model: str,
                     attempt: int = 0, writer: str = "") -> None:
        """`writer`: who wrote the proposal when it was not the agent's model (`core.writers.speaker`:
        `you`, `person (edited)`), named on its line."""
        line = Text()
        line.append("retry " + str(attempt) + " · " if attempt else "", style="dim")
        line.append("agent ", style="bold")
        if writer:
            line.append(f"({plain(writer)}) ", style="dim")
        if not tasks:
            line.append("no help needed", style="italic")
        elif len(tasks) == 1:
            line.append("proposes: ")
            line.append(plain(tasks[0]), style="bold")
        else:
            line.append("proposes:")
            for i, task in enumerate(tasks, 1):
                line.append(f"\n  {i}. ")
                line.append(plain(task), style="bold")
        if response:
            line.append("\n“" + plain(response) + "”", style="italic")
        details = Text()
        details.append("Purpose: ", style="bold")
        details.append(plain(purpose) or "-")
        details.append("\nThoughts: ", style="bold")
        details.append(plain(thoughts) or "-")
        details.append(f"\nmodel: {plain(model)}", style="dim")
        self.mount(Static(line, classes="proposal"))
        self.mount(Collapsible(Static(details, classes="reasoning"), title="Purpose · Thoughts", collapsed=True,
                               classes="proposal-details"))

    def add_verdict(self, judgement: str, by: str, thought: str, candidate: int | None = None, many: bool = False) -> None:
        self.verdicts.append((judgement, by, thought))
        line = Text()
        line.append(f"{VERDICT_MARK.get(judgement, '?')} {judgement}", style=VERDICT_STYLE.get(judgement, ""))
        if many and candidate is not None:
            line.append(f" (task {candidate + 1})")
        line.append(f" by {plain(by)}", style="dim")
        if thought:
            line.append(" — ")
            line.append(plain(thought), style="italic")
        self.mount(Static(line, classes=f"verdict verdict-{judgement}"))

    def add_format_error(self, reason: str) -> None:
        """The agent gave no usable reply (`ProposalMetricsUpdated.format_error`): said on the card,
        so a skipped event never reads as the agent staying quiet."""
        line = Text("✗ ", style="bold yellow")
        line.append(plain(reason), style="yellow")
        self.mount(Static(line, classes="format-error"))

    def set_outcome(self, outcome: str | None, judgement: str) -> None:
        self.outcome, self.judgement = outcome, judgement
        self.border_subtitle = f"{outcome} · {judgement}" if outcome else "skipped: not counted"
        self.add_class(f"outcome-{(outcome or 'skipped').lower()}")

    def plain_text(self) -> str:
        return f"{self.border_title}\n{plain(self.event)}"
