"""The headless session printer behind `proactive-tui run`.

Builds the session from the command line, feeds a human seat from stdin, handles Ctrl-C and
SIGTERM alike (`timeout`, CI jobs and `docker stop` send SIGTERM: the session stops, ends as
cancelled, and the run record is still written) and writes the run record; what is printed is up to the family's printer (cli/printers/), which
shows model text as plain text (escapes stripped, never parsed as markup).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import Any

from rich.text import Text

from proactive_tui.cli.printer import SPEAKER_STYLE, EventPrinter, SafeConsole
from proactive_tui.textsafe import json_text, plain


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""Signals that stop the session the same way: it ends as cancelled and the record is written."""


class SetupError(Exception):
    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage
        """A bad command line (exit 2), not a failed set-up (exit 1)."""


class HeadlessRun:
    def __init__(self, spec: Any, env: Any, out: str | None, quiet: bool, store: bool = True,
                 resume_from: Any = None, fork: Any = None, branch: Any = None, rerun: Any = None) -> None:
        self.spec = spec
        self.fork = fork
        """A `core.fork.ForkPlan`: run a branch of a stored session (`sessions fork`)."""
        self.branch = branch
        self.rerun = rerun
        """A `core.rerun.RerunPlan`: re-run a stored session against a new agent (`sessions rerun`)."""
        self.record: Any = None
        """The session's run record once `main` returned."""
        """A `core.fork.BranchStart` when the resumed session is a branch."""
        self.store = store
        """Record the session in the session history (proactive_tui.store); `--no-store` turns it off."""
        self.resume_from = resume_from
        """A RunRecord whose complete turns the session continues from (`sessions resume`)."""
        self.env = env
        self.out = Path(out) if out else None
        self.quiet = quiet
        self.console = SafeConsole(highlight=False, soft_wrap=True)
        self.err = SafeConsole(stderr=True, highlight=False)
        self.interrupted: signal.Signals | None = None
        """The signal (SIGINT or SIGTERM) that stopped the session, if one did."""
        from proactive_tui.core import registry

        self.family = registry.get(env.family)
        printer = self.family.printer_class() or EventPrinter
        self.printer = printer(console=self.console, err=self.err, spec=spec, env=env, quiet=quiet,
                               family=self.family)

    @classmethod
    def from_args(cls, args: argparse.Namespace, extra: list[str] | None = None) -> "HeadlessRun":
        from proactive_tui.config import ConfigError, load_config
        from proactive_tui.core.spec import SessionSpec
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
        from proactive_tui.cli.family_flags import parse_family_flags
        from proactive_tui.core import registry

        family = registry.find(env.family)
        if family is None:
            raise SetupError(f"{env.family} sessions are not available: that family is not installed")
        try:
            args = parse_family_flags(family, args, list(extra or []))
        except ValueError as exc:
            raise SetupError(str(exc), usage=True) from None
        if args.judge and not family.judge_seat:
            raise SetupError(f"--judge does not apply to {family.name} sessions: they have no judge seat "
                             f"(seats: {', '.join(family.seats)})", usage=True)
        human_user = (args.user or "").lower() == "human"
        cli: dict[str, dict[str, Any]] = {}
        for role, model in (("agent", args.agent), ("user", None if human_user else args.user), ("judge", args.judge)):
            cli[role] = {"model": model, "api_base": args.api_base}
        roles = resolve_roles(config.roles, cli=cli)  # type: ignore[arg-type]
        seats = {"agent": "model", "user": "human" if human_user else "model", "judge": "model"}
        try:
            settings = family.settings_from_args(args)
            spec = SessionSpec(env_id=env.id, roles=roles, seats=seats, settings=settings)
        except Exception as exc:
            raise SetupError(f"invalid settings: {exc}") from None
        from proactive_tui.evalrun.outpath import unwritable_reason

        problem = unwritable_reason(args.out)
        if problem:
            raise SetupError(f"--out: {problem}")
        return cls(spec, env, args.out, args.quiet, store=not getattr(args, "no_store", False))

    def check_seats(self) -> None:
        """Every model seat's model string and key, before any call (llm/preflight.py): raises
        SetupError naming each seat that cannot run."""
        from proactive_tui.llm.preflight import check_seats

        problems = check_seats(self.spec, self.family.seats)
        if problems:
            lines = "\n".join(f"  {problem.render()}" for problem in problems)
            raise SetupError(f"{len(problems)} seat(s) cannot run, so the session was not started:\n{lines}")

    def _announce_models(self) -> None:
        from proactive_tui.llm.local import LOCAL_MODEL_BLURB

        roles = {seat: info for seat, info in self.spec.models_summary().items() if seat in self.family.seats}
        line = ", ".join(f"{seat}: {info['model']}" for seat, info in roles.items())
        self.err.print(Text(plain(f"{self.env.id}  [{line}]"), style="dim"))
        if any(info["model"].startswith("local/") for info in roles.values()):
            self.err.print(Text(plain(f"local/smollm2 is {LOCAL_MODEL_BLURB}"), style="yellow"))

    async def main(self) -> int:
        from proactive_tui.core.spec import build_session
        from proactive_tui.core.run_record import RunRecordBuilder
        from proactive_tui.llm.gateway import Gateway

        self._announce_models()
        if self.fork is not None:
            from proactive_tui.core.fork import build_fork

            session = build_fork(self.fork, Gateway())
        elif self.rerun is not None:
            from proactive_tui.core.rerun import build_rerun

            session = build_rerun(self.rerun, Gateway())
        else:
            session = build_session(self.spec, self.env, Gateway(), resume_from=self.resume_from, branch=self.branch)
        builder = RunRecordBuilder()
        loop = asyncio.get_running_loop()

        def on_signal(signum: signal.Signals) -> None:
            self.interrupted = self.interrupted or signum
            session.stop()

        for signum in STOP_SIGNALS:
            try:
                loop.add_signal_handler(signum, on_signal, signum)
            except (NotImplementedError, RuntimeError):
                pass
        stdin_task: asyncio.Task[Any] | None = None
        stream, store = self._event_stream(session)
        try:
            async with contextlib.aclosing(stream) as events:
                async for event in events:
                    builder.apply(event)
                    if event.type == "awaiting_human":
                        stdin_task = asyncio.create_task(self._read_human(session, event))
                    self.printer.show(event)
        finally:
            if store is not None:
                store.close()
            if stdin_task and not stdin_task.done():
                stdin_task.cancel()
            for signum in STOP_SIGNALS:
                try:
                    loop.remove_signal_handler(signum)
                except (NotImplementedError, RuntimeError):
                    pass
        record = self.record = builder.record
        if record is not None:
            self.printer.summary(record)
            recorder = getattr(self, "_recorder", None)
            if store is not None and recorder is not None and recorder.saved:
                self.err.print(Text(plain(f"saved as session {record.id} (proactive-tui sessions show {record.id})"), style="dim"))
            elif store is not None and recorder is not None:
                self.err.print(Text(f"session {record.id} was NOT saved completely in the session history: "
                                    f"{recorder.unsaved_reason or 'recording failed'}", style="yellow"))
            if self.out:
                self.out.parent.mkdir(parents=True, exist_ok=True)
                self.out.write_text(json_text(record, indent=2), encoding="utf-8")
                self.err.print(Text(plain(f"run record written to {self.out}"), style="dim"))
        if self.interrupted:
            return 128 + int(self.interrupted)  # 130 for Ctrl-C, 143 for SIGTERM, as shells report them
        reason = record.termination.reason if record and record.termination else "error"
        return 1 if reason == "error" else 0

    def _event_stream(self, session: Any) -> tuple[Any, Any]:
        """The session's events, recorded in the session store unless `--no-store` (a store that
        cannot be opened costs a warning, never the run)."""
        if not self.store:
            return session.events(), None
        from proactive_tui.store import StoreError, open_store, record_events

        def warn(message: str) -> None:
            self.err.print(Text(plain(f"warning: {message}"), style="yellow"))

        try:
            store = open_store()
        except StoreError as exc:
            warn(f"{exc}; this session will not be saved")
            return session.events(), None
        from proactive_tui.store.recorder import SessionRecorder

        self._recorder = SessionRecorder(store, self.spec, on_error=warn)
        return record_events(store, self.spec, session, recorder=self._recorder), store

    async def _read_human(self, session: Any, event: Any) -> None:
        human = session.seats.get(event.seat)
        prompt = Text(plain(f"\n[turn {event.turn}] you ({event.seat})> "), style=SPEAKER_STYLE.get(event.seat, "bold"))
        while True:
            self.console.print(prompt, end="")
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:  # EOF: the person is done
                human.stop()
                return
            if line.strip():  # a blank line is no reply: asked again (the playground's box sends none)
                human.submit(line.rstrip("\n"))
                return
