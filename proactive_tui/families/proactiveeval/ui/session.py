"""The session screen: the transcript streaming in, live judge panels, status, and controls.

Engine events are consumed by one async worker and applied to the widgets as they arrive; the
same events fold into the run record (`RunRecordBuilder`), so what the screen shows is what the
record holds. A person in a seat types into the compose box when the engine asks for them.

A person in a seat sees what a model in that seat is told, in the prompt's own words (the persona
card for the user, the brief for the agent), and nothing it is not told: the reference target, its
sub-targets, and anything derived from them (the agent's plan and the judges' reasoning, while
playing the user) stay hidden until the person presses t, and each hidden panel says so. Playing
the agent, the person plans without the reference (a model planner is not shown it), and once
their plan is in it is their brief: their target and steps, the reference staying hidden until t
whatever they guide with (a player who wrote a plan works towards it; showing the reference then
would make their plan pointless). With the protocol's default `guide_with = reference` the judges
still compare the dialogue with the reference, and the brief says so. Only a session without a
plan of theirs (planning off) has the reference as the brief, as a model agent is told it.

The status line says what runs now, derived from the events: who is typing, which turn the judges
are checking (no event says a check started, so a user reply starts one and its turn_checked ends
it), what comes next, and nothing stale once the person stopped or the session ended.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll

from proactive_tui.core.spec import SessionSpec
from proactive_tui.families.proactiveeval import prompts
from proactive_tui.families.proactiveeval.judges import parse_plan_text
from proactive_tui.families.proactiveeval.record import complete_turns
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


def _paragraphs(prompt: str) -> list[str]:
    """A prompt's paragraphs. Our prompts open and close with our own paragraphs around the data,
    so the first and the last are ours whatever the data holds (even blank lines)."""
    return prompt.split("\n\n")


def _numbered(steps: list[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))


def persona_sections(user_information: str, trigger_factor: str, agreeableness: str) -> list[tuple[str, str]]:
    """The persona card: what `prompts.user_system_prompt` tells the simulated user, in its words.

    The situation and how agreeable to be come first: they are what a person needs at a glance on
    every turn, while the long background below is read once (the card scrolls)."""
    guidance = prompts.AGREEABLENESS[agreeableness]
    reply_rule = _paragraphs(prompts.user_system_prompt(user_information, trigger_factor, agreeableness))[-1]
    return [
        ("What just happened to you", trigger_factor),
        (f"Agreeableness: {agreeableness}", guidance),
        ("How to reply", reply_rule),
        ("Who you are", user_information),
    ]


def planning_sections(user_information: str, trigger_factor: str) -> list[tuple[str, str]]:
    """The agent's card while it plans: what `prompts.planning_prompt` tells a model planner (the
    task in its words, without the JSON format a person does not type), and no reference target."""
    task = _paragraphs(prompts.planning_prompt(user_information, trigger_factor))[-1]
    task = task.split(" Return JSON", 1)[0]
    return [
        ("Your task now: the plan", task + "\nType it below: the target on the first line, then one step per line."),
        ("What just happened", trigger_factor),
        ("What you know about the user", user_information),
    ]


def agent_sections(user_information: str, trigger_factor: str, target: str, steps: list[str]) -> list[tuple[str, str]]:
    """The agent's brief: what `prompts.agent_system_prompt` tells a model agent, in its words, the
    target and steps first (they are what the person works towards on every turn)."""
    paragraphs = _paragraphs(prompts.agent_system_prompt(user_information, trigger_factor, target, steps))
    return [
        ("Your goal for this conversation", target),
        ("Steps, in order (move through them one at a time, as the user responds)", _numbered(steps)),
        ("How to write", paragraphs[0] + "\n" + paragraphs[-1]),
        ("What just happened", trigger_factor),
        ("What you know about the user", user_information),
    ]


class ProactiveEvalSessionScreen(SessionScreenBase):
    HELP_TITLE = "Session"
    ENDED_TEXT = ENDED_TEXT
    CSS_PATH = Path(__file__).with_name("session.tcss")
    BINDINGS = [
        Binding("a", "autoplay", "Auto", tooltip="Auto-play: run turns without stopping"),
        Binding("s", "step", "Step", tooltip="Run one more turn, then hold"),
        Binding("p", "pause", "Pause", tooltip="Hold before the next turn"),
        Binding("x", "stop", "Stop", tooltip="Stop now (partial text is kept)"),
        Binding("S", "stop_and_score", "Stop+score", tooltip="Stop now and let the judge score what exists"),
        Binding("R", "restart", "Restart", tooltip="Start again with the same settings"),
        Binding("j", "toggle_panel", "Panels", show=False, tooltip="Show or hide the judge panels"),
        Binding("t", "toggle_target", "Reference", show=False,
                tooltip="Show or hide what is hidden from your seat: the target, the sub-targets, the agent's plan"),
        Binding("c", "copy_transcript", "Copy", show=False, tooltip="Copy the transcript to the clipboard (OSC 52)"),
        Binding("y", "copy_message", "Copy message", show=False, tooltip="Copy the focused message"),
        Binding("e", "show_errors", "Errors", show=False, tooltip="Details of the errors so far"),
        Binding("i", "inspect_calls", "Calls", show=False,
                tooltip="What each model was sent and what came back, call by call"),
        Binding("F", "fork", "Fork", tooltip="Branch the session at a reply: edit it or ask again, then run on"),
        Binding("b", "branches", "Branches", show=False, tooltip="This session's branches and how their scores differ"),
        Binding("L", "labels", "Verdicts", show=False, tooltip="The judges' verdicts: agree, disagree, note (your labels)"),
        # priority: the compose box would otherwise take ctrl+d as "delete right"
        Binding("ctrl+d", "end_conversation", "End chat", priority=True, tooltip="As the user: end the conversation"),
        Binding("escape", "leave_box", "Leave the box", tooltip="Stop typing; the session's keys work again"),
        Binding("escape", "back", "Back", tooltip="Back to the picker (asks first while the session is live)"),
        Binding("enter", "focus_compose", "Type", priority=True, tooltip="Back to the box: it is your turn"),
    ]

    def __init__(self, env: Any, spec: SessionSpec, session_factory: Any = None, *,
                 replay_events: list[Any] | None = None, resume_from: Any = None,
                 fork: Any = None, branch: Any = None, rerun: Any = None) -> None:
        """`session_factory(spec, env)` -> (session, seats) replaces the model-backed default
        (tests seat scripted participants this way; when resuming it is also given `resume_from=`).

        `replay_events`: show a recorded session (events from the store) without starting one;
        the controls that need a live session stay off. `resume_from`: a RunRecord whose complete
        turns the new session continues (history screen, `r`)."""
        super().__init__(env, spec, session_factory, resume_from=resume_from, fork=fork, branch=branch,
                         rerun=rerun, replay_events=replay_events)
        settings = spec.settings
        self.max_turns = settings.get("max_turns", 6)
        self.planning = settings.get("planning", True)
        self.guide_with = settings.get("guide_with", "reference")
        self.live_judging = settings.get("live_judging", False)
        self.reference_shown = replay_events is not None
        """Whether the person asked (t) to see what their seat is not told; a replay hides nothing."""
        self.plan_done = not self.planning
        self.own_plan: tuple[str, list[str]] | None = None
        # what runs now, for the status line (see the module docstring)
        self._typing: dict[str, str] = {}
        self._checks: set[int] = set()
        self._live: set[int] = set()
        self._planning_now = False
        self._plan_scoring = False
        self._final_scoring = False
        self._last_done: tuple[str, int] | None = None
        self._stopping: str | None = None
        self._await_turn = 0
        self._replayed_turns = complete_turns(resume_from) if resume_from is not None else 0
        """Turns a resumed session replays: their live scores come from the record, not a judge."""

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="session-body"):
            with Vertical(id="session-main"):
                if self.human_seat:
                    yield self._context_card()
                yield Transcript(unit=self.turn_unit.name, number_of=self.unit_number, id="transcript")
                if self.human_seat:
                    yield ComposeBox(placeholder=self.idle_placeholder(), id="compose", disabled=True)
            with VerticalScroll(id="judge-panel"):
                if self.planning:
                    plan = PlanPanel(id="plan-panel", classes="panel")
                    if self.human_seat == "agent":
                        plan.plan_text = Text("waiting for your plan", style="dim")
                    yield plan
                yield SubTargetChecklist(self.env.item.sub_target, id="checklist", classes="panel")
                yield TurnChecks(id="turn-checks", classes="panel")
                if self.live_judging:
                    yield ScoreTrend(id="trend", classes="panel")
                yield FinalScores(id="final-scores", classes="panel")
        yield StatusLine(self.max_turns, unit=self.turn_unit.name, id="status")
        yield KeyBar()

    def _context_card(self) -> ContextCard:
        item = self.env.item
        env = item.environment
        if self.human_seat == "user":
            sections = persona_sections(env.user_information, env.trigger_factor,
                                        self.spec.settings.get("agreeableness", "medium"))
            hidden = [("What the assistant wants you to do (hidden from the simulated user)", item.target)]
            return ContextCard("Persona card (the user model's prompt)", sections, hidden, id="context-card")
        title = "Your brief (a model agent's prompt)"
        sections, hidden = self._agent_card_parts()
        return ContextCard(title, sections, hidden, hidden_name="reference plan", id="context-card")

    def _agent_card_parts(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """The agent's card: the planning task until the plan is in, then the person's own plan as
        the brief, the reference hidden (module docstring); the reference is the brief only when
        there is no plan of theirs."""
        item = self.env.item
        env = item.environment
        reference = [("The reference target", item.target),
                     ("The reference steps", _numbered(item.sub_target))]
        if not self.plan_done:
            return planning_sections(env.user_information, env.trigger_factor), reference
        if self.own_plan is not None:
            target, steps = self.own_plan
            sections = agent_sections(env.user_information, env.trigger_factor, target, steps)
            sections[:2] = [("Your plan: the goal", target), ("Your plan: the steps, in order", _numbered(steps))]
            if self.guide_with == "own_plan":
                judged = "your plan: its target and steps (guide_with = own_plan)"
            else:
                judged = ("the reference target and steps, not your plan (the protocol's default, "
                          "guide_with = reference): they stay hidden, t shows them")
            sections.insert(2, ("What the judges compare the dialogue with", judged))
            return sections, reference
        return agent_sections(env.user_information, env.trigger_factor, item.target, item.sub_target), []

    SHORT = 36
    """Below this many rows the card gives the transcript more room (class -short, session.tcss)."""

    def on_resize(self) -> None:
        self.set_class(self.size.height < self.SHORT, "-short")

    def on_mount(self) -> None:
        self.set_class(self.size.height < self.SHORT, "-short")
        self._say_seats(self.spec.seats)
        if self.reference_shown:
            for card in self.query(ContextCard):
                card.toggle_hidden()
        self._sync_reference()
        if self.replaying:
            self.replay()
            return
        if self._any_local_model():
            from proactive_tui.llm.local import LOCAL_MODEL_BLURB

            self.transcript.note(f"local/smollm2 is {LOCAL_MODEL_BLURB}", kind="system")
        self.run_session()

    # -- what the person's seat may see -----------------------------------------------------

    @property
    def reference_visible(self) -> bool:
        """Whether the reference target and sub-targets show: always when nobody plays, when the
        person asked (t), and for the agent when they are its brief (no plan of theirs)."""
        if not self.human_seat or self.reference_shown:
            return True
        return self.human_seat == "agent" and self.plan_done and self.own_plan is None

    def _sync_reference(self) -> None:
        """Show or hide the reference panels to match `reference_visible`, each saying how to show it."""
        visible = self.reference_visible
        if self.human_seat == "agent" and not self.plan_done:
            why = "until your plan is in"
        elif self.human_seat == "agent":
            why = "while your plan is your brief"
        else:
            why = "while you play the user"
        # guiding with its own plan, the checklist holds the plan's steps: the agent's own words
        own_steps = self.guide_with == "own_plan" and self.own_plan is not None
        shown = visible or (self.human_seat == "agent" and own_steps)
        for checklist in self.query(SubTargetChecklist):
            checklist.set_hidden(None if shown else f"hidden {why}: t shows them")
        # playing the agent, the plan and its reasoning are the person's own; playing the user they
        # give the target away
        spoils = self.human_seat == "user" and not self.reference_shown
        for panel in self.query(PlanPanel):
            panel.set_hidden("the plan is hidden (it gives the target away): t shows it" if spoils else None)
        for scores in self.query(FinalScores):
            scores.set_hidden("reasoning hidden (it names the target): t shows it" if spoils else None)

    def _refresh_agent_card(self) -> None:
        if self.human_seat != "agent":
            return
        sections, hidden = self._agent_card_parts()
        for card in self.query(ContextCard):
            card.set_sections(sections, hidden)
            # the brief replaces the planning task: its first lines (the target) come into view,
            # wherever the person had scrolled the task to
            card.call_after_refresh(card.scroll_home, animate=False)

    def action_toggle_target(self) -> None:
        self.reference_shown = not self.reference_shown
        for card in self.query(ContextCard):
            if card.revealed != self.reference_shown:
                card.toggle_hidden()
        self._sync_reference()

    # -- showing events (the worker is SessionScreenBase.run_session) ----------------------

    def apply(self, event: Any) -> Any:
        """As every family's screen, then the status line says what runs now (`activity`); a
        failed judge call says which score failed first."""
        t = event.type
        if t == "error":
            self._judge_failed(event)
        shown = super().apply(event)
        if t == "error" and event.fatal:
            self._stopping = "stopped by an error (e: details)"
        if t != "session_ended":
            self._show_activity()
        return shown

    def message_begun(self, event: Any, speaker: str) -> None:
        if speaker != "you":
            self._typing[event.message_id] = event.role
        super().message_begun(event, speaker)

    def message_text(self, message: Any) -> str:
        return message.content

    def message_ended(self, message: Any) -> None:
        self._typing.pop(message.id, None)
        if not message.partial:
            self._last_done = (message.role, message.turn)
            if message.role == "user":
                self._checks.add(message.turn)  # the turn check starts as the user's reply is in
                if self.live_judging and message.turn < self.max_turns and message.turn > self._replayed_turns:
                    self._live.add(message.turn)

    def message_dropped(self, event: Any) -> None:
        view = self.transcript.views.get(event.message_id)
        if view is not None:
            self.status.set(turn=view.turn - 1)
        self._typing.pop(event.message_id, None)

    def apply_own(self, event: Any) -> None:
        t = event.type
        if t == "phase_changed":
            self.transcript.note(f"— {event.phase} —")
            self._planning_now = event.phase == "planning"
            if event.phase != "planning" and not self.plan_done:
                self.plan_done = True  # planning is over, with or without a plan
                self._refresh_agent_card()
                self._sync_reference()
            if event.phase == "scoring":
                self._final_scoring = True
        elif t == "proactiveeval.plan_proposed":
            self.query_one(PlanPanel).show_plan(event.plan.target, event.plan.sub_targets, event.plan.model)
            self._planning_now = False
            self._plan_scoring = True
            self.own_plan = (event.plan.target, list(event.plan.sub_targets))
            if self.guide_with == "own_plan":  # the turn checks judge against (and number) the plan's steps
                self.query_one(SubTargetChecklist).set_steps(event.plan.sub_targets, "Sub-targets (own plan)")
            self.plan_done = True
            self._refresh_agent_card()
            self._sync_reference()
        elif t == "proactiveeval.plan_scored":
            self.query_one(PlanPanel).show_score(event.score, event.reasoning, event.judge_model)
            self._plan_scoring = False
        elif t == "proactiveeval.turn_checked":
            self.query_one(TurnChecks).add_check(event.check)
            self.query_one(SubTargetChecklist).tick(event.check.cumulative_sub_targets)
            self._checks.discard(event.check.turn)
        elif t == "proactiveeval.guidance_scored":
            if event.score.live:
                self._live.discard(event.score.turn)
                if self.query("#trend"):
                    self.query_one(ScoreTrend).add_point(event.score.overall, event.score.judge_model)
            else:
                self._final_scoring = False
                self.query_one(FinalScores).show(event.score)
                if self.query("#trend"):
                    self.query_one(ScoreTrend).add_point(event.score.overall, event.score.judge_model)

    def ended_text(self, reason: str) -> str:
        """The end in words; the person who played the user ended it themselves (ctrl+d)."""
        if reason == "user_stopped" and self.human_seat == "user":
            return "you ended the conversation"
        return super().ended_text(reason)

    def _judge_failed(self, event: Any) -> None:
        """A judge call (or the agent's planning) that failed emits only an error (no score or plan
        event); the error's wording (protocol.py) says which one, so its "judging…" does not stay
        on the status line and the planning panel says the plan or its score failed."""
        message = event.message
        if event.seat == "agent" and message.startswith("planning failed"):
            # the agent's planning call failed for good: no plan event will come
            self._planning_now = False
            for panel in self.query(PlanPanel):
                panel.show_failed(message.removeprefix("planning failed").lstrip(": "))
            return
        if event.seat != "judge":
            return
        if message.startswith("plan scoring failed"):
            self._plan_scoring = False
            for panel in self.query(PlanPanel):
                panel.show_score_failed(message)
        elif message.startswith("live guidance scoring failed") and self._live:
            self._live.discard(min(self._live))
        elif message.startswith("guidance scoring failed"):
            self._final_scoring = False

    # -- the status line --------------------------------------------------------------------

    def _next_up(self) -> str:
        """Who or what comes next once what runs now is done ("" when the dialogue is over)."""
        if self._final_scoring:
            return ""
        last = self._last_done
        if last is None:
            if not self.plan_done:
                return "the plan"
            return "your opening message" if self.human_seat == "agent" else "the agent's opening message"
        role, turn = last
        if role == "agent":
            return "your reply" if self.human_seat == "user" else "the user's reply"
        if turn >= self.max_turns:
            return ""
        return f"your message (turn {turn + 1})" if self.human_seat == "agent" else f"the agent's turn {turn + 1}"

    def activity(self) -> str:
        """What runs now, in words: the person's turn, who is typing, what the judges are on, then
        what comes next."""
        if self._stopping:
            return self._stopping
        now: list[str] = []
        if self.awaiting:
            now.append(self._await_text())
        for role in ("agent", "user"):
            if role in self._typing.values():
                now.append(f"the {role} is typing…")
        if self._planning_now and not self.plan_done and self.human_seat != "agent":
            now.append("the agent is planning…")
        judged: list[str] = []  # what the judges are on now
        if self._plan_scoring:
            judged.append("the plan")
        turns = sorted(self._checks | self._live)
        if turns:
            judged.append(f"turn {', '.join(map(str, turns))}")
        if self.awaiting and judged:
            # it is the person's turn: the judges' work goes on beside it and need not be waited for
            return " · ".join(now) + f" · the judge is still on {' and '.join(judged)}"
        judges = [f"judging {what}…" for what in judged]
        if self._final_scoring:
            judges.append("the judge is scoring the dialogue…")
        nxt = self._next_up()
        if now:
            return " · ".join(now + judges)
        if judges:
            return " · ".join(judges) + (f", then {nxt}" if nxt else "")
        return f"next: {nxt}" if nxt else "finishing…"

    def _show_activity(self) -> None:
        if self.ended is None and not self.replaying:
            self.query_one(StatusLine).set(activity=self.activity())

    # -- a person in a seat -----------------------------------------------------------------

    def _await_text(self) -> str:
        if self.awaiting == "user":
            return "your turn: reply as the user"
        if self._await_turn == 0:
            return "your turn: write the plan"
        return "your turn: open the conversation" if self._await_turn == 1 else "your turn: write your next message"

    def input_placeholder(self) -> str:
        """What to type, for the turn the engine asks the person for (its awaiting_human hint)."""
        if self.awaiting == "user":
            return "Reply as the user…  (ctrl+d ends the conversation)"
        if self._await_turn == 0:
            return "Write the plan: target on the first line, one sub-target per line"
        if self._await_turn == 1:
            return "Write your opening message: the user has not said anything yet"
        return "Write your next message to the user…"

    def idle_placeholder(self) -> str:
        """The box while it is not the person's turn."""
        if self.ended is not None:
            return "The session has ended"
        if self.human_seat == "user":
            return "Reply as the user: the box opens when the agent has spoken"
        return "Your message as the agent: the box opens on your turn"

    def await_person(self, event: Any) -> None:
        self._await_turn = event.turn
        super().await_person(event)

    @on(ComposeBox.Submitted)
    def _person_spoke(self, event: ComposeBox.Submitted) -> None:
        if self.awaiting is None:
            return
        if self.awaiting == "agent" and self._await_turn == 0:
            try:
                parse_plan_text(event.text)  # what the engine will parse: a rejected plan is not sent,
            except ValueError as exc:      # so the box stays open with the text to fix
                event.box.load_text(event.text)
                event.box.move_cursor(event.box.document.end)
                self.notify(f"That plan could not be used: {exc}", title="Plan", severity="warning", timeout=8, markup=False)
                return
        participant = self.seats.get(self.awaiting)
        if participant is not None and hasattr(participant, "submit"):
            participant.submit(event.text)
            self.awaiting = None
            self.set_seat_input(False)
            self._show_activity()

    def action_end_conversation(self) -> None:
        participant = self.seats.get("user")
        if participant is not None and hasattr(participant, "stop") and self.awaiting == "user":
            participant.stop()
            self.awaiting = None
            self.set_seat_input(False)
            self._stopping = "ending the conversation…"
            self._show_activity()

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
        ("toggle_target", "Show or hide the reference", "The target, sub-targets and plan your seat is not told"),
        ("show_errors", "Show errors", "Details of the errors so far"),
        ("inspect_calls", "Inspect model calls", "What each model was sent and what came back, call by call"),
        ("fork", "Fork the session…", "Branch at a reply: edit it, or ask again with another model or instruction"),
        ("branches", "Branches…", "This session's fork tree, with each branch's score differences"),
        ("labels", "Verdicts and labels…", "Every judge verdict of this session, with your label beside it: agree, disagree, note"),
        ("export_session", "Export session…", "Write this session in a format of your choice (run record, markdown…)"),
    )

    def action_stop(self) -> None:
        if self.running:
            self._stopping = "stopping…"
            self.awaiting = None
            self.set_seat_input(False)
        super().action_stop()

    def action_stop_and_score(self) -> None:
        if self.running:
            self._stopping = "stopping; the judge scores what exists…"
            self.awaiting = None
            self.set_seat_input(False)
            self._show_activity()
            self.session.stop(score=True)

    def action_export_session(self) -> None:
        from proactive_tui.ui.screens.export_modal import ExportModal

        if self.builder.record is not None:
            from proactive_tui.services.labels import with_labels

            self.app.push_screen(ExportModal(with_labels(getattr(self.app, "store", None), self.builder.record)))

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
