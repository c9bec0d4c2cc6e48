"""Target planning: the agent's plan, its 1-10 score, which judge gave it, reasoning on demand.

A model agent's plan (and the judge's reasoning, which compares it with the reference) gives the
target away, so while a person plays the user the screen hides both (`set_hidden(hint)`): the score
stays, and a line says what is hidden and how to show it.

A planning call that fails for good emits only an error (no plan event), and a failed plan score
likewise; the panel then says so (`show_failed`, `show_score_failed`) instead of waiting on for a
plan or a score that will never come.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, Static

from proactive_tui.textsafe import plain


class PlanPanel(Vertical):
    score: int | None = None
    judge = ""
    plan_text = Text("waiting for the agent's plan", style="dim")
    hidden_hint: str | None = None
    """None: the plan shows; else it is hidden and this line says how to show it."""
    score_failed = False

    def compose(self) -> ComposeResult:
        yield Static(Text("planning: waiting for the agent's plan", style="dim"), id="plan-body")
        with Collapsible(title="judge reasoning", collapsed=True, id="plan-reasoning-box"):
            yield Static(Text("-"), id="plan-reasoning")

    def on_mount(self) -> None:
        self.border_title = "Planning"
        self._redraw()

    def show_plan(self, target: str, steps: list[str], model: str) -> None:
        text = Text()
        text.append("target ", style="bold")
        text.append(plain(target) + "\n")
        for i, step in enumerate(steps, 1):
            text.append(f"{i}. {plain(step)}\n")
        text.append(f"by {model}", style="dim")
        self.plan_text = text
        self._redraw()

    def show_score(self, score: int, reasoning: str, judge: str) -> None:
        self.score, self.judge = score, judge
        self.query_one("#plan-reasoning", Static).update(Text(plain(reasoning)))
        self._redraw()

    def show_failed(self, reason: str) -> None:
        """Planning failed for good: say so and why; the dialogue goes on without a plan."""
        self.plan_text = Text.assemble(("planning failed", "bold red"), f": {plain(reason)}\n",
                                       ("the dialogue goes on without a plan (nothing to score)", "dim"))
        self.border_subtitle = "failed"
        self._redraw()

    def show_score_failed(self, reason: str) -> None:
        """The plan's score could not be had: say so (the reasons go in the reasoning box)."""
        self.score_failed = True
        self.query_one("#plan-reasoning", Static).update(Text(plain(reason)))
        self._redraw()

    def show_skipped(self, why: str) -> None:
        self.plan_text = Text(plain(why), style="dim")
        self._redraw()

    def set_hidden(self, hint: str | None) -> None:
        """None shows the plan; a hint hides it (and the reasoning) behind that line."""
        self.hidden_hint = hint
        if self.is_mounted:
            self._redraw()

    def _redraw(self) -> None:
        head = Text()
        head.append("score ", style="bold")
        if self.score is None and self.score_failed:
            head.append("failed", style="bold red")
        else:
            head.append("-" if self.score is None else f"{self.score}/10", style="bold")
        if self.judge:
            head.append(f"  judge: {self.judge}", style="dim")
        body = self.plan_text if self.hidden_hint is None else Text(self.hidden_hint, style="italic")
        self.query_one("#plan-body", Static).update(Text.assemble(head, "\n", body))
        self.query_one("#plan-reasoning-box").display = self.hidden_hint is None
