"""What every family's session screen shares: the controls and the worker around a live session.

The ProactiveEval (`session.py`), Chronos (`timeline_session.py`) and ProactiveBench
(`proposals_session.py`) screens differ in layout and in how they show engine events, but drive a
session the same way: start it through the factory, fold each event into the run record
(`RunRecordBuilder`) before showing it, keep the errors for the errors modal, update tokens and cost
from the record (and count streaming chunks meanwhile, so the status line's tokens move while a
message streams), and offer the same play/pause/step/stop/restart/back controls and palette. That
part lives here once, so a fix to the controls or the worker reaches all three screens.

A fatal error leaves nothing that still claims to be under way: the moment it arrives, messages
still streaming are closed (cut off, as the record keeps them) so no "typing…" stays, and if the
event stream then ends or breaks without `session_ended`, the screen says the session stopped.

Events: `apply` shows every event type the families share (`SHARED_EVENTS`: the messages, a person
asked, the end, usage, retries, errors) the same way for all, and hands the rest to the family's
`apply_own`. Where a family shows a shared event differently it overrides a small hook, not the
dispatch: `message_begun` (the status line as a message starts), `shows_delta` (Chronos shows the
agent's JSON only once complete), `message_text` (what a finished message reads as), `message_ended`,
`message_dropped`, `await_person`, `set_seat_input` (open or close where the person types),
`session_over` (what else a family settles at the end), `end_note` and `finished_activity`. So a fix
to how a message streams or a session ends is made once, and a family's screen reads as what it adds.

A subclass supplies `compose`, `on_mount` (which calls `run_session()`, or `replay()`),
`apply_own(event)`, `transcript_text()`, its `BINDINGS`, `PALETTE` and `PANEL_ID`, and extends
`check_action` for its own actions (falling back to `super().check_action`). This class defines no
BINDINGS or CSS: Textual merges those along the class hierarchy, and each screen keeps its own.

Leaving, the same in every family and seat: esc in a text box (a compose box, a field of the agent's
form) first leaves the box (`leave_box`, bound to escape before `back`), so the session's keys work
again; esc outside a box goes back, and while the session is live (running, or waiting for a person)
it asks first (`ConfirmModal`: stop and leave, or stay). A session that ended, never started, or a
demo (which records nothing and loses nothing) is left at once.

The footer offers what works now (`check_action`): the gate's keys, stop and a seat's input keys
only while the session is live, restart and fork only once it ended.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, AsyncIterator, Callable, Iterable

from textual import work
from textual.screen import Screen
from textual.widget import Widget

from proactive_tui.core.spec import SessionSpec
from proactive_tui.core.run_record import RunRecordBuilder
from proactive_tui.core.writers import person_reply
from proactive_tui.textsafe import plain
from proactive_tui.ui.widgets.status_line import StatusLine
from proactive_tui.ui.widgets.transcript import Transcript

COMMON_ENDED_TEXT = {
    "max_turns": "the turn limit was reached",
    "user_stopped": "you left the session",
    "cancelled": "stopped",
    "error": "stopped by an error",
}
"""Reasons every family may end with, in words; a family's ENDED_TEXT says its own (and may
override these)."""

SHARED_EVENTS = frozenset({"message_started", "message_delta", "message_done", "message_discarded",
                           "awaiting_human", "session_ended", "usage_recorded", "retrying", "error"})
"""The engine events every family emits and `SessionScreenBase.apply` shows itself; a family's
screen shows only its own (`apply_own`)."""


class SessionScreenBase(Screen[None]):
    PALETTE: tuple[tuple[str, str, str], ...] = ()
    """(action, title, help text) for the command palette; offered while `check_action` allows it."""
    PANEL_ID = ""
    """The side panel that `toggle_panel` shows or hides (a CSS selector)."""
    ENDED_TEXT: dict[str, str] = {}
    """session_ended reason -> how the screen says it."""
    RECORD = True
    """Record the session into the app's store as it runs (`proactive_tui.ui.recording.recorded`)."""

    def __init__(self, env: Any, spec: SessionSpec, session_factory: Any = None, *, resume_from: Any = None,
                 fork: Any = None, branch: Any = None, rerun: Any = None,
                 replay_events: list[Any] | None = None) -> None:
        """`session_factory(spec, env)` -> (session, seats) replaces the model-backed default
        (tests seat scripted participants this way; when resuming it is also given `resume_from=`
        and `branch=`, when forking `fork=`).
        `resume_from`: the RunRecord of an interrupted session that the new one continues
        (History, `r`), for families with a `resume` part; `branch` (a `core.fork.BranchStart`)
        when that session is a branch. `fork`: a `core.fork.ForkPlan`: this screen runs a new
        branch of a stored session (`F`). `rerun`: a `core.rerun.RerunPlan`: this screen runs a
        stored session again against a new agent (History, `n`). `replay_events`: show a recorded
        session (events from the store) without starting one (`replay`), for `replayable` families;
        the controls that need a live session stay off."""
        super().__init__()
        self.replay_events = replay_events
        self._header: str | None = None
        """This screen's header line while another screen is on top (`on_screen_suspend`)."""
        self.env = env
        self.spec = spec
        self.session_factory = session_factory
        self.resume_from = resume_from
        self.fork = fork
        self.branch = branch
        self.rerun = rerun
        self.session: Any = None
        self.seats: dict[str, Any] = {}
        self.builder = RunRecordBuilder()
        self.ended: str | None = None
        self.errors: list[str] = []
        self.calls: list[Any] = []
        """The session's `model_called` events so far: what `i` (the call inspector) shows."""
        self.written: list[Any] = []
        """The replies a person wrote (`core.writers.PersonReply`): the inspector lists them among
        the calls, as written by that person, since no model call made them."""
        self.awaiting: str | None = None
        self._stream_over = False
        """The session's event stream has ended (with `session_ended` or not): nothing runs any more."""
        self._streaming: dict[str, int] = {}
        """message id -> chunks received, for messages still streaming (status line estimate)."""
        self.human_seat = next((s for s, k in spec.seats.items() if k == "human"), None)

    @property
    def turn_unit(self) -> Any:
        """The family's `TurnUnit`: what the status line, the transcript and the fork list count."""
        from proactive_tui.core import registry
        from proactive_tui.core.family import DEFAULT_TURN_UNIT

        found = registry.find(self.env.family)
        return DEFAULT_TURN_UNIT if found is None else found.turn_unit

    def unit_number(self, turn: int) -> int:
        """The `turn_unit` engine turn `turn` belongs to, from the record as folded so far."""
        from proactive_tui.core import registry

        family, record = registry.find(self.env.family), self.builder.record
        return turn if family is None or record is None else family.record.unit_number(record, turn)

    @property
    def status(self) -> StatusLine:
        return self.query_one(StatusLine)

    def _any_local_model(self, seats: Iterable[str] | None = None) -> bool:
        """Whether a model seat (of `seats`, else of all) runs the bundled local model."""
        return any(kind == "model" and self.spec.roles.for_role(seat).is_local
                   for seat, kind in self.spec.seats.items() if seats is None or seat in seats)

    def _say_seats(self, shown: Iterable[str], name: Callable[[str], str] | None = None) -> None:
        """The header line: the environment, then who sits in the `shown` seats (`name(seat)`: the
        family's word for a seat). Seats on one model are named together (`agent, user, judge:
        local/smollm2`), so a session on one model fits 80 columns; a person's seat is `you`."""
        who: dict[str, list[str]] = {}
        for seat, kind in self.spec.seats.items():
            if seat in shown:
                who.setdefault("you" if kind == "human" else self.spec.roles.for_role(seat).model, []).append(
                    name(seat) if name else seat)
        seats = " · ".join(f"{', '.join(names)}: {model}" for model, names in who.items())
        self.app.sub_title = ("replay · " if self.replaying else "") + f"{self.env.id} · {seats}"

    # -- the worker -------------------------------------------------------------------------

    async def _start(self, factory: Any) -> tuple[Any, dict[str, Any]]:
        """Create the session and its seats (a screen may pass the factory more)."""
        if self.fork is not None:
            return await factory(self.spec, self.env, fork=self.fork)
        if self.rerun is not None:
            return await factory(self.spec, self.env, rerun=self.rerun)
        if self.resume_from is not None:
            if self.branch is not None:
                return await factory(self.spec, self.env, resume_from=self.resume_from, branch=self.branch)
            return await factory(self.spec, self.env, resume_from=self.resume_from)
        return await factory(self.spec, self.env)

    def _events(self) -> contextlib.AbstractAsyncContextManager[AsyncIterator[Any]]:
        """The session's events: recorded (and closed when the worker ends) if RECORD, else as they are."""
        if self.RECORD:
            from proactive_tui.ui.recording import recorded

            return contextlib.aclosing(recorded(self.app, self.spec, self.session))
        return contextlib.nullcontext(self.session.events())

    @work(exclusive=True, group="session")
    async def run_session(self) -> None:
        from proactive_tui.ui.session_view import start_session

        status = self.status
        # Only while litellm is really being imported: once it is, a wait is the session's (a
        # server's), and the status must not blame the model layer for it.
        loading = "litellm" not in sys.modules
        status.set(activity="loading the model layer…" if loading else "starting the session…")
        from proactive_tui.ui.widgets import acp_permission

        # An agent program's permission requests (`permission = "ask"`) come to this app's modal.
        # Installed here, as a session starts, not when the app mounts: the first frame must not
        # import the ACP client (pydantic).
        acp_permission.install(self.app)
        try:
            self.session, self.seats = await self._start(self.session_factory or start_session)
        except Exception as exc:
            self._error(f"could not start the session: {exc}")
            status.set(activity="not started", finished=status.started)
            return
        status.set(activity="starting the session…", gate=self._gate_state)
        self.refresh_bindings()  # the controls depend on having a session
        broke = False
        try:
            async with self._events() as events:
                async for event in events:
                    mounting = self._show(event)
                    if mounting is not None:
                        try:
                            await mounting  # e.g. a new card exists before what belongs in it arrives
                        except Exception as exc:  # a display problem must never stop the session
                            self._display_error(exc)
        except Exception as exc:  # the session itself broke: say so rather than take the app down
            broke = True
            self._error(f"the session stopped unexpectedly: {type(exc).__name__}: {plain(str(exc))}", fatal=True)
        self._stream_over = True
        if self.ended is None:  # the stream ended without session_ended (should not happen): say so
            self._close_streaming()
            text = "stopped by an error (e: details)" if broke or self._fatal else "the session stopped"
            status.set(activity=text, finished=status.clock(), retry="")
        self.refresh_bindings()

    def _gate_state(self) -> tuple[str, int | None]:
        """For the status line: whether the session holds between turns, or will after a turn,
        and the last turn that begins before it holds (the engine's `last_to_run`)."""
        session = self.session
        if session is None or self.ended is not None:
            return "", None
        last = getattr(session, "last_to_run", None)
        if getattr(session, "holding", False):
            return "holding", last
        return ("pausing", last) if not session.auto else ("", None)

    def _show(self, event: Any) -> Any:
        """Fold the event into the run record, then show it; returns what `apply` returned."""
        self.builder.apply(event)
        if event.type == "session_started":
            self._say_branch(event)
        if event.type == "model_called":
            self.calls.append(event)
            return None
        written = person_reply(event)
        if written is not None:
            self.written.append(written)
        try:
            shown = self.apply(event)
        except Exception as exc:  # a display problem must never stop the session
            self._display_error(exc)
            return None
        self._count_streaming(event)
        return shown

    _fatal = False

    def _count_streaming(self, event: Any) -> None:
        """Keep the status line's token estimate for messages still streaming (every family's
        messages use the same three events). After the screen's own handling, so a message's
        real usage (folded in on message_done) and the end of its estimate arrive together."""
        t = event.type
        if t == "message_started":
            self._streaming[event.message_id] = 0
        elif t == "message_delta" and event.message_id in self._streaming:
            self._streaming[event.message_id] += 1
        elif t in ("message_done", "message_discarded"):
            message_id = event.message.id if t == "message_done" else event.message_id
            if self._streaming.pop(message_id, None) is None:
                return
        elif t == "session_ended":
            self._streaming.clear()
        else:
            return
        streaming = sum(self._streaming.values())
        if streaming != self.status.streaming:
            self.status.set(streaming=streaming)

    def _close_streaming(self) -> None:
        """Nothing more will come for messages still streaming: close them (cut off) so none
        keeps saying "typing…", and drop their token estimate."""
        for transcript in self.query(Transcript):
            transcript.close_open()
        self._streaming.clear()
        self.status.set(streaming=0)

    def _say_branch(self, event: Any) -> None:
        """Which branch is on screen: a branch names its parent and fork point in the header (a
        re-run, what it re-runs)."""
        if event.rerun_of:
            from proactive_tui.core.rerun import describe_rerun

            self.app.sub_title = self._header = plain(describe_rerun(event.rerun_of))
        if not event.forked_from:
            return
        from proactive_tui.core.fork import ForkedFrom, describe_fork

        forked = ForkedFrom.model_validate(event.forked_from)
        self.app.sub_title = self._header = plain(
            f"branch {event.session_id} of {forked.session_id} · {describe_fork(forked)}")

    def _display_error(self, exc: Exception) -> None:
        self.errors.append(f"display: {type(exc).__name__}: {exc}")

    def apply(self, event: Any) -> Any:
        """Show one engine event (may return an awaitable the worker waits for): a shared event
        here, any other by the family's `apply_own`."""
        t = event.type
        if t not in SHARED_EVENTS:
            return self.apply_own(event)
        if t == "message_started":
            speaker = self.speaker_for(event.role, event.model)
            self.transcript.start_message(event.message_id, event.role, event.turn, speaker)
            self.message_begun(event, speaker)
        elif t == "message_delta":
            if self.shows_delta(event):
                self.transcript.append(event.message_id, event.text)
                if self.status.retry:
                    self.status.set(retry="")
        elif t == "message_done":
            m = event.message
            self.transcript.finish(m.id, m.role, m.turn, self.speaker_for(m.role, m.model), self.message_text(m),
                                   m.partial)
            self._update_usage()
            self.message_ended(m)
        elif t == "message_discarded":
            self.message_dropped(event)
            for transcript in self.query(Transcript):
                transcript.discard(event.message_id)
        elif t == "awaiting_human":
            self.await_person(event)
        elif t == "session_ended":
            self.awaiting = None
            self.ended = event.reason  # before the seat's input closes: its placeholder says it ended
            self.set_seat_input(False)
            self.session_over(event)
            self._announce_end(event)
            self.refresh_bindings()
        elif t == "usage_recorded":
            self._update_usage()
        elif t == "retrying":
            self.status.set(retry=f"{event.seat}: Retrying {event.attempt}/{event.max_attempts} in {event.wait_s:.0f}s")
        elif t == "error":
            self._error(event.message, fatal=event.fatal)
            if event.fatal:
                self._fatal = True
                self._close_streaming()
                self.status.set(activity="stopped by an error (e: details)")
        return None

    def apply_own(self, event: Any) -> Any:
        """Show one of the family's own events (may return an awaitable the worker waits for);
        an event type a screen does not show is ignored."""
        return None

    # -- hooks: how a family shows the shared events ---------------------------------------------

    def message_begun(self, event: Any, speaker: str) -> None:
        """A message started (its view is in the transcript): by default the status line counts
        the turn and drops a retry note."""
        self.status.set(turn=max(self.status.turn, event.turn), retry="")

    def shows_delta(self, event: Any) -> bool:
        """Whether a streamed chunk is shown as it comes (else the message shows once complete)."""
        return True

    def message_text(self, message: Any) -> str:
        """What a finished message reads as in the transcript: a complete reply with no text says
        so, rather than leaving an empty bubble."""
        return message.content if message.content.strip() or message.partial else "(no text)"

    def message_ended(self, message: Any) -> None:
        """A message is complete (shown, usage counted): what the family does next."""

    def message_dropped(self, event: Any) -> None:
        """A message is discarded (a retry replaces it), before its view goes."""

    def await_person(self, event: Any) -> None:
        """The engine asks the person in `event.seat` (`awaiting_human`): open where they type."""
        self.awaiting = event.seat
        self.set_seat_input(True)

    def set_seat_input(self, enabled: bool) -> None:
        """Open or close where the person types (by default the compose box: placeholder, enabled,
        focus), also closed when the session ends."""
        from proactive_tui.ui.widgets.compose_box import ComposeBox

        for box in self.query(ComposeBox):
            box.placeholder = self.input_placeholder() if enabled else self.idle_placeholder()
            box.disabled = not enabled
            if enabled:
                box.focus()
        self.refresh_bindings()

    def input_placeholder(self) -> str:
        """The compose box's placeholder while it is the person's turn."""
        return "Write your message…"

    def idle_placeholder(self) -> str:
        """The compose box's placeholder while it is not the person's turn."""
        return "The session has ended" if self.ended is not None else "Wait for your turn…"

    def session_over(self, event: Any) -> None:
        """`session_ended` arrived (`ended` is set, the person's input closed): what else the family
        settles before the end is announced."""

    def end_note(self, text: str) -> None:
        """Where the end of the session is written: the transcript."""
        self.transcript.note(text, kind="end")

    def finished_activity(self, reason: str) -> str:
        """The status line once the session ended."""
        return f"finished: {self.ended_text(reason)}"

    def _announce_end(self, event: Any) -> None:
        """On `session_ended`: say why (`end_note`) and stop the status line's clock."""
        self.ended = event.reason
        text = self.ended_text(event.reason)
        for transcript in self.query(Transcript):
            transcript.close_open()
        self.end_note(f"Session ended: {text}" + (f" ({plain(event.detail)})" if event.detail else ""))
        status = self.status
        status.set(activity=self.finished_activity(event.reason), finished=status.clock(), retry="")

    # -- the transcript -----------------------------------------------------------------------------

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    def speaker_for(self, seat: str, model: str) -> str:
        """Who wrote a message, as the transcript names them ("you" for the person's seat)."""
        from proactive_tui.core.writers import speaker

        return speaker(model, played=self.spec.seats.get(seat) == "human")

    def mount_in_transcript(self, widget: Widget) -> None:
        """Add a widget (a note, a card) at the end of the transcript, which keeps following the
        newest line only if the person had not scrolled up."""
        transcript = self.transcript
        follow = transcript.at_bottom
        transcript.mount(widget)
        transcript._follow(follow)

    def replay(self) -> None:
        """Apply the recorded events as they were emitted; nobody is asked to type."""
        for event in self.replay_events or []:
            if event.type != "awaiting_human":
                self._show(event)
        status = self.status
        if self.ended is None:
            status.set(activity="replay: the recording ends here (the session did not finish)", finished=status.clock())
        self.refresh_bindings()

    def ended_text(self, reason: str) -> str:
        """A session_ended reason in words (an unknown code is still readable: `a_b` -> "a b")."""
        return self.ENDED_TEXT.get(reason) or COMMON_ENDED_TEXT.get(reason) or reason.replace("_", " ")

    def _update_usage(self) -> None:
        rec = self.builder.record
        if rec is not None:
            self.status.set(tokens=rec.totals.total_tokens, cost=rec.totals.cost)

    def _error(self, message: str, fatal: bool = False) -> None:
        self.errors.append(message)
        self.notify(plain(message)[:300] + "\n(e: details)", title="Error" if fatal else "Warning",
                    severity="error" if fatal else "warning", timeout=8, markup=False)

    # -- controls ---------------------------------------------------------------------------

    @property
    def replaying(self) -> bool:
        return self.replay_events is not None

    @property
    def running(self) -> bool:
        """The session is live: started, not ended, and its events still come."""
        return self.session is not None and self.ended is None and not self._stream_over

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_box":  # hidden (False) outside a box, so escape falls through to back
            return self._in_box()
        if action == "focus_compose":  # offered while it is the person's turn and they left the box
            return self.running and self.awaiting is not None and not self._in_box() \
                and self._seat_input() is not None and not self._focus_takes_enter()
        if action == "stop":
            return self.running
        if action == "autoplay":
            return self.running and self.session.paused
        if action == "pause":
            return self.running and not self.session.paused
        if action == "step":
            return self.running
        if action == "restart":
            return self.ended is not None and not self.replaying
        if action == "fork":  # from a session that ended (live or replayed): its prefix is complete
            return self._forkable() and (self.ended is not None or (self.replaying and not self.running))
        if action in ("branches", "labels"):
            return self.session_id is not None and getattr(self.app, "store", None) is not None
        return True

    @property
    def session_id(self) -> str | None:
        record = self.builder.record
        return record.id if record is not None else None

    def _forkable(self) -> bool:
        from proactive_tui.core import registry

        family = registry.find(self.env.family)
        return family is not None and family.parts.fork is not None and self.session_id is not None \
            and getattr(self.app, "store", None) is not None

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        """Command-palette entries for what can be done right now (state-aware)."""
        return [(title, help_text, getattr(self, f"action_{action}"))
                for action, title, help_text in self.PALETTE if self.check_action(action, ())]

    def action_autoplay(self) -> None:
        self.session.play()
        self.status.refresh_line()
        self.refresh_bindings()

    def action_pause(self) -> None:
        self.session.pause()
        self.status.refresh_line()
        self.refresh_bindings()

    def action_step(self) -> None:
        self.session.step()
        self.status.refresh_line()
        self.refresh_bindings()

    def action_stop(self) -> None:
        if self.running:
            self.session.stop()
            self.status.set(activity="stopping…")

    def action_restart(self) -> None:
        self.app.switch_screen(type(self)(self.env, self.spec, self.session_factory))

    def action_toggle_panel(self) -> None:
        panel = self.query_one(self.PANEL_ID)
        panel.display = not panel.display

    def transcript_text(self) -> str:
        raise NotImplementedError

    def action_copy_transcript(self) -> None:
        self.app.copy_to_clipboard(self.transcript_text())
        self.notify("Transcript copied to the clipboard", timeout=3)

    def action_inspect_calls(self) -> None:
        """What each model saw (`CallInspector`), opened at the call behind the message in focus
        (else the latest call)."""
        from proactive_tui.ui.screens.call_inspector import CallInspector

        focused_id = getattr(self.focused, "message_id", None)
        selected = next((i for i in reversed(range(len(self.calls))) if focused_id
                         and self.calls[i].message_id == focused_id and not self.calls[i].call.error), None)
        self.app.push_screen(CallInspector(self.calls, selected=selected, live=self.running, written=self.written,
                                           message_id=focused_id))

    def action_fork(self) -> None:
        """Branch this session at a reply (`ForkModal`): the branch runs in a new screen of this
        family, the original stays as it is (esc comes back to it)."""
        if not self.check_action("fork", ()):
            self.notify("A session can be forked once it ended (stop it first: x)", timeout=5)
            return
        from proactive_tui.ui.forking import open_fork_modal

        open_fork_modal(self.app, self.builder.record, self.session_factory, focused=self._focused_reply())

    def _focused_reply(self) -> tuple[int, str] | None:
        """(turn, seat) of the message in focus, if any: the reply the fork modal preselects."""
        focused_id = getattr(self.focused, "message_id", None)
        record = self.builder.record
        message = next((m for m in record.messages if m.id == focused_id), None) if focused_id and record else None
        return (message.turn, message.role) if message is not None else None

    def action_branches(self) -> None:
        """This session's fork tree (`BranchSwitcher`); the one picked opens as History opens it."""
        if self.session_id is not None:
            from proactive_tui.ui.forking import open_branches

            open_branches(self.app, self.session_id)

    def action_labels(self) -> None:
        """This session's verdicts with the person's labels (`LabelsModal`): agree, disagree, note."""
        from proactive_tui.ui.screens.labels_modal import LabelsModal

        session_id = self.session_id
        if session_id is None or getattr(self.app, "store", None) is None:
            return
        self.app.push_screen(LabelsModal(self.app.store, session_id))

    def action_show_errors(self) -> None:
        from proactive_tui.ui.screens.text_modal import TextModal

        sections = [(f"{i}", plain(e)) for i, e in enumerate(self.errors, 1)] or [("", "No errors so far.")]
        self.app.push_screen(TextModal("Errors", sections))

    def _in_box(self) -> bool:
        """Whether the focus is where a person types or picks (a compose box, a field of a form)."""
        from textual.widgets import Input, Select, TextArea

        return isinstance(self.focused, (TextArea, Input, Select))

    def _focus_takes_enter(self) -> bool:
        """Whether the focused widget has its own Enter (a button, a list): it keeps it. The
        screen's Enter (back to the box) is a priority binding only so that it moves the focus
        while the key is handled, before the keys typed behind it are routed."""
        from textual.binding import Binding

        focused = self.focused
        if focused is None:
            return False
        # its classes' BINDINGS (the public declaration Textual merges), "enter,space" expanded
        return any(binding.key == "enter" for cls in type(focused).__mro__
                   for binding in Binding.make_bindings(cls.__dict__.get("BINDINGS", ())))

    def _seat_input(self) -> Any:
        """Where the person types on their turn (enter comes back to it after esc left it): the
        compose box, when it is open."""
        from proactive_tui.ui.widgets.compose_box import ComposeBox

        return next((box for box in self.query(ComposeBox) if not box.disabled), None)

    def action_focus_compose(self) -> None:
        """Enter: back to the box, at once. `box.focus()` takes effect only after the keys already
        queued, so a reply typed fast behind Enter went to the session's keys (`x` stopped it)."""
        box = self._seat_input()
        if box is not None:
            self.set_focus(box)

    def action_leave_box(self) -> None:
        """esc in a text box: stop typing, so the session's keys work again (the transcript takes
        the focus); a second esc goes back."""
        transcripts = self.query(Transcript)
        if transcripts:
            transcripts.first().focus()
        else:
            self.set_focus(None)

    def action_back(self) -> None:
        """esc: back to where the session was opened. A live session is stopped only once the
        person says so; a demo (recording nothing, losing nothing) goes at once."""
        if self.running and self.RECORD:
            from proactive_tui.ui.screens.confirm import ConfirmModal

            kept = "The transcript is kept." if getattr(self.app, "store", None) is not None \
                else "Nothing is saved: the session store could not be opened."
            self.app.push_screen(ConfirmModal("Leave the session", f"Leave and stop this session? {kept}",
                                              yes="Stop & leave", no="Stay"), self._leave_answered)
            return
        self._leave()

    def _leave_answered(self, leave: bool | None) -> None:
        if leave and self.is_current:
            self._leave()

    def _leave(self) -> None:
        if self.running:
            self.session.stop()
        self.app.sub_title = ""
        self.app.pop_screen()

    def on_screen_suspend(self) -> None:
        """Another screen goes on top (a modal, a branch's screen, History): keep this screen's
        header line, which the other may change or clear (`_say_branch` keeps it current when the
        session names its branch meanwhile)."""
        self._header = self.app.sub_title

    def on_screen_resume(self) -> None:
        """Back on top: the header names this session again (returning from a branch, whose `esc`
        clears the header, left it blank)."""
        if self._header is not None:
            self.app.sub_title = self._header

    def on_unmount(self) -> None:
        if self.running:
            self.session.stop()
