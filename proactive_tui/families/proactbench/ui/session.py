"""The ProactBench session screen: the dialogue with its trigger points marked, the rubric of the
current trigger, each verdict as it comes, the scores per trigger type and (online) the Planner's
plan.

Offline (upstream's evaluation) the transcript holds the recorded dialogue up to each trigger,
dimmed and folded (`RecordedMessage`: the curation model's replies, never this session's), then
the trigger's mark, the recorded user message it answers, the agent's reply as it streams and the
verdict under it (`VerdictCard`). Online the Planner's plan of each turn fills its panel, the User
Agent's (or the person's) messages and the agent's replies stream in, and a trigger reply's
verdict comes with the user's next message, as upstream scores it.

What a person may see is what their seat is told:
- playing the agent, the rubric and the Planner's plan stay hidden until their reply at that turn
  is in (they would give the test away); the card says the agent sees only the chat;
- playing the user (online), the Planner's tactical order is the person's brief, on the card, turn
  by turn (as the User Agent is told it), with the rubric of the trigger they score.

Engine events are applied as they arrive by the worker of `SessionScreenBase`, which also folds
them into the run record: the score panel shows the record's own tallies (`stats()`), so the
screen and the record never disagree. Fork (`F`), the call inspector (`i`), branches (`b`) and
labels (`L`) are the base screen's, as in every family. Model and dialogue text is data: shown
through `plain` into rich Text, never markup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static

from proactive_tui.core.spec import SessionSpec
from proactive_tui.families.proactbench.ui.planner_panel import PlannerPanel, order_sections
from proactive_tui.families.proactbench.ui.recorded_message import RecordedMessage
from proactive_tui.families.proactbench.ui.rubric_panel import RubricPanel
from proactive_tui.families.proactbench.ui.score_panel import TypeScorePanel
from proactive_tui.families.proactbench.ui.trigger_marker import TriggerMarker
from proactive_tui.families.proactbench.ui.verdict_card import VerdictCard
from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.session_base import SessionScreenBase
from proactive_tui.ui.widgets.compose_box import ComposeBox
from proactive_tui.ui.widgets.context_card import ContextCard
from proactive_tui.ui.widgets.key_bar import KeyBar
from proactive_tui.ui.widgets.message_view import MessageView
from proactive_tui.ui.widgets.status_line import StatusLine
from proactive_tui.ui.widgets.title_bar import TitleBar
from proactive_tui.ui.widgets.transcript import Transcript

ENDED_TEXT = {
    "completed": "the protocol ran to its end",
    "planner_stopped": "the Planner ended the conversation",
    "max_turns": "the turn limit was reached",
    "user_stopped": "you left the session",
}
AGENT_CARD = [
    ("Your part", "You are the assistant. Reply to the user's latest message as you would to a real person."),
    ("What you are told", "Only the chat, as a model in this seat: no persona, no plan, no rubric. Some turns are "
                          "trigger points, judged against a rubric written before you answer; it shows once "
                          "your reply at that turn is in."),
]
SCORER = {"judge": "the judge", "user_agent": "the user agent", "person": "you"}


class ProactBenchSessionScreen(SessionScreenBase):
    HELP_TITLE = "ProactBench session"
    ENDED_TEXT = ENDED_TEXT
    CSS_PATH = Path(__file__).with_name("session.tcss")
    BINDINGS = [
        Binding("a", "autoplay", "Auto", tooltip="Auto-play: run turns without stopping"),
        Binding("s", "step", "Step", tooltip="Run one more turn, then hold"),
        Binding("p", "pause", "Pause", tooltip="Hold before the next turn"),
        Binding("x", "stop", "Stop", tooltip="Stop now (partial text is kept)"),
        Binding("R", "restart", "Restart", tooltip="Start again with the same settings"),
        Binding("j", "toggle_panel", "Panels", show=False, tooltip="Show or hide the side panels"),
        Binding("c", "copy_transcript", "Copy", show=False, tooltip="Copy the transcript to the clipboard (OSC 52)"),
        Binding("e", "show_errors", "Errors", show=False, tooltip="Details of the errors so far"),
        Binding("i", "inspect_calls", "Calls", show=False,
                tooltip="What each model was sent and what came back, call by call"),
        Binding("F", "fork", "Fork", tooltip="Branch the session at a trigger reply: edit it or ask again, then run on"),
        Binding("b", "branches", "Branches", show=False, tooltip="This session's branches and how their scores differ"),
        Binding("L", "labels", "Verdicts", show=False, tooltip="The verdicts: agree, disagree, note (your labels)"),
        Binding("ctrl+d", "end_conversation", "Leave", priority=True, tooltip="As a player: leave the session"),
        Binding("escape", "leave_box", "Leave the box", tooltip="Stop typing; the session's keys work again"),
        Binding("escape", "back", "Back", tooltip="Back to the picker (asks first while the session is live)"),
        Binding("enter", "focus_compose", "Type", priority=True, tooltip="Back to the box: it is your turn"),
    ]

    def __init__(self, env: Any, spec: SessionSpec, session_factory: Any = None, *,
                 replay_events: list[Any] | None = None, resume_from: Any = None,
                 fork: Any = None, branch: Any = None, rerun: Any = None) -> None:
        """`replay_events`: show a recorded session (events from the store) without starting one."""
        super().__init__(env, spec, session_factory, resume_from=resume_from, fork=fork, branch=branch, rerun=rerun,
                         replay_events=replay_events)
        settings = spec.settings
        self.online = settings.get("protocol", "offline") == "online"
        limit = settings.get("max_triggers")
        self.offline_triggers = env.triggers[:limit] if limit else env.triggers
        self.max_turns = int(settings.get("max_turns") or 10) if self.online else \
            max((t.turn for t in self.offline_triggers), default=0)
        self.opened: dict[int, Any] = {}
        """trigger index -> its `trigger_opened` event."""
        self.cards: dict[int, VerdictCard] = {}
        self.answered: set[int] = set()
        """Turns whose agent reply is complete (the rubric and plan of a turn show to a person
        playing the agent only once it is)."""
        self.current: int | None = None
        """The trigger the rubric panel shows: the latest opened."""
        self.plans: dict[int, Any] = {}

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="session-body"):
            with Vertical(id="session-main"):
                if self.human_seat:
                    yield self._context_card()
                yield Transcript(unit=self.turn_unit.name, number_of=self.unit_number, id="transcript")
                if self.human_seat:
                    yield Static("", id="person-hint")
                    yield ComposeBox(placeholder=self.idle_placeholder(), id="compose", disabled=True)
            with VerticalScroll(id="pb-side"):
                yield TypeScorePanel(id="score-panel", classes="panel")
                yield RubricPanel(id="rubric-panel", classes="panel")
                if self.online:
                    yield PlannerPanel(id="planner-panel", classes="panel")
        yield StatusLine(self.max_turns, unit=self.turn_unit.name, id="status")
        yield KeyBar()

    def _context_card(self) -> ContextCard:
        if self.human_seat == "agent":
            sections = list(AGENT_CARD)
            prompt = self.spec.settings.get("system_prompt") or ""
            if prompt:
                sections.append(("The system prompt (as a model is given it)", prompt))
            return ContextCard("Your brief (what the agent is told)", sections, id="context-card")
        return ContextCard("Your brief (the Planner's order, as the user agent gets it)",
                           [("Waiting for the Planner", "The Planner's order for your next message comes here.")],
                           id="context-card")

    SHORT = 32
    """Below this many rows a player's card and box give the transcript room (class -short)."""

    def on_resize(self) -> None:
        self.set_class(self.size.height < self.SHORT, "-short")

    def on_mount(self) -> None:
        self.set_class(self.size.height < self.SHORT, "-short")
        self._say_seats([seat for seat in self.spec.seats if seat != "user" or self.online], self._seat_name)
        if not self.online:
            self.query_one(RubricPanel).total = len(self.offline_triggers)
        if self.replaying:
            self.replay()
            return
        if self._any_local_model():
            from proactive_tui.llm.local import LOCAL_MODEL_BLURB

            self.transcript.note(f"local/smollm2 is {LOCAL_MODEL_BLURB}", kind="system")
        self.run_session()

    def _seat_name(self, seat: str) -> str:
        if seat == "judge":
            return "planner" if self.online else "judge"
        return "user agent" if seat == "user" else seat

    # -- showing events ---------------------------------------------------------------------

    def _trigger_at(self, turn: int) -> Any:
        return next((e for e in self.opened.values() if e.turn == turn), None)

    def message_begun(self, event: Any, speaker: str) -> None:
        """A model's message: "… is typing". A person's starts just after they are asked
        (awaiting_human comes first): the status line keeps saying it is their turn."""
        super().message_begun(event, speaker)
        if self.spec.seats.get(event.role) != "human":
            self.status.set(activity=f"the {'agent' if event.role == 'agent' else 'user'} is typing…")

    def message_ended(self, message: Any) -> None:
        if message.role == "agent" and not message.partial:
            self._answered(message.turn)
        elif message.role == "user":
            self.status.set(activity="the agent answers next")

    def session_over(self, event: Any) -> None:
        """Cards still waiting for a verdict say the session ended first."""
        for card in self.cards.values():
            if card.counted is None:
                card.waiting = "no verdict: the session ended first"
                card.refresh_text()

    def apply_own(self, event: Any) -> Any:
        t = event.type
        if t == "proactbench.recorded_turn":
            unit = self.turn_unit.name
            self.mount_in_transcript(RecordedMessage("user", event.turn, event.user_message, "user", unit=unit))
            self.mount_in_transcript(RecordedMessage("agent", event.turn, event.assistant_response,
                                                     event.model or "curation model", unit=unit))
            self.status.set(turn=max(self.status.turn, event.turn))
        elif t == "proactbench.trigger_opened":
            self._opened(event)
        elif t == "proactbench.planned":
            self._planned(event)
        elif t == "proactbench.trigger_judged":
            self._judged(event)
        return None

    def _opened(self, event: Any) -> None:
        self.opened[event.index] = event
        total = None if self.online else len(self.offline_triggers)
        self.mount_in_transcript(TriggerMarker(event.index, event.turn, event.rubric.type, total))
        if event.user_message is not None:  # offline: the recorded message the agent answers
            self.mount_in_transcript(MessageView(f"recorded-user-{event.turn}", "user", event.turn, "recorded", text=event.user_message,
                                    kind="trigger-message", unit=self.turn_unit.name,
                                    number=self.unit_number(event.turn)))
            self.status.set(turn=max(self.status.turn, event.turn),
                            activity=f"trigger {event.index}: the agent answers turn {event.turn}")
        self.current = event.index
        self.query_one(RubricPanel).show_rubric(event.index, event.turn, event.rubric, total)
        self._sync_hidden()

    def _answered(self, turn: int) -> None:
        """The agent's reply at `turn` is complete: a trigger's verdict card waits under it."""
        self.answered.add(turn)
        trigger = self._trigger_at(turn)
        if trigger is not None and trigger.index not in self.cards:
            waiting = "scored with the user's next message…" if self.online else "judging…"
            card = VerdictCard(trigger.index, turn, trigger.rubric.type, waiting=waiting)
            self.cards[trigger.index] = card
            self.mount_in_transcript(card)
            if not self.online:
                self.status.set(activity=f"the judge rates trigger {trigger.index}…")
        elif not self.online:
            self.status.set(activity="")
        self._sync_hidden()

    def _planned(self, event: Any) -> None:
        self.plans[event.turn] = event
        for panel in self.query(PlannerPanel):
            panel.show_plan(event.turn, event.plan, event.model)
        if self.human_seat == "user":
            sections = order_sections(event.plan)
            sections.insert(0, ("Turn", f"{event.turn}: write the user's next message"))
            pending = self._pending_for_user()
            if pending is not None:
                sections.append((f"And score trigger {pending.index} ({pending.rubric.type}), the agent's last reply",
                                  "The rubric is in the side panel: PASS, PARTIAL or FAIL, why, and a quote."))
            for card in self.query(ContextCard):
                card.set_sections(sections)
                card.call_after_refresh(card.scroll_home, animate=False)
        self.status.set(turn=max(self.status.turn, event.turn))
        self._sync_hidden()

    def _pending_for_user(self) -> Any:
        """Online: the trigger whose reply is in and whose verdict has not come (the user scores it)."""
        return next((e for i, e in sorted(self.opened.items())
                     if e.turn in self.answered and (i not in self.cards or self.cards[i].counted is None)), None)

    def _judged(self, event: Any) -> None:
        card = self.cards.get(event.index)
        if card is None:
            opened = self.opened.get(event.index)
            card = VerdictCard(event.index, event.turn, opened.rubric.type if opened else "?")
            self.cards[event.index] = card
            self.mount_in_transcript(card)
        card.show(event)
        record = self.builder.record
        if record is not None:
            self.query_one(TypeScorePanel).show(record.section.stats(), SCORER.get(event.judged_by, ""))
        verdict = card.counted or "SKIPPED"
        self.status.set(activity=f"trigger {event.index}: {verdict}")

    def _sync_hidden(self) -> None:
        """Playing the agent, the rubric and the plan of a turn stay hidden until the person's
        reply at that turn is in (module docstring)."""
        if self.human_seat != "agent":
            return
        panel = self.query_one(RubricPanel)
        opened = self.opened.get(self.current) if self.current is not None else None
        if opened is not None and opened.turn not in self.answered:
            panel.set_hidden("hidden until your reply at this turn is in: it would tell you what is tested")
        else:
            panel.set_hidden(None)
        for planner in self.query(PlannerPanel):
            turn = planner.turn
            planner.set_hidden("hidden until your reply at this turn is in: the plan says what is tested"
                               if turn is not None and turn not in self.answered else None)

    # -- a person in a seat -----------------------------------------------------------------

    def idle_placeholder(self) -> str:
        if self.ended is not None:
            return "The session has ended"
        if self.human_seat == "user":
            return "Your message as the user: the box opens when the Planner's order is in"
        return "Your reply as the agent: the box opens on a trigger turn"

    def input_placeholder(self) -> str:
        if self._scoring:
            return "PASS, PARTIAL or FAIL, then why (e.g. PARTIAL it warns but takes no step)…"
        if self.awaiting == "user":
            return "Write the user's message, following the Planner's order…"
        return "Write the assistant's reply to the user's latest message…"

    _scoring = False
    """The person is asked for a verdict (the engine's hint says "score …"), not a message."""

    def await_person(self, event: Any) -> None:
        """The engine asks the person: for a verdict on a trigger reply (the user seat online
        scores the agent's last trigger reply before writing its message) or for a message. Its
        hint (what to write, or what was wrong with the last try) shows above the box."""
        self.awaiting = event.seat
        hint = plain(event.hint) if event.hint else ""
        self._scoring = "score the" in hint
        if self._scoring:
            activity = "your turn: score the agent's trigger reply (rubric in the side panel)"
        else:
            activity = f"your turn: {'write the user message' if event.seat == 'user' else 'reply as the agent'}"
        self.status.set(activity=activity)
        for box in self.query("#person-hint").results(Static):
            box.update(Text(hint, style="italic"))
        self.set_seat_input(True)

    @on(ComposeBox.Submitted)
    def _person_spoke(self, event: ComposeBox.Submitted) -> None:
        if self.awaiting is None:
            return
        participant = self.seats.get(self.awaiting)
        if participant is not None and hasattr(participant, "submit"):
            participant.submit(event.text)
            self.awaiting = None
            self._scoring = False
            self.set_seat_input(False)
            for box in self.query("#person-hint").results(Static):
                box.update("")
            self.status.set(activity="sent")

    def action_end_conversation(self) -> None:
        participant = self.seats.get(self.human_seat or "")
        if participant is not None and hasattr(participant, "stop") and self.awaiting:
            participant.stop()
            self.awaiting = None
            self.set_seat_input(False)
            self.status.set(activity="leaving the session…")
        elif self.running:
            self.session.stop()
            self.status.set(activity="leaving the session…")

    # -- controls ---------------------------------------------------------------------------

    PANEL_ID = "#pb-side"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "end_conversation":
            return self.running and self.human_seat is not None
        return super().check_action(action, parameters)

    PALETTE = (
        ("autoplay", "Session: auto-play", "Run turns without stopping"),
        ("step", "Session: step one turn", "Run one more turn, then hold"),
        ("pause", "Session: pause", "Hold before the next turn"),
        ("stop", "Session: stop", "Stop now; partial text is kept"),
        ("restart", "Session: restart", "Start again with the same settings"),
        ("copy_transcript", "Copy transcript", "Copy the whole transcript to the clipboard (OSC 52)"),
        ("toggle_panel", "Toggle side panels", "Show or hide the rubric, score and plan panels"),
        ("show_errors", "Show errors", "Details of the errors so far"),
        ("inspect_calls", "Inspect model calls", "What each model was sent and what came back, call by call"),
        ("fork", "Fork the session…", "Branch at a trigger reply: edit it, or ask again with another model or instruction"),
        ("branches", "Branches…", "This session's fork tree, with each branch's score differences"),
        ("labels", "Verdicts and labels…", "Every verdict of this session, with your label beside it: agree, disagree, note"),
    )

    def transcript_text(self) -> str:
        parts = []
        for child in self.transcript.children:
            if isinstance(child, MessageView):
                if child.state != "discarded":
                    parts.append(child.plain_text())
            elif isinstance(child, (TriggerMarker,)):
                parts.append(child.render_text().plain)
            elif isinstance(child, VerdictCard):
                parts.append(child.plain_text())
        return f"{self.env.id}\n\n" + "\n\n".join(parts)
