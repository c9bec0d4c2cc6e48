"""The verdict on one trigger reply, under the reply in the transcript: PASS, PARTIAL, FAIL or
SKIPPED, who gave it, the rationale and the evidence quote.

It is mounted as the reply is complete ("judging…"; online "scored with the user's next message",
as upstream's User Agent scores turn t with its message of turn t+1) and filled in when the
verdict comes. A SKIPPED trigger (the judging call failed or gave nothing usable) says why and that
it is not counted: no score is ever shown for it. The rationale and the quote are model output:
`plain` into rich Text, shown literally (a quote holding `[bold]` stays those characters).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from proactive_tui.textsafe import plain

STYLE = {"PASS": "bold green", "PARTIAL": "bold yellow", "FAIL": "bold red", "SKIPPED": "bold"}
JUDGED_BY = {"judge": "judge", "user_agent": "user agent", "person": "you"}


class VerdictCard(Static):
    def __init__(self, index: int, turn: int, kind: str, waiting: str = "judging…") -> None:
        super().__init__(classes="verdict-card verdict-waiting")
        self.index, self.turn, self.kind = index, turn, kind
        self.waiting = waiting
        self.counted: str | None = None
        """PASS, PARTIAL, FAIL or SKIPPED once the verdict came (None while waiting)."""
        self.event: Any = None

    def on_mount(self) -> None:
        self.update(self.render_text())

    def refresh_text(self) -> None:
        self.update(self.render_text())

    def show(self, event: Any) -> None:
        """The `proactbench.trigger_judged` event of this trigger."""
        self.event = event
        self.counted = event.result.counted if event.result is not None else "SKIPPED"
        self.remove_class("verdict-waiting")
        self.add_class(f"verdict-{self.counted.lower()}")
        self.update(self.render_text())

    def render_text(self) -> Text:
        head = f"trigger {self.index} · {self.kind}"
        if self.event is None:
            return Text.assemble(("verdict ", "bold"), (f"· {head} · {self.waiting}", "italic dim"))
        event = self.event
        who = JUDGED_BY.get(event.judged_by, event.judged_by)
        by = "you" if event.judged_by == "person" else f"{who} {plain(event.judge)}"
        text = Text.assemble((self.counted or "", STYLE.get(self.counted or "", "bold")), (f" · {head} · {by}", "dim"))
        result = event.result
        if result is None or self.counted == "SKIPPED":
            why = plain(event.problem) if event.problem else "no usable verdict"
            text.append(f"\nnot counted: {why}", style="italic")
            if result is not None and result.rationale:
                text.append("\n" + plain(result.rationale))
            return text
        if result.rationale:
            text.append("\n" + plain(result.rationale))
        if result.evidence:
            text.append("\nevidence: ", style="dim")
            text.append(f"“{plain(result.evidence)}”", style="italic")
            if getattr(event, "evidence_in_reply", None) is False:
                text.append("  (this quote is not in the reply)", style="bold")
        return text

    def plain_text(self) -> str:
        return self.render_text().plain
