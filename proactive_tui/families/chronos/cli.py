"""Headless printing for Chronos sessions: the clock, each observation, each agent turn with its
action and status next to the oracle's, reminders, dormancy, the shift, and the verdict.

The agent's reply is structured JSON; the printer shows its response_text as the message line and
the rest (action, status, trigger) on the judged line under it. Silent turns are shown dimmed: the
user never saw them.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

from proactive_tui.cli.printer import SPEAKER_STYLE, EventPrinter
from proactive_tui.textsafe import plain


def _response_text(content: str) -> str:
    try:
        return str(json.loads(content).get("response_text") or "")
    except (ValueError, AttributeError):
        return content


class ChronosPrinter(EventPrinter):
    def show(self, event: Any) -> None:
        # Agent replies are JSON: print their text once judged, not the raw stream.
        if not self.quiet and event.type in ("message_started", "message_delta") and (
                getattr(event, "role", None) == "agent" or str(getattr(event, "message_id", "")).startswith("agent-")):
            return
        if not self.quiet and event.type == "message_done" and event.message.role == "agent":
            return
        super().show(event)

    def _turn(self, outcome: Any) -> None:
        c = self.console
        reply = outcome.reply
        head = Text(plain(f"\n[turn {outcome.turn}] agent ({outcome.model}): "), style=SPEAKER_STYLE["agent"])
        if reply is None:
            c.print(head + Text(plain(f"no valid reply after {outcome.asks} tries: {plain(outcome.raw)}"), style="red"))
        else:
            body = plain(reply.response_text) or "(no text)"
            c.print(head + Text(body, style="" if outcome.delivered else "dim"))
            trigger = reply.trigger_condition
            extra = f" · watch {trigger.type or 'EVENT'}: {plain(trigger.value)}" if trigger.value else ""
            asks = f" · re-asked {outcome.asks - 1}×" if outcome.asks > 1 else ""
            c.print(Text(plain(f"  ⤷ {reply.proactive_action} / {reply.task_description.status}{extra}{asks}"), style="magenta"))
        mark = lambda ok: "✓" if ok else "✗"  # noqa: E731
        c.print(Text(
            f"    expected {'|'.join(outcome.acceptable_actions)} / {outcome.expected_status} "
            f"(action {mark(outcome.action_correct)}, status {mark(outcome.status_correct)}) — {outcome.why}",
            style="dim" if outcome.action_correct and outcome.status_correct else "yellow"))
        if outcome.user_read_by:
            from proactive_tui.families.chronos.report import read_by

            c.print(Text(plain(f"    user's message read as {outcome.user_read_as} ({plain(read_by(outcome))})"), style="dim"))
        if outcome.task_reset is False:
            c.print(Text("    ✗ COMPLETE_TASK kept intention/constraints (they should be null)", style="yellow"))
        if outcome.critical:
            c.print(Text(plain(f"    ✗ {outcome.critical.replace('_', ' ')}"), style="bold red"))

    def show_family(self, event: Any) -> None:
        c = self.console
        t = event.type
        if t == "chronos.timeline_advanced":
            view = event.view
            if event.cause == "shift":
                return
            state = view.states[view.current]
            label = "start" if event.cause == "start" else ("fast-forward" if event.cause == "fast_forward" else "monitor scan")
            c.print(Text(plain(f"\n⏱ {view.clock} · {label} · state {view.current + 1}/{len(view.states)} ({state.phase})"), style="bold blue"))
        elif t == "chronos.timeline_observation":
            source = "tool call" if event.source == "tool_call" else "internal trigger"
            lines = [line[2:] for line in event.content.splitlines() if line.startswith("- ")]
            c.print(Text(f"  <observation: {source} @ {event.clock}> " + " | ".join(plain(x) for x in lines), style="blue"))
        elif t == "chronos.timeline_turn":
            self._turn(event.outcome)
        elif t == "chronos.timeline_reminders":
            active = [r for r in event.reminders if r.status == "active"]
            if active:
                r = active[-1]
                c.print(Text(plain(f"  ⏰ reminder {r.id} active: {r.type or 'EVENT'}: {plain(r.value or '')}"), style="cyan"))
            else:
                c.print(Text("  ⏰ no active reminder", style="cyan"))
        elif t == "chronos.timeline_presence":
            c.print(Text(plain(f"  ({'user dormant' if event.dormant else 'user awake'}: {event.reason})"), style="dim"))
        elif t == "chronos.timeline_shift":
            c.print(Text(plain(f"  ↻ intention shift: {plain(event.intention)}"), style="bold yellow"))
        elif t == "chronos.timeline_user_brief":
            if not self.is_human("user"):
                c.print(Text(plain(f"  (user brief: {event.brief.situation})"), style="dim"))
        elif t == "chronos.timeline_outcome":
            o = event.outcome
            verdict = "n/a" if o.success is None else ("SUCCESS" if o.success else "FAILURE")
            c.print(Text(plain(f"\nverdict: {verdict} ({o.reason.replace('_', ' ')}) — {plain(o.detail)}"),
                         style="bold green" if o.success else "bold red"))
        elif t == "awaiting_human":
            c.print(Text(plain(f"  {plain(event.hint)}"), style="yellow"))
