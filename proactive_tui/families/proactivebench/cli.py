"""Headless printing for ProactiveBench sessions: each event, the agent's proposal, the verdicts,
the running counts, and at the end the confusion matrix with the six metrics.

A metric with a zero denominator prints as upstream's 0 with the reason ("0.00% (no proposals)").
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from proactive_tui.families.proactivebench.metrics import show
from proactive_tui.cli.printer import SPEAKER_STYLE, EventPrinter
from proactive_tui.families.proactivebench.prompts import format_time
from proactive_tui.families.proactivebench.settings import ablation_label
from proactive_tui.textsafe import plain

VERDICT_STYLE = {"accepted": "green", "rejected": "red", "skipped": "yellow"}


class ProactiveBenchPrinter(EventPrinter):
    def _candidates(self) -> range:
        return range(int((self.spec.settings or {}).get("candidates") or 1))

    def show_family(self, event: Any) -> None:
        c = self.console
        t = event.type
        if t == "session_started":
            label = ablation_label(event.settings)
            temperature = (event.models.get("agent") or {}).get("temperature")
            warm = f"; agent temperature {temperature}" if temperature is not None and not self.is_human("agent") else ""
            c.print(Text(plain(f"protocol: {label or 'upstream evaluation (no verdict feedback)'}{warm}"),
                         style="yellow" if label else "dim"))
        elif t == "proactivebench.trace_observation":
            c.print(Text(plain(f"\n[event {event.index}/{event.total}] {format_time(event.time)}"), style="bold"))
            c.print(Text(plain(f"  {plain(event.event)}")))
        elif t == "proactivebench.proposal_made":
            who = Text(f"  agent ({event.model})" + (f" retry {event.attempt}" if event.attempt else "") + ": ",
                       style=SPEAKER_STYLE["agent"])
            if not event.tasks:
                who.append(Text("stays quiet (null)", style="dim"))
            elif len(event.tasks) == 1:
                who.append(Text(plain(f"proposes {plain(event.tasks[0])}")))
            else:
                who.append(Text("proposes\n" + "\n".join(f"    {i}. {plain(task)}" for i, task in enumerate(event.tasks, 1))))
            c.print(who)
            for label, value in (("purpose", event.purpose), ("thoughts", event.thoughts), ("response", event.response)):
                if value:
                    c.print(Text(plain(f"    {label}: {plain(value)}"), style="dim"))
        elif t == "proactivebench.proposal_verdict":
            line = Text(plain(f"  ⤷ user ({event.by})"), style=SPEAKER_STYLE["user"])
            if event.candidate is not None and len(self._candidates()) > 1:
                line.append(Text(plain(f" on {event.candidate + 1}"), style=SPEAKER_STYLE["user"]))
            line.append(Text(": "))
            line.append(Text(event.judgement, style=VERDICT_STYLE.get(event.judgement, "")))
            if event.thought:
                line.append(Text(plain(f" — {plain(event.thought)}"), style="dim"))
            c.print(line)
        elif t == "proactivebench.proposal_metrics":
            cf = event.confusion
            outcome = event.outcome or (f"skipped (not counted): {plain(event.format_error)}" if event.format_error
                                        else "skipped (not counted)")
            if len(event.cells) > 1:
                outcome = f"{', '.join(event.cells)} ({event.judgement})"
            c.print(Text(
                f"  = {outcome} · TP {cf.tp} FP {cf.fp} TN {cf.tn} FN {cf.fn} · F1 {show(event.metrics, 'f1')} · "
                f"accuracy {show(event.metrics, 'accuracy')}", style="magenta"))
        elif t == "awaiting_human":
            c.print(Text(plain(f"  {plain(event.hint)}"), style="yellow"))
