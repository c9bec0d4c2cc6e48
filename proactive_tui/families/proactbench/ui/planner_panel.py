"""Online: the Planner's plan of the latest turn, as it wrote it: whether this turn is a trigger
point (and its type), whether to stop, the triggers declared so far, and the tactical order the
user seat follows (intent, what to reveal, how to behave).

The plan tells which turn is a test and what it tests: a person playing the agent does not see it
until their reply at that turn is in (`set_hidden`). Plan text is model output: `plain` into rich
Text, never markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from proactive_tui.families.proactbench.env import MAX_TRIGGERS
from proactive_tui.textsafe import plain


def order_sections(plan: Any) -> list[tuple[str, str]]:
    """The tactical order as (heading, text) sections: the brief of the user seat."""
    order = plan.tactical_order
    reveal = "\n".join(f"• {item}" for item in order.content_payload) or "(nothing new)"
    return [("What this message is for", order.intent or "-"), ("What to bring up", reveal),
            ("How to say it", order.behavioral_directive or "-")]


class PlannerPanel(Static):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.turn: int | None = None
        self.plan: Any = None
        self.model = ""
        self.hidden: str | None = None
        self.shown = Text()

    def on_mount(self) -> None:
        self._redraw()

    def show_plan(self, turn: int, plan: Any, model: str) -> None:
        self.turn, self.plan, self.model = turn, plan, model
        self._redraw()

    def set_hidden(self, why: str | None) -> None:
        self.hidden = why
        self._redraw()

    def _redraw(self) -> None:
        self.border_title = "Planner" + (f" · turn {self.turn}" if self.turn is not None else "")
        self.border_subtitle = plain(self.model)
        self.shown = self._body()
        self.update(self.shown)

    def _body(self) -> Text:
        plan = self.plan
        if plan is None:
            return Text("no plan yet", style="dim italic")
        if self.hidden:
            return Text(self.hidden, style="italic")
        text = Text()
        if plan.is_trigger_point:
            kind = plan.evaluation_rubric.type if plan.evaluation_rubric is not None else "?"
            text.append(f"trigger point: {kind}", style="bold")
        else:
            text.append("no trigger this turn", style="dim")
        audit = plan.state_audit
        text.append(f" · {audit.previous_trigger_count}/{MAX_TRIGGERS} before", style="dim")
        if plan.stop_conversation:
            text.append(" · stop after this turn", style="bold")
        for heading, body in order_sections(plan):
            text.append(f"\n{heading}: ", style="bold")
            text.append(plain(body))
        return text
