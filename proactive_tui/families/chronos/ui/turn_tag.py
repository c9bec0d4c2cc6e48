"""Under an agent message in the transcript: the action it took (and status, trigger), with a check
or cross against the oracle's expectation and, when wrong, what was expected and why; and, when
the message it answers was read (a reply to an offer, the shift), how and by what (the judge and
its reasoning, the keyword check, the person's command)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from proactive_tui.textsafe import plain


class TurnTag(Static):
    def __init__(self, outcome: Any, **kwargs: Any) -> None:
        ok = outcome.action_correct and outcome.status_correct
        self.outcome = outcome
        # The text is known up front: give it to Static now. Set in on_mount instead, the height
        # measured while empty could stick (a 1-row tag), and the transcript's scroll height with it.
        super().__init__(self.render_text(), classes="turn-tag " + ("turn-ok" if ok else "turn-bad"), **kwargs)

    def render_text(self) -> Text:
        o = self.outcome
        text = Text()
        if o.reply is None:
            text.append(f"⤷ no valid reply after {o.asks} tries", style="bold")
        else:
            trigger = o.reply.trigger_condition
            text.append(f"⤷ {o.action} / {o.status}", style="bold")
            if trigger.value:
                text.append(f" · watch {trigger.type or 'EVENT'}: {plain(trigger.value)}")
            if not o.delivered:
                text.append(" · not shown to the user", style="italic")
            if o.asks > 1:
                text.append(f" · re-asked {o.asks - 1}×")
        text.append(f"  ·  action {'✓' if o.action_correct else '✗'} status {'✓' if o.status_correct else '✗'}")
        if not (o.action_correct and o.status_correct):
            text.append(f"\n  expected {'|'.join(o.acceptable_actions)} / {o.expected_status}: {plain(o.why)}", style="italic")
        if o.user_read_by:
            from proactive_tui.families.chronos.report import read_by

            text.append(f"\n  the user's message was read as {o.user_read_as} {plain(read_by(o))}", style="dim")
        if o.task_reset is False:
            text.append("\n  ✗ COMPLETE_TASK kept intention/constraints (they should be null)", style="bold")
        if o.critical:
            text.append(f"\n  ✗ {o.critical.replace('_', ' ')}", style="bold")
        return text
