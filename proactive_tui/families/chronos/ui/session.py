"""The Chronos session screen: the transcript (dialogue, observations, each agent turn tagged with
its action and the oracle's check), the timeline (clock, states, reminders), the agent's task as it
stands, the per-turn checks and the verdict.

Engine events are consumed by one worker and folded into the run record as they arrive, exactly as
on the ProactiveEval screen. While the user is dormant, f fast-forwards the monitor (with the manual
monitor nothing moves until then). A person playing the user replies in the compose box or sends a
command with a key or button (d dormant, v shift, y confirm, n refuse); a person playing the agent
fills in the action form.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from proactive_tui.core.spec import SessionSpec
from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.session_base import SessionScreenBase
from proactive_tui.families.chronos.ui.action_form import ActionForm
from proactive_tui.ui.widgets.compose_box import ComposeBox
from proactive_tui.ui.widgets.context_card import ContextCard
from proactive_tui.ui.widgets.key_bar import KeyBar
from proactive_tui.families.chronos.ui.observation_note import ObservationNote
from proactive_tui.ui.widgets.status_line import StatusLine
from proactive_tui.families.chronos.ui.task_panel import TaskPanel
from proactive_tui.families.chronos.ui.timeline_panel import TimelinePanel, short_time
from proactive_tui.families.chronos.ui.timeline_turns import TimelineTurns
from proactive_tui.families.chronos.ui.timeline_verdict import TimelineVerdict
from proactive_tui.ui.widgets.title_bar import TitleBar
from proactive_tui.ui.widgets.transcript import Transcript
from proactive_tui.families.chronos.ui.turn_tag import TurnTag
from proactive_tui.families.chronos.ui.user_controls import UserControls

ENDED_TEXT = {
    "task_completed": "the agent completed the task",
    "task_failed": "the task failed",
    "derailed": "a critical mistake ended the task",
    "timeline_exhausted": "the timeline ran out",
    "max_turns": "the turn limit was reached",
    "user_stopped": "you left the session",
    "cancelled": "stopped",
    "error": "stopped by an error",
}
CAUSE = {"start": "start", "monitor": "monitor scan", "fast_forward": "fast-forward", "shift": "intention shift"}


def response_text(content: str) -> str:
    """An agent message's content is the reply as JSON: the person reads its response_text."""
    try:
        return str(json.loads(content).get("response_text") or "")
    except (ValueError, AttributeError):
        return content


