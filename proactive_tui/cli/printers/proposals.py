"""Headless printing for ProactiveBench sessions: each event, the agent's proposal, the verdicts,
the running counts, and at the end the confusion matrix with the six metrics.

Undefined metrics (a zero denominator) print as "n/a", never as 0%.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from proactive_tui.cli.printers.base import SPEAKER_STYLE, EventPrinter
from proactive_tui.engine.metrics_proposals import METRIC_LABELS
from proactive_tui.engine.prompts_proposals import format_time
from proactive_tui.textsafe import plain

VERDICT_STYLE = {"accepted": "green", "rejected": "red", "skipped": "yellow"}


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


class ProposalPrinter(EventPrinter):
    SEATS = ("agent", "user")  # the user seat is the reward judge

    @classmethod
    def settings_from_args(cls, args: Any) -> dict[str, Any]:
        from proactive_tui.engine.protocols.proposals import ProposalSettings

        settings: dict[str, Any] = {k: v for k, v in {
            "retries": getattr(args, "retries", None), "candidates": getattr(args, "candidates", None),
            "max_events": getattr(args, "max_events", None),
        }.items() if v is not None}
        settings["feedback"] = not getattr(args, "no_feedback", False)
        return ProposalSettings(**settings).model_dump()

    def _candidates(self) -> range:
        return range(int((self.spec.settings or {}).get("candidates") or 1))

    def show_family(self, event: Any) -> None:
        c = self.console
        t = event.type
        if t == "trace_observation":
            c.print(Text(f"\n[event {event.index}/{event.total}] {format_time(event.time)}", style="bold"))
            c.print(Text(f"  {plain(event.event)}"))
        elif t == "proposal_made":
            who = Text(f"  agent ({event.model})" + (f" retry {event.attempt}" if event.attempt else "") + ": ",
                       style=SPEAKER_STYLE["agent"])
            if not event.tasks:
                who.append(Text("stays quiet (null)", style="dim"))
            elif len(event.tasks) == 1:
                who.append(Text(f"proposes {plain(event.tasks[0])}"))
            else:
                who.append(Text("proposes\n" + "\n".join(f"    {i}. {plain(task)}" for i, task in enumerate(event.tasks, 1))))
            c.print(who)
            for label, value in (("purpose", event.purpose), ("thoughts", event.thoughts), ("response", event.response)):
                if value:
                    c.print(Text(f"    {label}: {plain(value)}", style="dim"))
        elif t == "proposal_verdict":
            line = Text(f"  ⤷ user ({event.by})", style=SPEAKER_STYLE["user"])
            if event.candidate is not None and len(self._candidates()) > 1:
                line.append(Text(f" on {event.candidate + 1}", style=SPEAKER_STYLE["user"]))
            line.append(Text(": "))
            line.append(Text(event.judgement, style=VERDICT_STYLE.get(event.judgement, "")))
            if event.thought:
                line.append(Text(f" — {plain(event.thought)}", style="dim"))
            c.print(line)
        elif t == "proposal_metrics":
            cf = event.confusion
            outcome = event.outcome or "skipped (not counted)"
            c.print(Text(
                f"  = {outcome} · TP {cf.tp} FP {cf.fp} TN {cf.tn} FN {cf.fn} · F1 {pct(event.metrics.f1)} · "
                f"accuracy {pct(event.metrics.accuracy)}", style="magenta"))
        elif t == "awaiting_human":
            c.print(Text(f"  {plain(event.hint)}", style="yellow"))

    def summary(self, record: Any) -> None:
        section = record.proposals
        if section is None:
            self.console.print(Text("no events were judged"))
            return
        cf = section.confusion
        matrix = Table(title=f"confusion ({cf.events} events counted, {cf.skipped} skipped)", title_justify="left")
        matrix.add_column("proposal")
        matrix.add_column("accepted", justify="right")
        matrix.add_column("rejected", justify="right")
        matrix.add_row("task", f"TP {cf.tp}", f"FP {cf.fp}")
        matrix.add_row("null", f"TN {cf.tn}", f"FN {cf.fn}")
        self.console.print(matrix)
        table = Table(title="metrics", title_justify="left")
        table.add_column("measure")
        table.add_column(section.trace or "trace", justify="right")
        for key, label in METRIC_LABELS:
            table.add_row(label, pct(getattr(section.metrics, key)))
        table.add_row("tasks accepted", f"{cf.accepted_proposals}/{cf.proposals}")
        self.console.print(table)
        t = record.totals
        cost = "-" if t.cost is None else f"${t.cost:.4f}"
        splits = f" · splits: {', '.join(section.splits)}" if section.splits else ""
        self.console.print(Text(
            f"termination: {record.termination.reason if record.termination else '-'} · events: {len(section.events)}"
            f"{splits} · tokens: {t.total_tokens} · cost: {cost} · "
            f"wall time: {t.wall_time_s if t.wall_time_s is not None else '-'}s"))
