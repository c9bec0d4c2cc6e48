"""The headless session printer behind `proactive-tui run`.

Streams each message as it arrives (speaker and turn labelled), prints a one-line judge verdict
after each turn, and ends with a score table. Model text is printed as plain text: escape
sequences are stripped and Rich never parses it as markup.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from proactive_tui.textsafe import plain


class SetupError(Exception):
    pass


SPEAKER_STYLE = {"agent": "bold cyan", "user": "bold green"}


class HeadlessRun:
    def __init__(self, spec: Any, env: Any, out: str | None, quiet: bool) -> None:
        self.spec = spec
        self.env = env
        self.out = Path(out) if out else None
        self.quiet = quiet
        self.console = Console(highlight=False, soft_wrap=True)
        self.err = Console(stderr=True, highlight=False)
        self.interrupted = False
        # Judge verdicts for turn n can arrive while turn n+1's agent message is streaming
        # (the engine overlaps them); they are held back until that message line is finished.
        self.streaming: str | None = None
        self.held: list[Text] = []

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "HeadlessRun":
        from proactive_tui.config import ConfigError, load_config
        from proactive_tui.engine.factory import SessionSpec
        from proactive_tui.envs import load_default
        from proactive_tui.llm.settings import resolve_roles

        try:
            config = load_config()
        except ConfigError as exc:
            raise SetupError(str(exc)) from None
        envset = load_default(list(config.envs) + list(args.envs or []))
        env = envset.get(args.env_id)
        if env is None:
            raise SetupError(f"no environment with id {args.env_id!r} (see `proactive-tui envs list`)")
        if env.family != "proactiveeval":
            raise SetupError(f"{env.family} sessions are not available in `run` yet")
        human_user = (args.user or "").lower() == "human"
        cli: dict[str, dict[str, Any]] = {}
        for role, model in (("agent", args.agent), ("user", None if human_user else args.user), ("judge", args.judge)):
            cli[role] = {"model": model, "api_base": args.api_base}
        roles = resolve_roles(config.roles, cli=cli)  # type: ignore[arg-type]
        settings = {k: v for k, v in {
            "max_turns": args.max_turns, "memory_turns": args.memory_turns, "agreeableness": args.agreeableness,
            "seed": args.seed,
        }.items() if v is not None}
        settings["planning"] = not args.no_planning
        settings["guide_with"] = "own_plan" if args.own_plan else "reference"
        settings["live_judging"] = bool(args.live)
        seats = {"agent": "model", "user": "human" if human_user else "model", "judge": "model"}
        try:
            spec = SessionSpec(env_id=env.id, roles=roles, seats=seats, settings=settings)
            from proactive_tui.engine.protocols.guidance import GuidanceSettings

            GuidanceSettings(**settings)
        except Exception as exc:
            raise SetupError(f"invalid settings: {exc}") from None
        return cls(spec, env, args.out, args.quiet)

    def _announce_models(self) -> None:
        from proactive_tui.llm.local_model import LOCAL_MODEL_BLURB

        roles = self.spec.models_summary()
        line = ", ".join(f"{seat}: {info['model']}" for seat, info in roles.items())
        self.err.print(Text(f"{self.env.id}  [{line}]", style="dim"))
        if any(info["model"].startswith("local/") for info in roles.values()):
            self.err.print(Text(f"local/smollm2 is {LOCAL_MODEL_BLURB}", style="yellow"))

    async def main(self) -> int:
        from proactive_tui.engine.factory import build_session
        from proactive_tui.engine.run_record import RunRecordBuilder
        from proactive_tui.llm.gateway import Gateway

        self._announce_models()
        session = build_session(self.spec, self.env, Gateway())
        builder = RunRecordBuilder()
        loop = asyncio.get_running_loop()

        def on_sigint() -> None:
            self.interrupted = True
            session.stop()

        try:
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        except (NotImplementedError, RuntimeError):
            pass
        stdin_task: asyncio.Task[Any] | None = None
        try:
            async for event in session.events():
                builder.apply(event)
                if event.type == "awaiting_human":
                    stdin_task = asyncio.create_task(self._read_human(session, event))
                self._show(event)
        finally:
            if stdin_task and not stdin_task.done():
                stdin_task.cancel()
            try:
                loop.remove_signal_handler(signal.SIGINT)
            except (NotImplementedError, RuntimeError):
                pass
        record = builder.record
        if record is not None:
            self._summary(record)
            if self.out:
                self.out.parent.mkdir(parents=True, exist_ok=True)
                self.out.write_text(record.model_dump_json(indent=2), encoding="utf-8")
                self.err.print(Text(f"run record written to {self.out}", style="dim"))
        if self.interrupted:
            return 130
        reason = record.termination.reason if record and record.termination else "error"
        return 1 if reason == "error" else 0

    async def _read_human(self, session: Any, event: Any) -> None:
        human = session.seats.get(event.seat)
        self.console.print(Text(f"\n[turn {event.turn}] you ({event.seat})> ", style=SPEAKER_STYLE.get(event.seat, "bold")), end="")
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:  # EOF: the person is done
            human.stop()
        else:
            human.submit(line.rstrip("\n"))

    def _note(self, text: Text) -> None:
        if self.streaming:
            self.held.append(text)
        else:
            self.console.print(text)

    def _release(self) -> None:
        self.streaming = None
        for text in self.held:
            self.console.print(text)
        self.held.clear()

    def _show(self, event: Any) -> None:
        if self.quiet:
            if event.type == "error":
                self.err.print(Text(plain(event.message), style="red"))
            return
        c = self.console
        t = event.type
        if t == "phase_changed":
            c.print(Text(f"— {event.phase} —", style="dim"))
        elif t == "plan_proposed":
            steps = "\n".join(f"  {i}. {plain(s)}" for i, s in enumerate(event.plan.sub_targets, 1))
            c.print(Text(f"plan ({event.plan.model}): {plain(event.plan.target)}\n{steps}"))
        elif t == "plan_scored":
            self._note(Text(f"  ⤷ plan score {event.score}/10 by {event.judge_model}: {plain(event.reasoning)}", style="magenta"))
        elif t == "message_started":
            if self.spec.seats.get(event.role) != "human":
                self.streaming = event.message_id
                c.print(Text(f"\n[turn {event.turn}] {event.role} ({event.model}): ", style=SPEAKER_STYLE[event.role]), end="")
        elif t == "message_delta":
            if not event.message_id.startswith(tuple(s + "-" for s in self.spec.human_seats)):
                c.print(Text(plain(event.text)), end="")
        elif t == "message_done":
            if event.message.partial:
                c.print(Text(" [cut off]", style="yellow"), end="")
            if self.spec.seats.get(event.message.role) != "human":
                c.print()
            self._release()
        elif t == "message_discarded":
            c.print()
            self._release()
            c.print(Text("  (the agent's next message, prepared ahead, was dropped: the target was reached)", style="dim"))
        elif t == "turn_checked":
            ch = event.check
            reached = "-" if ch.target_reached is None else ("yes" if ch.target_reached else "no")
            covered = ",".join(map(str, ch.covered_sub_targets)) or "none"
            total = len(self.env.item.sub_target)
            probes = f" · probes: {', '.join(ch.probes)}" if ch.probes else ""
            self._note(Text(
                f"  ⤷ turn {ch.turn} check ({ch.judge_model or 'no judge'}): reached {reached} · density {ch.target_density} · "
                f"covered {covered} · checklist {len(ch.cumulative_sub_targets)}/{total}{probes}", style="magenta"))
        elif t == "guidance_scored" and event.score.live:
            self._note(Text(f"  ⤷ live guidance score {event.score.overall}/10 ({event.score.judge_model})", style="magenta"))
        elif t == "retrying":
            self.err.print(Text(f"{event.seat}: Retrying ({event.attempt}/{event.max_attempts}) in {event.wait_s:.0f}s: {plain(event.reason)}", style="yellow"))
        elif t == "error":
            self.err.print(Text(f"{'error' if event.fatal else 'warning'}: {plain(event.message)}", style="red"))
        elif t == "session_ended":
            self._release()
            c.print(Text(f"\nsession ended: {event.reason}" + (f" ({plain(event.detail)})" if event.detail else ""), style="bold"))

    def _summary(self, record: Any) -> None:
        table = Table(title="scores", title_justify="left")
        table.add_column("measure")
        table.add_column("score", justify="right")
        table.add_column("by")
        p = record.planning
        table.add_row("planning", "-" if p.score is None else f"{p.score}/10", Text(p.judge_model or "-"))
        g = record.guidance
        for dim in ("effectiveness", "personalization", "tone", "engagement", "naturalness", "overall"):
            table.add_row(dim, "-" if g is None else f"{getattr(g, dim)}/10", Text(g.judge_model if g else "-"))
        checks = [c for c in record.turn_checks if c.target_reached is not None]
        total = len(self.env.item.sub_target)
        covered = len(record.turn_checks[-1].cumulative_sub_targets) if record.turn_checks else 0
        table.add_row("sub-targets covered", f"{covered}/{total}" if record.turn_checks else "-", Text(checks[-1].judge_model if checks else "-"))
        t = record.totals
        cost = "-" if t.cost is None else f"${t.cost:.4f}"
        self.console.print(table)
        self.console.print(Text(
            f"termination: {record.termination.reason if record.termination else '-'} · turns: "
            f"{len([m for m in record.messages if m.role == 'agent'])} · tokens: {t.total_tokens} · cost: {cost} · "
            f"wall time: {t.wall_time_s if t.wall_time_s is not None else '-'}s"))
