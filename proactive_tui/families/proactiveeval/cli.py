"""Headless printing for ProactiveEval sessions: plan, per-turn checks, live and final scores.

A turn check judged against the agent's own plan says so, and counts its checklist out of the
plan's steps (its sub-target numbers are the plan's)."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from proactive_tui.cli.printer import EventPrinter
from proactive_tui.textsafe import plain

class ProactiveEvalPrinter(EventPrinter):
    plan_steps: list[str] | None = None

    def show_family(self, event: Any) -> None:
        t = event.type
        if t == "proactiveeval.plan_proposed":
            self.plan_steps = list(event.plan.sub_targets)
            steps = "\n".join(f"  {i}. {plain(s)}" for i, s in enumerate(event.plan.sub_targets, 1))
            self.console.print(Text(plain(f"plan ({event.plan.model}): {plain(event.plan.target)}\n{steps}")))
        elif t == "proactiveeval.plan_scored":
            self.note(Text(plain(f"  ⤷ plan score {event.score}/10 by {event.judge_model}: {plain(event.reasoning)}"), style="magenta"))
        elif t == "proactiveeval.turn_checked":
            ch = event.check
            reached = "-" if ch.target_reached is None else ("yes" if ch.target_reached else "no")
            covered = ",".join(map(str, ch.covered_sub_targets)) or "none"
            own = ch.judged_against == "own_plan" and self.plan_steps is not None
            total = len(self.plan_steps) if own and self.plan_steps is not None else len(self.env.item.sub_target)
            probes = f" · probes: {', '.join(ch.probes)}" if ch.probes else ""
            against = " · against own plan" if own else ""
            self.note(Text(
                f"  ⤷ turn {ch.turn} check ({ch.judge_model or 'no judge'}): reached {reached} · density {ch.target_density} · "
                f"covered {covered} · checklist {len(ch.cumulative_sub_targets)}/{total}{against}{probes}", style="magenta"))
        elif t == "proactiveeval.guidance_scored" and event.score.live:
            self.note(Text(plain(f"  ⤷ live guidance score {event.score.overall}/10 ({event.score.judge_model})"), style="magenta"))