class ChronosSessionScreen(SessionScreenBase):
    HELP_TITLE = "Chronos session"
    ENDED_TEXT = ENDED_TEXT
    CSS_PATH = Path(__file__).with_name("session.tcss")
    BINDINGS = [
        Binding("f", "fast_forward", "Fast-forward", tooltip="The monitor's next scan now (the user is dormant)"),
        Binding("d", "user_command('/dormant')", "Dormant", tooltip="As the user: don't answer; time passes"),
        Binding("v", "user_command('/shift')", "Shift", tooltip="As the user: voice the change of plans"),
        Binding("y", "user_command('/confirm')", "Confirm", tooltip="As the user: the offer meets your needs"),
        Binding("n", "user_command('/refuse')", "Refuse", tooltip="As the user: turn it down / cancel"),
        Binding("a", "autoplay", "Auto", tooltip="Auto-play: run turns without stopping"),
        Binding("s", "step", "Step", tooltip="Run one more agent turn, then hold"),
        Binding("p", "pause", "Pause", tooltip="Hold before the next agent turn"),
        Binding("x", "stop", "Stop", tooltip="Stop now"),
        Binding("R", "restart", "Restart", tooltip="Start again with the same settings"),
        Binding("j", "toggle_panel", "Panels", show=False, tooltip="Show or hide the side panels"),
        Binding("t", "toggle_spoilers", "Spoilers", show=False, tooltip="Show or hide which state meets the needs"),
        Binding("c", "copy_transcript", "Copy", show=False, tooltip="Copy the transcript to the clipboard (OSC 52)"),
        Binding("e", "show_errors", "Errors", show=False, tooltip="Details of the errors so far"),
        Binding("ctrl+d", "end_conversation", "Leave", priority=True, tooltip="As a player: leave the session"),
        Binding("escape", "back", "Back", tooltip="Back to the picker (stops a running session)"),
    ]

    def __init__(self, env: Any, spec: SessionSpec, session_factory: Any = None) -> None:
        """`session_factory(spec, env)` -> (session, seats) replaces the model-backed default."""
        super().__init__(env, spec, session_factory)
        self.turn_limit = spec.settings.get("max_turns") or env.scenario.turn_limit
        self.manual_monitor = "monitor_delay_s" in spec.settings and spec.settings["monitor_delay_s"] is None
        self.agent_messages: dict[str, str] = {}
        """message id -> the turn's raw reply (agent messages show their response_text)."""

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="session-body"):
            with Vertical(id="session-main"):
                if self.human_seat:
                    yield self._context_card()
                yield Transcript(id="transcript")
                if self.human_seat == "user":
                    yield Static("", id="user-hint")
                    yield UserControls(self.env.scenario.intention_shift is not None, id="user-controls", disabled=True)
                    yield ComposeBox(id="compose", disabled=True)
                elif self.human_seat == "agent":
                    yield Static("", id="agent-hint")
                    yield ActionForm(id="action-form", disabled=True)
            with VerticalScroll(id="timeline-side"):
                yield TimelineVerdict(id="timeline-verdict", classes="panel")
                yield TimelinePanel(spoilers=self.human_seat is None, id="timeline-panel", classes="panel")
                yield TaskPanel(id="task-panel", classes="panel")
                yield TimelineTurns(id="timeline-turns", classes="panel")
        yield StatusLine(self.turn_limit, id="status")
        yield KeyBar()

    def _context_card(self) -> ContextCard:
        sc = self.env.scenario
        if self.human_seat == "user":
            told = "\n".join(f"{c.key}: {c.value}" + (f" (say it from turn {c.reveal_turn})" if c.reveal_turn else "")
                             for c in sc.constraints)
            sections = [("You are", sc.persona), ("What you want", sc.intention), ("Your needs", told)]
            hidden = [("Your change of plans (voice it with v when told)", sc.intention_shift.utterance)] if sc.intention_shift else []
            return ContextCard("Persona card (what the simulated user is told)", sections, hidden, id="context-card")
        sections = [
            ("Your job", "Keep the user's task over time: find out the need, check the market (INFO_RETRIEVAL), "
                         "set a reminder, keep silent on states that do not fit, follow up on one that does, and "
                         "complete only once the user confirms."),
        ]
        return ContextCard("Agent context card", sections, id="context-card")

    def on_mount(self) -> None:
        self.app.sub_title = f"{self.env.id} · " + " · ".join(
            f"{seat}: {'you' if kind == 'human' else self.spec.roles.for_role(seat).model}"
            for seat, kind in self.spec.seats.items() if seat in ("agent", "user")
        )
        self.query_one("#timeline-side").border_title = ""
        if self._any_local_model(("agent", "user")):
            from proactive_tui.llm.local import LOCAL_MODEL_BLURB

            self.transcript.note(f"local/smollm2 is {LOCAL_MODEL_BLURB}", kind="system")
        self.run_session()

    # -- showing events (the worker is SessionScreenBase.run_session) ----------------------

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    def _mount_note(self, widget: Widget) -> None:
        transcript = self.transcript
        follow = transcript.at_bottom
        transcript.mount(widget)
        transcript._follow(follow)

    def _speaker(self, role: str, model: str) -> str:
        return "you" if self.spec.seats.get(role) == "human" else model

    def apply(self, event: Any) -> None:
        status = self.query_one(StatusLine)
        t = event.type
        if t == "message_started":
            self.transcript.start_message(event.message_id, event.role, event.turn, self._speaker(event.role, event.model))
            if event.role == "agent":
                status.set(turn=max(status.turn, event.turn), retry="", activity="agent is thinking…")
            else:
                status.set(retry="", activity="the user is typing…")
        elif t == "message_delta":
            if event.message_id.startswith("agent-"):
                return  # the agent writes JSON: its text is shown once the reply is complete
            self.transcript.append(event.message_id, event.text)
        elif t == "message_done":
            m = event.message
            content = response_text(m.content) if m.role == "agent" and not m.partial else m.content
            content = content if content.strip() else "(no text)"
            self.transcript.finish(m.id, m.role, m.turn, self._speaker(m.role, m.model), content, m.partial)
            self._update_usage()
            status.set(activity="agent next" if m.role == "user" else "")
        elif t == "chronos.timeline_advanced":
            self.query_one(TimelinePanel).show_view(event.view)
            if event.cause in ("monitor", "fast_forward"):
                state = event.view.states[event.view.current]
                self.transcript.note(f"{short_time(event.view.clock)} · {CAUSE[event.cause]} · "
                                     f"state {state.index + 1}/{len(event.view.states)}", kind="clock")
        elif t == "chronos.timeline_observation":
            self._mount_note(ObservationNote(event))
        elif t == "chronos.timeline_reminders":
            self.query_one(TimelinePanel).show_reminders(event.reminders)
        elif t == "chronos.timeline_presence":
            self.query_one(TimelinePanel).show_presence(event.dormant)
            self.transcript.note(f"{'user dormant' if event.dormant else 'user awake'}: {event.reason}", kind="presence")
            if event.dormant:
                status.set(activity="user dormant: f fast-forwards" if self.manual_monitor else "user dormant: the monitor scans")
            self.refresh_bindings()
        elif t == "chronos.timeline_shift":
            self.transcript.note(f"↻ intention shift: {event.intention}", kind="shift")
        elif t == "chronos.timeline_turn":
            o = event.outcome
            if o.reply is not None:
                self.query_one(TaskPanel).show_task(o.turn, o.reply.task_description)
                for form in self.query(ActionForm):
                    form.previous = o.reply
            self.query_one(TimelineTurns).add_outcome(o)
            view = next((v for v in reversed(list(self.transcript.views.values())) if v.role == "agent"), None)
            if view is not None and not o.delivered:
                view.add_class("silent")
            self._mount_note(TurnTag(o))
        elif t == "chronos.timeline_outcome":
            verdict = self.query_one(TimelineVerdict)
            verdict.show(event.outcome)
            verdict.display = True
            self.query_one("#timeline-side").scroll_home(animate=False)
        elif t == "chronos.timeline_user_brief":
            pass
        elif t == "awaiting_human":
            self._await_person(event)
        elif t == "session_ended":
            self._announce_end(event, self.transcript.note)
            self._set_controls(False)
            self.refresh_bindings()
        else:
            self._apply_common(event)

    # -- a person in a seat -----------------------------------------------------------------

    def _await_person(self, event: Any) -> None:
        self.awaiting = event.seat
        self.query_one(StatusLine).set(activity=f"your turn ({event.seat})")
        for hint in self.query("#user-hint, #agent-hint").results(Static):
            hint.update(Text(plain(event.hint), style="italic"))
        self._set_controls(True)
        self.refresh_bindings()

    def _set_controls(self, enabled: bool) -> None:
        for widget in self.query("#compose, #user-controls, #action-form"):
            widget.disabled = not enabled
        if enabled:
            for box in self.query(ComposeBox):
                box.focus()
            for form in self.query(ActionForm):
                form.query_one("#form-text").focus()
        else:
            for hint in self.query("#user-hint, #agent-hint").results(Static):
                hint.update("")

    def _send(self, text: str) -> bool:
        if self.awaiting is None:
            return False
        participant = self.seats.get(self.awaiting)
        if participant is None or not hasattr(participant, "submit"):
            return False
        participant.submit(text)
        self.awaiting = None
        self._set_controls(False)
        self.query_one(StatusLine).set(activity="sent")
        self.refresh_bindings()
        return True

    @on(ComposeBox.Submitted)
    def _person_spoke(self, event: ComposeBox.Submitted) -> None:
        self._send(event.text)

    @on(UserControls.Command)
    def _user_button(self, event: UserControls.Command) -> None:
        self.action_user_command(event.command)

    @on(ActionForm.Submitted)
    def _agent_form(self, event: ActionForm.Submitted) -> None:
        self._send(event.text)

    def action_user_command(self, command: str) -> None:
        if self.awaiting == "user":
            self._send(command)

    def action_end_conversation(self) -> None:
        participant = self.seats.get(self.human_seat or "")
        if participant is not None and hasattr(participant, "stop") and self.awaiting:
            participant.stop()
            self.awaiting = None
            self._set_controls(False)

    # -- controls ---------------------------------------------------------------------------

    PANEL_ID = "#timeline-side"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "fast_forward":
            return self.running and bool(getattr(self.session, "user_dormant", False))
        if action == "user_command":
            if self.human_seat != "user":
                return False
            if parameters and parameters[0] == "/shift" and self.env.scenario.intention_shift is None:
                return False
            return self.running and self.awaiting == "user"
        if action == "end_conversation":
            return self.running and self.human_seat is not None
        return super().check_action(action, parameters)

    PALETTE = (
        ("fast_forward", "Timeline: fast-forward", "Run the monitor's next scan now (the user is dormant)"),
        ("autoplay", "Session: auto-play", "Run turns without stopping"),
        ("step", "Session: step one turn", "Run one more agent turn, then hold"),
        ("pause", "Session: pause", "Hold before the next agent turn"),
        ("stop", "Session: stop", "Stop now"),
        ("restart", "Session: restart", "Start again with the same settings"),
        ("toggle_spoilers", "Timeline: show or hide which state meets the needs", "Spoilers for a player"),
        ("copy_transcript", "Copy transcript", "Copy the whole transcript to the clipboard (OSC 52)"),
        ("toggle_panel", "Toggle side panels", "Show or hide the timeline and task panels"),
        ("show_errors", "Show errors", "Details of the errors so far"),
    )

    def action_fast_forward(self) -> None:
        if self.running and self.session.fast_forward():
            self.query_one(StatusLine).set(activity="fast-forwarding the monitor…")
        self.refresh_bindings()

    def action_toggle_spoilers(self) -> None:
        self.query_one(TimelinePanel).toggle_spoilers()
        for card in self.query(ContextCard):
            card.toggle_hidden()

    def transcript_text(self) -> str:
        parts = []
        for child in self.transcript.children:
            if hasattr(child, "plain_text"):
                if getattr(child, "state", "") != "discarded":
                    parts.append(child.plain_text())
            elif isinstance(child, TurnTag):
                parts.append(child.render_text().plain)
        return f"{self.env.id}\n\n" + "\n\n".join(parts)
