"""Headless printing for ProactBench sessions (`proactive-tui run proactbench/...`).

Offline: each recorded turn in one dim line (it is context, not the agent's), each trigger point
with its type and rubric, the agent's reply streamed, and the verdict with its evidence (said when
the quote is not in the reply). Online: each turn's plan, the user's message, the agent's reply,
and the verdicts as the user agent gives them. Text from the dialogue file and from models is
data: `plain` and `Text`, never markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from proactive_tui.cli.printer import SPEAKER_STYLE, EventPrinter
from proactive_tui.textsafe import plain

RESULT_STYLE = {"PASS": "green", "PARTIAL": "yellow", "FAIL": "red"}
BY_WORD = {"judge": "judge", "user_agent": "user agent", "person": "person"}


def _short(text: str, limit: int = 140) -> str:
    flat = " ".join(plain(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class ProactBenchPrinter(EventPrinter):
    def show(self, event: Any) -> None:
        if not self.quiet and event.type == "message_discarded":  # an empty agent reply, retracted
            self.console.print()
            self.release()
            self.console.print(Text(plain(f"  (dropped: {event.reason})"), style="yellow"))
            return
        super().show(event)

    def show_family(self, event: Any) -> None:
        c = self.console
        t = event.type
        if t == "session_started":
            protocol = (event.settings or {}).get("protocol", "offline")
            if protocol == "online":
                c.print(Text("protocol: online (planner, user agent and agent live; not upstream's offline "
                             "evaluation)", style="yellow"))
            else:
                c.print(Text("protocol: offline (recorded context, the judge in neutral mode)", style="dim"))
        elif t == "proactbench.recorded_turn":
            c.print(Text(plain(f"[turn {event.turn}] recorded · user: {_short(event.user_message, 90)} · "
                               f"assistant ({event.model or 'curation model'}): {_short(event.assistant_response, 90)}"),
                         style="dim"))
        elif t == "proactbench.planned":
            p = event.plan
            marks = [w for w, on in (("TRIGGER", p.is_trigger_point), ("stop", p.stop_conversation)) if on]
            self.note(Text(plain(f"\n[turn {event.turn}] plan ({event.model})" + (f" {' '.join(marks)}" if marks else "")
                                 + f": {_short(p.tactical_order.intent)}"), style="magenta"))
        elif t == "proactbench.trigger_opened":
            r = event.rubric
            c.print(Text(plain(f"\n[trigger {event.index} · turn {event.turn} · {r.type}]"), style="bold"))
            for level, criterion in r.criteria():
                c.print(Text(plain(f"  {level}: {_short(criterion)}"), style="dim"))
            if event.user_message is not None:
                line = Text(plain(f"[turn {event.turn}] user (recorded): "), style=SPEAKER_STYLE["user"])
                line.append(Text(plain(event.user_message)))
                c.print(line)
        elif t == "proactbench.trigger_judged":
            head = Text(plain(f"  ⤷ trigger {event.index} (turn {event.turn}): "), style="magenta")
            if event.result is None or event.result.counted == "SKIPPED":
                head.append(Text(plain(f"SKIPPED, not counted — {event.problem or 'no result'}"), style="yellow"))
                self.note(head)
                return
            result = event.result
            head.append(Text(result.score or "", style=RESULT_STYLE.get(result.score or "", "")))
            head.append(Text(plain(f" by {BY_WORD.get(event.judged_by, event.judged_by)} ({event.judge})"), style="magenta"))
            self.note(head)
            if result.rationale:
                self.note(Text(plain(f"    rationale: {_short(result.rationale, 300)}"), style="dim"))
            if result.evidence:
                self.note(Text(plain(f"    evidence: “{_short(result.evidence, 200)}”"), style="dim"))
            if not result.evidence.strip() and event.judged_by != "person":
                self.note(Text("    no evidence quote given", style="yellow"))
            elif event.evidence_in_reply is False:
                self.note(Text("    the evidence quote is NOT in the reply it scores", style="yellow"))
        elif t == "awaiting_human":
            c.print(Text(plain(f"  {plain(event.hint)}"), style="yellow"))
