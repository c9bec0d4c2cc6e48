"""The Chronos session screen: the transcript (dialogue, observations, each agent turn tagged with
its action and the oracle's check), the timeline (clock, states, reminders), the agent's task as it
stands, the per-turn checks and the verdict.

Engine events are consumed by one worker and folded into the run record as they arrive, exactly as
on the ProactiveEval screen. While the user is dormant, f fast-forwards the monitor (with the manual
monitor nothing moves until then).

A person playing the user replies in the compose box, or sends a command with a button or its ctrl
key (^l dormant, ^n shift, ^o confirm, ^r refuse). The keys are priority bindings so they act while
the compose box has focus, where a plain letter must type itself. The persona card shows what the
simulated user is told: the needs, marked as told or due as the briefs come, and after the intention
shift the new intention and needs. The hint above the buttons is the brief for this reply; it
scrolls when it is long. A person playing the agent fills in the action form, or types a whole
reply (shorthand or JSON) into its text box.

Which state meets the needs is the reference a player must not see: with a person in a seat, the
timeline panel hides it (and listings nobody was shown) until t.
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
from textual.widgets import Static

from proactive_tui.core.spec import SessionSpec
from proactive_tui.families.chronos import prompts
from proactive_tui.families.chronos.reply import AGENT_FORM_HINT
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
from proactive_tui.families.chronos.ui.user_controls import COMMANDS, UserControls, key_label

ENDED_TEXT = {
    "task_completed": "the agent completed the task",
    "task_failed": "the task failed",
    "derailed": "a critical mistake ended the task",
    "timeline_exhausted": "the timeline ran out",
    "max_turns": "the exchange limit was reached",
    "user_stopped": "you left the session",
    "cancelled": "stopped",
    "error": "stopped by an error",
}
CAUSE = {"start": "start", "monitor": "monitor scan", "fast_forward": "fast-forward", "shift": "intention shift"}
COMMAND_KEY = {name: key_label(key) for name, _, key, _ in COMMANDS}
USER_TURN = {
    "details": "your turn: add the details the hint lists",
    "waiting": "your turn: reply as the user",
    "offer_meets": f"your turn: answer the offer (Confirm {COMMAND_KEY['confirm']}, Refuse {COMMAND_KEY['refuse']})",
    "offer_fails": f"your turn: answer the offer (Refuse {COMMAND_KEY['refuse']}, Confirm {COMMAND_KEY['confirm']})",
    "shift": f"your turn: voice the change of plans (Shift {COMMAND_KEY['shift']})",
    "confirmed": "your turn: reply as the user",
}
"""The status line while a person playing the user is asked, by the brief's situation."""
FORM_HINT = "Enter sends. Whole reply as text: ACTION [STATUS]: text @EVENT condition, or JSON."
"""The agent seat's hint above the form, two lines at 80 columns (the form's labels say what each
field is; the engine's AGENT_FORM_HINT, for typed replies, is on the card)."""


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
        *[Binding(key, f"user_command('/{name}')", label, priority=True, tooltip=f"As the user: {tip}")
          for name, label, key, tip in COMMANDS],
        Binding("a", "autoplay", "Auto", tooltip="Auto-play: run turns without stopping"),
        Binding("s", "step", "Step", tooltip="Run one more agent turn, then hold"),
        Binding("p", "pause", "Pause", tooltip="Hold before the next agent turn"),
        Binding("x", "stop", "Stop", tooltip="Stop now"),
        Binding("R", "restart", "Restart", tooltip="Start again with the same settings"),
        Binding("j", "toggle_panel", "Panels", show=False, tooltip="Show or hide the side panels"),
        Binding("t", "toggle_spoilers", "Spoilers", show=False, tooltip="Show or hide which state meets the needs"),
        Binding("c", "copy_transcript", "Copy", show=False, tooltip="Copy the transcript to the clipboard (OSC 52)"),
        Binding("e", "show_errors", "Errors", show=False, tooltip="Details of the errors so far"),
        Binding("i", "inspect_calls", "Calls", show=False,
                tooltip="What each model was sent and what came back, call by call"),
        Binding("F", "fork", "Fork", tooltip="Branch the session at a reply: edit it or ask again, then run on"),
        Binding("b", "branches", "Branches", show=False, tooltip="This session's branches and how their scores differ"),
        Binding("L", "labels", "Verdicts", show=False, tooltip="The judges' verdicts: agree, disagree, note (your labels)"),
        Binding("ctrl+d", "end_conversation", "Leave", priority=True, tooltip="As a player: leave the session"),
        Binding("escape", "leave_box", "Leave the box", tooltip="Stop typing; the session's keys work again"),
        Binding("escape", "back", "Back", tooltip="Back to the picker (asks first while the session is live)"),
        Binding("enter", "focus_compose", "Type", priority=True, tooltip="Back to the box: it is your turn"),
    ]

    def __init__(self, env: Any, spec: SessionSpec, session_factory: Any = None, *, resume_from: Any = None,
                 fork: Any = None, branch: Any = None, rerun: Any = None) -> None:
        """`session_factory(spec, env)` -> (session, seats) replaces the model-backed default;
        `resume_from`: the interrupted session's RunRecord this one continues (History, `r`)."""
        super().__init__(env, spec, session_factory, resume_from=resume_from, fork=fork, branch=branch,
                         rerun=rerun)
        self.turn_limit = spec.settings.get("max_turns") or env.scenario.turn_limit
        self.manual_monitor = "monitor_delay_s" in spec.settings and spec.settings["monitor_delay_s"] is None
        self.agent_messages: dict[str, str] = {}
        """message id -> the turn's raw reply (agent messages show their response_text)."""
        self.counted_turns = 0
        """Exchanges (the family's `turn_unit`): agent turns counted against the limit, as the engine
        counts them (not those answering the agent's own INFO_RETRIEVAL): the status line's
        `exchange n/N`, and the number the transcript, fork list, compare and History give."""
        self._begun: set[int] = set()
        self._last_input = "user"
        self._dormant = False
        self._brief: Any = None
        self._commanded = False
        """The person's last reply as the user was a command (/confirm, ...): no reader reads it."""
        self._told: set[str] = {c.key for c in env.scenario.constraints if c.reveal_turn == 0}
        self._due: set[str] = set()
        self._shift: Any = None
        """The IntentionShifted event once the user changed plans (the card shows the new needs)."""

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="session-body"):
            with Vertical(id="session-main"):
                if self.human_seat:
                    yield self._context_card()
                yield Transcript(unit=self.turn_unit.name, number_of=self.unit_number, id="transcript")
                if self.human_seat == "user":
                    with VerticalScroll(id="user-hint", classes="hint"):
                        yield Static("", id="user-hint-text")
                    yield UserControls(self.env.scenario.intention_shift is not None, id="user-controls", disabled=True)
                    yield ComposeBox(placeholder="Your reply as the user (or a command: /dormant, /confirm, …)",
                                     id="compose", disabled=True)
                elif self.human_seat == "agent":
                    with VerticalScroll(id="agent-hint", classes="hint"):
                        yield Static("", id="agent-hint-text")
                    yield ActionForm(id="action-form", disabled=True)
            with VerticalScroll(id="timeline-side"):
                yield TimelineVerdict(id="timeline-verdict", classes="panel")
                yield TimelinePanel(spoilers=self.human_seat is None, id="timeline-panel", classes="panel")
                yield TaskPanel(id="task-panel", classes="panel")
                yield TimelineTurns(id="timeline-turns", classes="panel")
        yield StatusLine(self.turn_limit, unit=self.turn_unit.name, id="status")
        yield KeyBar()

    def _persona_sections(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """What the simulated user is told, as it stands: (sections, hidden part)."""
        sc = self.env.scenario
        if self._shift is not None:
            needs = "\n".join(f"{k}: {v}" for k, v in self._shift.constraints.items())
            return [("What you want now", self._shift.intention), ("Your needs now (all told)", needs),
                    ("You changed plans", self._shift.utterance), ("You are", sc.persona)], []

        def state(c: Any) -> str:
            if c.key in self._told:
                return "told"
            if c.key in self._due:
                return "say it now"
            return f"from your reply {c.reveal_turn}"

        needs = "\n".join(f"{c.key}: {c.value} ({state(c)})" for c in sc.constraints)
        sections = [("What you want", sc.intention), ("Your needs", needs), ("You are", sc.persona)]
        hidden = ([(f"Your change of plans (voice it with Shift {COMMAND_KEY['shift']} when the hint says so)",
                    sc.intention_shift.utterance)] if sc.intention_shift else [])
        return sections, hidden

    def _context_card(self) -> ContextCard:
        if self.human_seat == "user":
            sections, hidden = self._persona_sections()
            return ContextCard("Persona card (what the simulated user is told)", sections, hidden,
                               hidden_name="change of plans", id="context-card")
        sections = [
            ("Your job", "Keep the user's task over time: find out the need, check the market (INFO_RETRIEVAL), "
                         "set a reminder, keep silent on states that do not fit, follow up on one that does, and "
                         "complete only once the user confirms."),
            ("Typing a whole reply", AGENT_FORM_HINT[0].upper() + AGENT_FORM_HINT[1:]),
        ]
        return ContextCard("Agent context card", sections, id="context-card")

    def _update_persona_card(self) -> None:
        if self.human_seat != "user":
            return
        sections, hidden = self._persona_sections()
        for card in self.query(ContextCard):
            card.set_sections(sections, hidden)

    def on_resize(self) -> None:
        """Short terminals (80x24) give the transcript room: a smaller card and compose box."""
        self.set_class(self.size.height < 32, "-short")

    @property
    def _judge_reads(self) -> bool:
        """The judge seat's model reads the user's replies to offers (else the keyword check does)."""
        return self.spec.settings.get("confirmation_reader", "judge") == "judge"

    def on_mount(self) -> None:
        self._say_seats(("agent", "user", "judge") if self._judge_reads else ("agent", "user"))
        self.query_one("#timeline-side").border_title = ""
        if self._any_local_model(("agent", "user")):
            from proactive_tui.llm.local import LOCAL_MODEL_BLURB

            self.transcript.note(f"local/smollm2 is {LOCAL_MODEL_BLURB}", kind="system")
        self.run_session()

    # -- showing events (the worker is SessionScreenBase.run_session) ----------------------

    def message_begun(self, event: Any, speaker: str) -> None:
        """The status line counts agent turns (`_agent_turn_begins`), not messages."""
        status = self.status
        person = self.spec.seats.get(event.role) == "human"  # a person's message starts once it is written
        if event.role == "agent":
            self._agent_turn_begins(event.turn)
            status.set(retry="")
            if not person:
                status.set(activity="agent is thinking…")
        elif not person:
            status.set(retry="", activity="the user is typing…")

    def shows_delta(self, event: Any) -> bool:
        """The agent writes JSON: its text is shown once the reply is complete."""
        return not event.message_id.startswith("agent-")

    def message_text(self, message: Any) -> str:
        content = response_text(message.content) if message.role == "agent" and not message.partial \
            else message.content
        return content if content.strip() else "(no text)"

    def message_ended(self, message: Any) -> None:
        status = self.status
        if message.role == "user":
            self._last_input = "user"
            if message.turn > 1:  # the details the brief asked for count as told (as the engine counts them)
                self._told |= self._due
                self._due = set()
                self._update_persona_card()
            offer = getattr(self._brief, "situation", "") in ("offer_meets", "offer_fails") and message.turn > 1
            status.set(activity="the judge reads the user's reply…" if offer and self._judge_reads and not self._commanded
                       else "the agent answers next")
        else:
            status.set(activity=self._dormant_text() if self._dormant else "")

    def apply_own(self, event: Any) -> None:
        status = self.status
        t = event.type
        if t == "chronos.timeline_advanced":
            self.query_one(TimelinePanel).show_view(event.view)
            if event.cause in ("monitor", "fast_forward"):
                state = event.view.states[event.view.current]
                self.transcript.note(f"{short_time(event.view.clock)} · {CAUSE[event.cause]} · "
                                     f"state {state.index + 1}/{len(event.view.states)}", kind="clock")
        elif t == "chronos.timeline_observation":
            self._last_input = event.source
            self.query_one(TimelinePanel).show_seen(event.state_index)
            note = ObservationNote(event, where=f"{self.turn_unit.name} {self.unit_number(event.turn)}")
            self.mount_in_transcript(note)
            if note.handover and not self._dormant:
                status.set(activity="the agent checked enough in a row: the user's turn")
        elif t == "chronos.timeline_reminders":
            self.query_one(TimelinePanel).show_reminders(event.reminders)
        elif t == "chronos.timeline_presence":
            self.query_one(TimelinePanel).show_presence(event.dormant)
            self.transcript.note(f"{'user dormant' if event.dormant else 'user awake'}: {event.reason}", kind="presence")
            self._dormant = event.dormant
            if event.dormant:
                status.set(activity=self._dormant_text())
            self.refresh_bindings()
        elif t == "chronos.timeline_shift":
            self.transcript.note(f"↻ intention shift: {event.intention}", kind="shift")
            self._shift = event
            self._update_persona_card()
        elif t == "chronos.timeline_turn":
            o = event.outcome
            if o.reply is not None:
                self.query_one(TaskPanel).show_task(o.turn, o.reply.task_description,
                                                    where=f"{self.turn_unit.name} {self.unit_number(o.turn)}")
                for form in self.query(ActionForm):
                    form.carry_over(o.reply)
            self.query_one(TimelineTurns).add_outcome(o)
            view = next((v for v in reversed(list(self.transcript.views.values())) if v.role == "agent"), None)
            if view is not None and not o.delivered:
                view.add_class("silent")
            self.mount_in_transcript(TurnTag(o))
        elif t == "chronos.timeline_outcome":
            verdict = self.query_one(TimelineVerdict)
            read = [o for o in self.query_one(TimelineTurns).outcomes.values() if o.user_read_by]
            verdict.show(event.outcome, read[-1] if read else None)
            verdict.display = True
            self.query_one("#timeline-side").scroll_home(animate=False)
        elif t == "chronos.timeline_user_brief":
            self._brief = event.brief
            self._due = {c.key for c in event.brief.reveal}
            self._update_persona_card()

    # -- a person in a seat -----------------------------------------------------------------

    def _dormant_text(self) -> str:
        return "user dormant: f fast-forwards" if self.manual_monitor else "user dormant: the monitor scans"

    def _hint_text(self, event: Any) -> str:
        """The guidance for the person: the engine's hint without what the screen shows otherwise
        (the user's typed commands are the buttons and keys; the agent's typed-reply syntax is on
        the context card), and with any problem with the last attempt first."""
        hint = event.hint
        if event.seat == "user":
            for can_shift in (True, False):
                hint = hint.removesuffix(f"\n({prompts.human_commands(can_shift)})")
            return hint
        problem = hint.removesuffix(AGENT_FORM_HINT).strip()
        return f"{problem}\n{FORM_HINT}" if problem else FORM_HINT

    def _agent_turn_begins(self, turn: int) -> None:
        """Count agent turn `turn` once (a model's starts with its message, a person's when they are
        asked, maybe again after a problem), unless it answers the agent's own INFO_RETRIEVAL."""
        if turn in self._begun:
            return
        self._begun.add(turn)
        if self._last_input != "tool_call":
            self.counted_turns += 1
        self.query_one(StatusLine).set(turn=self.counted_turns)

    def await_person(self, event: Any) -> None:
        if event.seat == "agent":
            self._agent_turn_begins(event.turn)
        self.awaiting = event.seat
        if event.seat == "user":
            problem = self._brief is not None and not event.hint.startswith(self._brief.instruction)
        else:
            problem = event.hint != AGENT_FORM_HINT  # the engine put what was wrong first
        if event.seat == "user":
            situation = getattr(self._brief, "situation", "waiting")
            activity = "your turn again: see the hint" if problem else USER_TURN.get(situation, USER_TURN["waiting"])
        else:
            activity = "your reply could not be used: see the hint" if problem else "your turn: write the agent's reply"
        self.query_one(StatusLine).set(activity=activity)
        for hint in self.query("#user-hint-text, #agent-hint-text").results(Static):
            hint.update(Text(plain(self._hint_text(event)), style="italic"))
        for box in self.query(".hint"):
            box.scroll_home(animate=False)
        self.set_seat_input(True)
        self._enable_commands()
        self.refresh_bindings()

    def _enable_commands(self) -> None:
        """Commands the protocol would refuse right now are greyed (the engine still checks)."""
        state = getattr(self.session, "state", None)
        for name, allowed in (("dormant", bool(getattr(state, "reminder_active", True))),
                              ("shift", bool(getattr(state, "can_shift", True)))):
            for button in self.query(f"#cmd-{name}"):
                button.disabled = not allowed

    def set_seat_input(self, enabled: bool) -> None:
        """The compose box (the user seat), the command buttons and the agent's form."""
        for widget in self.query("#compose, #user-controls, #action-form"):
            widget.disabled = not enabled
        if enabled:
            for box in self.query(ComposeBox):
                box.focus()
            for form in self.query(ActionForm):
                form.query_one("#form-text").focus()
        else:
            for hint in self.query("#user-hint-text, #agent-hint-text").results(Static):
                hint.update("")

    def _send(self, text: str) -> bool:
        if self.awaiting is None:
            return False
        participant = self.seats.get(self.awaiting)
        if participant is None or not hasattr(participant, "submit"):
            return False
        seat, self.awaiting = self.awaiting, None
        self._commanded = seat == "user" and text.strip().startswith("/")
        participant.submit(text)
        self.set_seat_input(False)
        if seat == "agent":
            activity = "sent: the protocol reads your reply"
        elif text.strip().lower().startswith(("/dormant", "/wait")):
            activity = "sent: you stay dormant"
        else:
            activity = "sent: the agent answers next"
        self.query_one(StatusLine).set(activity=activity)
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

    @on(ActionForm.Refused)
    def _agent_form_refused(self, event: ActionForm.Refused) -> None:
        """A reply the protocol could not use was not sent: the reason leads the hint, the form
        keeps what was typed, and it is still the person's turn."""
        if self.awaiting != "agent":
            return
        for hint in self.query("#agent-hint-text").results(Static):
            hint.update(Text(plain(f"Not sent: {event.reason.rstrip('.')}.\n{FORM_HINT}"), style="italic"))
        for box in self.query("#agent-hint"):
            box.scroll_home(animate=False)
        self.query_one(StatusLine).set(activity="your reply was not sent: see the hint")

    def _seat_input(self) -> Any:
        """The compose box, or the agent form's text field, while it is open."""
        for form in self.query(ActionForm):
            return None if form.disabled else form.query_one("#form-text")
        return super()._seat_input()

    def action_user_command(self, command: str) -> None:
        if self.awaiting == "user":
            self._send(command)

    def action_end_conversation(self) -> None:
        participant = self.seats.get(self.human_seat or "")
        if participant is not None and hasattr(participant, "stop") and self.awaiting:
            participant.stop()
            self.awaiting = None
            self.set_seat_input(False)
            self.query_one(StatusLine).set(activity="leaving the session…")
        elif self.running:
            self.session.stop()  # not your turn: the session stops where it is
            self.query_one(StatusLine).set(activity="leaving the session…")

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
            if self.ended is not None or self._stream_over:
                return False  # nothing to command once the session is over
            # shown on the key bar all along, usable (not greyed) while it is your turn
            return True if self.running and self.awaiting == "user" else None
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
        ("inspect_calls", "Inspect model calls", "What each model was sent and what came back, call by call"),
        ("fork", "Fork the session…", "Branch at a reply: edit it, or ask again with another model or instruction"),
        ("branches", "Branches…", "This session's fork tree, with each branch's score differences"),
        ("labels", "Verdicts and labels…", "Every judge verdict of this session, with your label beside it: agree, disagree, note"),
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
