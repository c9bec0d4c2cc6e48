"""Headless printing for ProactiveEval sessions: plan, per-turn checks, live and final scores."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from proactive_tui.cli.printers.base import EventPrinter
from proactive_tui.textsafe import plain

DIMENSIONS = ("effectiveness", "personalization", "tone", "engagement", "naturalness", "overall")


class GuidancePrinter(EventPrinter):
    @classmethod
    def settings_from_args(cls, args: Any) -> dict[str, Any]:
        from proactive_tui.engine.protocols.guidance import GuidanceSettings

        settings = {k: v for k, v in {
            "max_turns": args.max_turns, "memory_turns": args.memory_turns, "agreeableness": args.agreeableness,
            "seed": args.seed,
        }.items() if v is not None}
        settings["planning"] = not args.no_planning
        settings["guide_with"] = "own_plan" if args.own_plan else "reference"
        settings["live_judging"] = bool(args.live)
        return GuidanceSettings(**settings).model_dump()

    def show_family(self, event: Any) -> None:
        t = event.type
        if t == "plan_proposed":
            steps = "\n".join(f"  {i}. {plain(s)}" for i, s in enumerate(event.plan.sub_targets, 1))
            self.console.print(Text(f"plan ({event.plan.model}): {plain(event.plan.target)}\n{steps}"))
        elif t == "plan_scored":
            self.note(Text(f"  ⤷ plan score {event.score}/10 by {event.judge_model}: {plain(event.reasoning)}", style="magenta"))
        elif t == "turn_checked":
            ch = event.check
            reached = "-" if ch.target_reached is None else ("yes" if ch.target_reached else "no")
            covered = ",".join(map(str, ch.covered_sub_targets)) or "none"
            total = len(self.env.item.sub_target)
            probes = f" · probes: {', '.join(ch.probes)}" if ch.probes else ""
            self.note(Text(
                f"  ⤷ turn {ch.turn} check ({ch.judge_model or 'no judge'}): reached {reached} · density {ch.target_density} · "
                f"covered {covered} · checklist {len(ch.cumulative_sub_targets)}/{total}{probes}", style="magenta"))
        elif t == "guidance_scored" and event.score.live:
            self.note(Text(f"  ⤷ live guidance score {event.score.overall}/10 ({event.score.judge_model})", style="magenta"))

    def summary(self, record: Any) -> None:
        table = Table(title="scores", title_justify="left")
        table.add_column("measure")
        table.add_column("score", justify="right")
        table.add_column("by")
        p = record.planning
        table.add_row("planning", "-" if p.score is None else f"{p.score}/10", Text(p.judge_model or "-"))
        g = record.guidance
        for dim in DIMENSIONS:
            table.add_row(dim, "-" if g is None else f"{getattr(g, dim)}/10", Text(g.judge_model if g else "-"))
        checks = [c for c in record.turn_checks if c.target_reached is not None]
        total = len(self.env.item.sub_target)
        covered = len(record.turn_checks[-1].cumulative_sub_targets) if record.turn_checks else 0
        table.add_row("sub-targets covered", f"{covered}/{total}" if record.turn_checks else "-",
                      Text(checks[-1].judge_model if checks else "-"))
        t = record.totals
        cost = "-" if t.cost is None else f"${t.cost:.4f}"
        self.console.print(table)
        self.console.print(Text(
            f"termination: {record.termination.reason if record.termination else '-'} · turns: "
            f"{len([m for m in record.messages if m.role == 'agent'])} · tokens: {t.total_tokens} · cost: {cost} · "
            f"wall time: {t.wall_time_s if t.wall_time_s is not None else '-'}s"))
