"""The session screen: the transcript streaming in, live judge panels, status, and controls.

Engine events are consumed by one async worker and applied to the widgets as they arrive; the
same events fold into the run record (`RunRecordBuilder`), so what the screen shows is what the
record holds. A person in a seat types into the compose box when the engine asks for them.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll

from proactive_tui.core.spec import SessionSpec
from proactive_tui.ui.screens.session_base import SessionScreenBase
from proactive_tui.families.proactiveeval.ui.checklist import SubTargetChecklist
from proactive_tui.ui.widgets.compose_box import ComposeBox
from proactive_tui.ui.widgets.context_card import ContextCard
from proactive_tui.families.proactiveeval.ui.final_scores import FinalScores
from proactive_tui.ui.widgets.key_bar import KeyBar
from proactive_tui.families.proactiveeval.ui.plan_panel import PlanPanel
from proactive_tui.families.proactiveeval.ui.score_trend import ScoreTrend
from proactive_tui.ui.widgets.status_line import StatusLine
from proactive_tui.ui.widgets.title_bar import TitleBar
from proactive_tui.ui.widgets.transcript import Transcript
from proactive_tui.families.proactiveeval.ui.turn_checks import TurnChecks

ENDED_TEXT = {
    "target_reached": "the target was reached",
    "max_turns": "the turn limit was reached",
    "user_stopped": "the user ended the conversation",
    "cancelled": "stopped",
    "error": "stopped by an error",
}


class ProactiveEvalSessionScreen(SessionScreenBase):
    HELP_TITLE = "Session"
    ENDED_TEXT = ENDED_TEXT
    BINDINGS = [
        Binding("a", "autoplay", "Auto", tooltip="Auto-play: run turns without stopping"),
        Binding("s", "step", "Step", tooltip="Run one more turn, then hold"),
        Binding("p", "pause", "Pause", tooltip="Hold before the next turn"),
        Binding("x", "stop", "Stop", tooltip="Stop now (partial text is kept)"),
        Binding("S", "stop_and_score", "Stop+score", tooltip="Stop now and let the judge score what exists"),
        Binding("R", "restart", "Restart", tooltip="Start again with the same settings"),
        Binding("j", "toggle_panel", "Panels", show=False, tooltip="Show or hide the judge panels"),
        Binding("t", "toggle_target", "Target", show=False, tooltip="Show or hide the hidden target on the context card"),
        Binding("c", "copy_transcript", "Copy", show=False, tooltip="Copy the transcript to the clipboard (OSC 52)"),
        Binding("y", "copy_message", "Copy message", show=False, tooltip="Copy the focused message"),
        Binding("e", "show_errors", "Errors", show=False, tooltip="Details of the errors so far"),
        # priority: the compose box would otherwise take ctrl+d as "delete right"
        Binding("ctrl+d", "end_conversation", "End chat", priority=True, tooltip="As the user: end the conversation"),
        Binding("escape", "back", "Back", tooltip="Back to the picker (stops a running session)"),
    ]

    def __init__(self, env: Any, spec: SessionSpec, session_factory: Any = None, *,
                 replay_events: list[Any] | None = None, resume_from: Any = None) -> None:
        """`session_factory(spec, env)` -> (session, seats) replaces the model-backed default
        (tests seat scripted participants this way; when resuming it is also given `resume_from=`).

        `replay_events`: show a recorded session (events from the store) without starting one;
        the controls that need a live session stay off. `resume_from`: a RunRecord whose complete
        turns the new session continues (history screen, `r`)."""
        super().__init__(env, spec, session_factory)
        self.replay_events = replay_events
        self.resume_from = resume_from

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="session-body"):
            with Vertical(id="session-main"):
                if self.human_seat:
                    yield self._context_card()
                yield Transcript(id="transcript")
                if self.human_seat:
                    yield ComposeBox(id="compose", disabled=True)
            with VerticalScroll(id="judge-panel"):
                if self.spec.settings.get("planning", True):
                    yield PlanPanel(id="plan-panel", classes="panel")
                yield SubTargetChecklist(self.env.item.sub_target, id="checklist", classes="panel")
                yield TurnChecks(id="turn-checks", classes="panel")
                if self.spec.settings.get("live_judging", False):
                    yield ScoreTrend(id="trend", classes="panel")
                yield FinalScores(id="final-scores", classes="panel")
        yield StatusLine(self.spec.settings.get("max_turns", 6), id="status")
        yield KeyBar()

    def _context_card(self) -> ContextCard:
        item = self.env.item
        settings = self.spec.settings
        if self.human_seat == "user":
            sections = [
                ("You are", item.environment.user_information),
                ("What just happened to you", item.environment.trigger_factor),
                ("Agreeableness", f"{settings.get('agreeableness', 'medium')}: lower means you resist being guided"),
            ]
            hidden = [("What the assistant wants you to do (hidden from the simulated user)", item.target)]
            return ContextCard("Persona card (what the simulated user is told)", sections, hidden, id="context-card")
        steps = "\n".join(f"{i}. {s}" for i, s in enumerate(item.sub_target, 1))
        sections = [
            ("The user", item.environment.user_information),
            ("What just happened", item.environment.trigger_factor),
            ("Your target", item.target),
            ("Steps", steps),
        ]
        return ContextCard("Agent context card", sections, id="context-card")

    def on_mount(self) -> None:
        self.app.sub_title = ("replay · " if self.replaying else "") + f"{self.env.id} · " + " · ".join(
            f"{seat}: {'you' if kind == 'human' else self.spec.roles.for_role(seat).model}"
            for seat, kind in self.spec.seats.items()
        )
        if self.replaying:
            self.replay()
            return
        if self._any_local_model():
            from proactive_tui.llm.local import LOCAL_MODEL_BLURB

            self.transcript.note(f"local/smollm2 is {LOCAL_MODEL_BLURB}", kind="system")
        self.run_session()

    # -- the worker -------------------------------------------------------------------------

    async def _start(self, factory: Any) -> tuple[Any, dict[str, Any]]:
        if self.resume_from is not None:
            return await factory(self.spec, self.env, resume_from=self.resume_from)
        return await factory(self.spec, self.env)

    def replay(self) -> None:
        """Apply the recorded events as they were emitted; nobody is asked to type."""
        for event in self.replay_events or []:
            if event.type != "awaiting_human":
                self._show(event)
        status = self.query_one(StatusLine)
        if self.ended is None:
            status.set(activity="replay: the recording ends here (the session did not finish)", finished=status.clock())
        self.refresh_bindings()

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    def apply(self, event: Any) -> None:
        status = self.query_one(StatusLine)
        t = event.type
        if t == "message_started":
            speaker = "you" if self.spec.seats.get(event.role) == "human" else event.model
            self.transcript.start_message(event.message_id, event.role, event.turn, speaker)
            status.set(turn=max(status.turn, event.turn), retry="",
                       activity="your turn" if speaker == "you" else f"{event.role} is typing…")
        elif t == "message_delta":
            self.transcript.append(event.message_id, event.text)
            if status.retry:
                status.set(retry="")
        elif t == "message_done":
            m = event.message
            speaker = "you" if self.spec.seats.get(m.role) == "human" else m.model
            self.transcript.finish(m.id, m.role, m.turn, speaker, m.content, m.partial)
            self._update_usage()
            nxt = "user" if m.role == "agent" else "judge and agent"
            status.set(activity=f"{nxt} next")
        elif t == "message_discarded":
            view = self.transcript.views.get(event.message_id)
            if view is not None:
                status.set(turn=view.turn - 1)
            self.transcript.discard(event.message_id)
        elif t == "awaiting_human":
            self._await_person(event)
        elif t == "phase_changed":
            self.transcript.note(f"— {event.phase} —")
            if event.phase == "scoring":
                status.set(activity="judging…")
        elif t == "proactiveeval.plan_proposed":
            self.query_one(PlanPanel).show_plan(event.plan.target, event.plan.sub_targets, event.plan.model)
        elif t == "proactiveeval.plan_scored":
            self.query_one(PlanPanel).show_score(event.score, event.reasoning, event.judge_model)
        elif t == "proactiveeval.turn_checked":
            self.query_one(TurnChecks).add_check(event.check)
            self.query_one(SubTargetChecklist).tick(event.check.cumulative_sub_targets)
        elif t == "proactiveeval.guidance_scored":
            if event.score.live:
                if self.query("#trend"):
                    self.query_one(ScoreTrend).add_point(event.score.overall, event.score.judge_model)
            else:
                self.query_one(FinalScores).show(event.score)
                if self.query("#trend"):
                    self.query_one(ScoreTrend).add_point(event.score.overall, event.score.judge_model)
        elif t == "session_ended":
            self._announce_end(event, self.transcript.note)
            self._set_compose(False)
            self.refresh_bindings()
        else:
            self._apply_common(event)

    # -- a person in a seat -----------------------------------------------------------------

    def _await_person(self, event: Any) -> None:
        self.awaiting = event.seat
        self.query_one(StatusLine).set(activity=f"your turn ({event.seat}): {event.hint}")
        self._set_compose(True)

    def _set_compose(self, enabled: bool) -> None:
        for box in self.query(ComposeBox):
            box.disabled = not enabled
            if enabled:
                box.focus()

    @on(ComposeBox.Submitted)
    def _person_spoke(self, event: ComposeBox.Submitted) -> None:
        if self.awaiting is None:
            return
        participant = self.seats.get(self.awaiting)
        if participant is not None and hasattr(participant, "submit"):
            participant.submit(event.text)
            self.awaiting = None
            self._set_compose(False)

    def action_end_conversation(self) -> None:
        participant = self.seats.get("user")
        if participant is not None and hasattr(participant, "stop") and self.awaiting == "user":
            participant.stop()
            self.awaiting = None
            self._set_compose(False)

    # -- controls ---------------------------------------------------------------------------

    PANEL_ID = "#judge-panel"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop_and_score":
            return self.running
        if action == "export_session":
            return self.builder.record is not None
        if action == "end_conversation":
            return self.running and self.human_seat == "user"
        if action == "toggle_target":
            return bool(self.query("#context-card"))
        return super().check_action(action, parameters)

    PALETTE = (
        ("autoplay", "Session: auto-play", "Run turns without stopping"),
        ("step", "Session: step one turn", "Run one more turn, then hold"),
        ("pause", "Session: pause", "Hold before the next turn"),
        ("stop", "Session: stop", "Stop now; partial text is kept"),
        ("stop_and_score", "Session: stop and score", "Stop now and let the judge score what exists"),
        ("restart", "Session: restart", "Start again with the same settings"),
        ("copy_transcript", "Copy transcript", "Copy the whole transcript to the clipboard (OSC 52)"),
        ("toggle_panel", "Toggle judge panels", "Show or hide the judge panels"),
        ("show_errors", "Show errors", "Details of the errors so far"),
        ("export_session", "Export session…", "Write this session in a format of your choice (run record, markdown…)"),
    )

    def action_stop_and_score(self) -> None:
        if self.running:
            self.query_one(StatusLine).set(activity="stopping; the judge scores what exists…")
            self.session.stop(score=True)

    def action_export_session(self) -> None:
        from proactive_tui.ui.screens.export_modal import ExportModal

        if self.builder.record is not None:
            self.app.push_screen(ExportModal(self.builder.record))

    def action_toggle_target(self) -> None:
        for card in self.query(ContextCard):
            card.toggle_hidden()

    def transcript_text(self) -> str:
        return f"{self.env.id}\n\n" + self.transcript.plain_text()

    def action_copy_message(self) -> None:
        from proactive_tui.ui.widgets.message_view import MessageView

        focused = self.focused
        if isinstance(focused, MessageView):
            self.app.copy_to_clipboard(focused.body)
            self.notify("Message copied", timeout=3)
        else:
            self.notify("Focus a message first (tab / click), then y", timeout=4)
