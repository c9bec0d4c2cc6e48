"""The ProactiveBench session screen: the trace's events as a timeline, the agent's proposal and the
verdict under each, and live metrics beside it.

Engine events are consumed by one async worker and folded into the run record as they arrive
(`RunRecordBuilder`), so the metrics panel shows exactly what the record holds. A person judging
as the user answers each proposal in the verdict prompt under the timeline (buttons, or a / r / s
for accept / reject / skip; ctrl+d ends the session); the answer goes to the HumanParticipant,
which feeds the same verdict path as the judge model. A person playing the agent answers each
event in the proposal prompt instead (`proposal_prompt.py`): a task, or "stay quiet" (ctrl+n) for
no proposal; the reply goes through the engine's reader and the judge seat rates it as a model's.

The status line says what is happening now (the agent proposing for event N, the judge judging
it, waiting for your verdict on it, its outcome), and the end note says how many events were
judged and how many skipped, from the run record, so neither can claim more than happened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input

from proactive_tui.core.spec import SessionSpec
from proactive_tui.families.proactivebench.metrics import METRIC_LABELS, show
from proactive_tui.families.proactivebench.settings import ablation_label, ablation_tag
from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.session_base import SessionScreenBase
from proactive_tui.families.proactivebench.protocol import parse_agent_text
from proactive_tui.families.proactivebench.ui.event_timeline import EventTimeline
from proactive_tui.families.proactivebench.ui.proposal_prompt import QUIET, ProposalPrompt
from proactive_tui.ui.widgets.key_bar import KeyBar
from proactive_tui.families.proactivebench.ui.metrics_panel import MetricsPanel
from proactive_tui.ui.widgets.status_line import StatusLine
from proactive_tui.ui.widgets.title_bar import TitleBar
from proactive_tui.families.proactivebench.ui.verdict_prompt import VerdictPrompt

ENDED_TEXT = {
    "completed": "ran to the end",
    "user_stopped": "you ended the session",
    "cancelled": "stopped",
    "error": "stopped by an error",
}
"""How each end reason is said (`ended_text` adds how many events were judged and skipped)."""


class ProactiveBenchSessionScreen(SessionScreenBase):
    HELP_TITLE = "ProactiveBench session"
    ENDED_TEXT = ENDED_TEXT
    CSS_PATH = Path(__file__).with_name("session.tcss")
    BINDINGS = [
        # The verdict keys come first: while the prompt is up, "a" accepts instead of auto-playing
        # and "s" skips instead of stepping, and the key bar shows them in place of Auto / Step
        # (check_action hides them while no verdict is asked for, so the keys fall through).
        Binding("a", "verdict('a')", "Accept", tooltip="Accept the assistant's offer"),
        Binding("r", "verdict('r')", "Reject", tooltip="Reject the assistant's offer"),
        Binding("s", "verdict('s')", "Skip", tooltip="Skip the offer: the event is not counted"),
        Binding("ctrl+d", "end_session", "End", tooltip="As the user-judge: end the session now (the verdicts so far are kept)"),
        # priority: the proposal box has the focus while it is the person's turn
        Binding("ctrl+n", "stay_quiet", "Stay quiet", priority=True,
                tooltip="As the agent: offer nothing for this event (no proposal, as a model's null)"),
        Binding("a", "autoplay", "Auto", tooltip="Auto-play: run events without stopping"),
        Binding("s", "step", "Step", tooltip="Run one more event, then hold"),
        Binding("p", "pause", "Pause", tooltip="Hold before the next event"),
        Binding("x", "stop", "Stop", tooltip="Stop now (the events judged so far are kept)"),
        Binding("R", "restart", "Restart", tooltip="Start again with the same settings"),
        Binding("m", "toggle_panel", "Metrics", show=False, tooltip="Show or hide the metrics panel"),
        Binding("c", "copy_transcript", "Copy", show=False, tooltip="Copy the transcript to the clipboard (OSC 52)"),
        Binding("e", "show_errors", "Errors", show=False, tooltip="Details of the errors so far"),
        Binding("i", "inspect_calls", "Calls", show=False,
                tooltip="What each model was sent and what came back, call by call"),
        Binding("F", "fork", "Fork", tooltip="Branch the session at a reply: edit it or ask again, then run on"),
        Binding("b", "branches", "Branches", show=False, tooltip="This session's branches and how their scores differ"),
        Binding("L", "labels", "Verdicts", show=False, tooltip="The judges' verdicts: agree, disagree, note (your labels)"),
        Binding("escape", "leave_box", "Leave the box", tooltip="Stop typing; the session's keys work again"),
        Binding("escape", "back", "Back", tooltip="Back to the picker (asks first while the session is live)"),
        Binding("enter", "focus_compose", "Type", priority=True, tooltip="Back to the proposal box: it is your turn"),
    ]

    def __init__(self, env: Any, spec: SessionSpec, session_factory: Any = None, *, resume_from: Any = None,
                 fork: Any = None, branch: Any = None, rerun: Any = None) -> None:
        """`session_factory(spec, env)` -> (session, seats) replaces the model-backed default;
        `resume_from`: the interrupted session's RunRecord this one continues (History, `r`)."""
        super().__init__(env, spec, session_factory, resume_from=resume_from, fork=fork, branch=branch,
                         rerun=rerun)
        self._proposal: dict[str, Any] = {}
        self._asked = 0
        self._verdicts = 0
        """Verdicts that arrived on the latest proposal (one per task, or one for no task)."""

    @property
    def judge_name(self) -> str:
        if self.spec.seats.get("user") == "human":
            return "you (person)"
        return self.spec.roles.for_role("user").model

    @property
    def total(self) -> int:
        n = len(self.env.events)
        limit = self.spec.settings.get("max_events")
        return min(n, int(limit)) if limit else n

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="pb-body"):
            with Vertical(id="pb-main"):
                yield EventTimeline(id="timeline")
                prompt = VerdictPrompt(id="verdict-prompt")
                prompt.display = False
                yield prompt
                if self.human_seat == "agent":
                    proposal = ProposalPrompt(id="proposal-prompt")
                    proposal.display = False
                    yield proposal
            with VerticalScroll(id="pb-side"):
                yield MetricsPanel(self.judge_name, protocol=ablation_tag(self.spec.settings),
                                   per_task=int(self.spec.settings.get("candidates") or 1) > 1, id="metrics", classes="panel")
        yield StatusLine(self.total, unit=self.turn_unit.name, id="status")
        yield KeyBar()

    def on_mount(self) -> None:
        self._say_seats(("agent", "user"), lambda seat: "judge" if seat == "user" else seat)
        if self._any_local_model(("agent", "user")):
            from proactive_tui.llm.local import LOCAL_MODEL_BLURB

            self.timeline.note(f"local/smollm2 is {LOCAL_MODEL_BLURB}")
        label = ablation_label(self.spec.settings)
        if label:
            self.timeline.note(f"Not upstream's protocol: {label}. These numbers do not compare with upstream's.")
        if self.human_seat == "user":
            self.timeline.note("You judge as the user: accept (a), reject (r) or skip (s) each offer in the prompt "
                               "under the events; a skipped event is not counted. ctrl+d ends the session.")
        if self.human_seat == "agent":
            self.timeline.note("You play the agent: after each event, type the task you offer (enter) or stay quiet "
                               "(ctrl+n: no proposal). The judge rates your reply as it rates a model's. A model agent "
                               "is not told the verdicts (upstream's evaluation has no feedback); you see them on the cards.")
        self.run_session()

    def on_resize(self, event: Any) -> None:
        self.query_one(VerdictPrompt).fit(event.size.height)

    @property
    def timeline(self) -> EventTimeline:
        return self.query_one(EventTimeline)

    # -- showing events (the worker is SessionScreenBase.run_session) ----------------------

    def apply_own(self, event: Any) -> Any:
        """Show one of the family's events; returns an awaitable when it mounted a new event card
        (the worker awaits it, so a new event's card exists before its proposal arrives)."""
        from proactive_tui.core.writers import by_person, speaker

        status = self.status
        t = event.type
        if t == "proactivebench.trace_observation":
            status.set(turn=event.index, max_turns=event.total, retry="",
                       activity=f"agent is proposing for event {event.index}…")
            return self.timeline.add_event(event.index, event.total, event.time, event.event)
        elif t == "proactivebench.proposal_made":
            card = self.timeline.card(event.index)
            if card is not None:
                card.add_proposal(event.tasks, event.purpose, event.thoughts, event.response, event.model, event.attempt,
                                  writer=speaker(event.model, self.human_seat == "agent") if by_person(event.model) else "")
                self.timeline.changed()
            self._proposal = {"index": event.index, "attempt": event.attempt, "tasks": list(event.tasks),
                              "response": event.response}
            self._asked = self._verdicts = 0
            if self.human_seat != "user":  # a person is asked by awaiting_human, which follows
                many = f" ({len(event.tasks)} tasks)" if len(event.tasks) > 1 else ""
                status.set(retry="", activity=f"judge is judging event {event.index}{many}…")
        elif t == "proactivebench.proposal_verdict":
            card = self.timeline.card(event.index)
            if card is not None:
                many = int(self.spec.settings.get("candidates") or 1) > 1
                by = speaker(event.by, played=event.by_kind == "human")
                card.add_verdict(event.judgement, by, event.thought, event.candidate, many)
                self.timeline.changed()
            if event.by_kind != "human":
                self.query_one(MetricsPanel).set_judge(event.by)
            self._verdict_arrived(event)
        elif t == "proactivebench.proposal_metrics":
            self.query_one(MetricsPanel).show(event.confusion, event.metrics)
            card = self.timeline.card(event.index)
            if card is not None:
                if event.format_error:
                    card.add_format_error(event.format_error)
                card.set_outcome(event.outcome, event.judgement)
            cells = ", ".join(event.cells) if len(event.cells) > 1 else event.outcome
            scored = f"event {event.index}: {cells} ({event.judgement})" if event.outcome \
                else f"event {event.index} skipped (not counted): {event.format_error}" if event.format_error \
                else f"event {event.index} skipped (not counted)"
            status.set(activity=scored)
        return None

    def set_seat_input(self, enabled: bool) -> None:
        """The prompts open when the engine asks (`await_person`); here they only close."""
        if not enabled:
            self._hide_prompt()

    def session_over(self, event: Any) -> None:
        self.timeline.judged()

    def end_note(self, text: str) -> None:
        self.timeline.note(text, kind="end")

    def finished_activity(self, reason: str) -> str:
        """The status line has less room than the note: the reason and the two counts."""
        judged, skipped, _ = self.counts()
        return f"finished: {super().ended_text(reason)} · {judged} judged, {skipped} skipped"

    def _verdict_arrived(self, event: Any) -> None:
        """Once every verdict on the latest proposal is in, say what comes next when it is not
        the score at once: the agent answering the same event again after a rejection."""
        self._verdicts += 1
        tasks = self._proposal.get("tasks") or []
        if self._verdicts < max(len(tasks), 1):
            return
        rec = self.builder.record
        ev = rec.section.events[-1] if rec is not None and rec.section is not None and rec.section.events else None
        retries = int(self.spec.settings.get("retries") or 0)
        attempt = int(self._proposal.get("attempt") or 0)
        if ev is not None and ev.final is not None and ev.final.judgement().judgement == "rejected" and attempt < retries:
            self.status.set(activity=f"agent is proposing again for event {event.index} "
                                     f"(retry {attempt + 1}/{retries})…")

    def counts(self) -> tuple[int, int, int]:
        """(judged, skipped, left without a verdict) over the events run so far, from the run record."""
        rec = self.builder.record
        events = rec.section.events if rec is not None and rec.section is not None else []
        scored = [ev for ev in events if ev.judgement is not None]
        judged = sum(1 for ev in scored if ev.outcome is not None)
        return judged, len(scored) - judged, len(events) - len(scored)

    def ended_text(self, reason: str) -> str:
        """The end reason in words, with how many events were judged and skipped: "ran to the end;
        3 of 4 events judged, 1 skipped (not counted)", plus those a stop left without a verdict."""
        judged, skipped, cut = self.counts()
        text = f"{super().ended_text(reason)}; {judged} of {self.total} events judged, {skipped} skipped (not counted)"
        return text + (f", {cut} left without a verdict" if cut else "")

    # -- a person playing the user ------------------------------------------------------------

    def await_person(self, event: Any) -> None:
        if event.seat == "agent":
            self._await_proposal(event)
            return
        if event.seat != "user":
            return
        self.awaiting = "user"
        tasks = self._proposal.get("tasks") or []
        k = min(self._asked, max(len(tasks) - 1, 0))
        task = tasks[k] if tasks else None
        self.query_one(VerdictPrompt).ask(event.turn, self.total, task, candidate=k if tasks else None,
                                          of=max(len(tasks), 1))
        which = f" (task {k + 1}/{len(tasks)})" if len(tasks) > 1 else ""
        self.status.set(retry="", activity=f"waiting for your verdict on event {event.turn}{which}")
        self.timeline.show_card(event.turn)
        self.refresh_bindings()

    def _hide_prompt(self) -> None:
        self.awaiting = None
        self.query_one(VerdictPrompt).hide()
        for proposal in self.query(ProposalPrompt):
            proposal.hide()
        self.refresh_bindings()

    # -- a person playing the agent -----------------------------------------------------------

    def _await_proposal(self, event: Any) -> None:
        """The engine asks the person for event `turn`'s reply: the first one, or again after a
        rejection (the latest proposal was for the same event)."""
        self.awaiting = "agent"
        again = self._proposal.get("index") == event.turn
        candidates = int(self.spec.settings.get("candidates") or 1)
        self.query_one(ProposalPrompt).ask(event.turn, self.total, candidates, again=again)
        self.status.set(retry="", activity=f"your turn: propose for event {event.turn}, or stay quiet (ctrl+n)")
        self.timeline.show_card(event.turn)
        self.refresh_bindings()

    @on(ProposalPrompt.Proposed)
    def _proposed(self, event: ProposalPrompt.Proposed) -> None:
        if self.awaiting != "agent":
            return
        candidates = int(self.spec.settings.get("candidates") or 1)
        try:  # the engine's own reader: a reply it could not use is not sent, so the text stays to fix
            reply = parse_agent_text(event.text, candidates)
        except ValueError as exc:
            self.notify(f"That reply could not be used: {exc}", title="Proposal", severity="warning",
                        timeout=8, markup=False)
            return
        participant = self.seats.get("agent")
        if participant is not None and hasattr(participant, "submit"):
            prompt = self.query_one(ProposalPrompt)
            index = prompt.index
            participant.submit(event.text)
            self._hide_prompt()
            self.timeline.judged()
            said = f"you stay quiet on event {index}" if not reply.tasks else f"your proposal for event {index} is in"
            self.status.set(activity=f"{said}; the judge rates it…")

    def action_stay_quiet(self) -> None:
        self._proposed(ProposalPrompt.Proposed(QUIET))

    def action_verdict(self, code: str) -> None:
        if self.awaiting != "user":
            return
        participant = self.seats.get("user")
        if participant is not None and hasattr(participant, "submit"):
            index = self.query_one(VerdictPrompt).index
            participant.submit(code)
            self._asked += 1
            self._hide_prompt()
            self.timeline.judged()
            self.status.set(activity=f"your verdict on event {index} is in")

    def action_end_session(self) -> None:
        """ctrl+d: the person ends the session as the protocol lets them (UserStopped); the events
        judged so far are kept, the one being asked about has no verdict."""
        if self.awaiting != "user":
            return
        participant = self.seats.get("user")
        if participant is not None and hasattr(participant, "stop"):
            participant.stop()
            self._hide_prompt()
            self.timeline.judged()
            self.status.set(activity="ending the session…")

    def action_stop(self) -> None:
        """x: take the prompt down at once (no verdict can be given any more), then stop."""
        if self.running:
            self._hide_prompt()
            self.timeline.judged()
        super().action_stop()

    @on(VerdictPrompt.Chosen)
    def _chosen(self, event: VerdictPrompt.Chosen) -> None:
        self.action_verdict(event.code)

    # -- controls ---------------------------------------------------------------------------

    PANEL_ID = "#pb-side"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("verdict", "end_session"):
            # False (not None) hides them, so "a" and "s" fall through to auto-play and step.
            return self.running and self.awaiting == "user"
        if action == "stay_quiet":
            return self.running and self.awaiting == "agent"
        return super().check_action(action, parameters)

    def _seat_input(self) -> Any:
        """A person in the agent seat types into the proposal box (esc leaves it as every family's
        box is left; enter comes back to it)."""
        for prompt in self.query(ProposalPrompt):
            box = prompt.query_one("#proposal-input", Input)
            return box if prompt.display and not box.disabled else None
        return super()._seat_input()

    PALETTE = (
        ("autoplay", "Session: auto-play", "Run events without stopping"),
        ("step", "Session: step one event", "Run one more event, then hold"),
        ("pause", "Session: pause", "Hold before the next event"),
        ("stop", "Session: stop", "Stop now; the events judged so far are kept"),
        ("restart", "Session: restart", "Start again with the same settings"),
        ("copy_transcript", "Copy transcript", "Copy the events, proposals and verdicts to the clipboard (OSC 52)"),
        ("toggle_panel", "Toggle metrics panel", "Show or hide the metrics panel"),
        ("show_errors", "Show errors", "Details of the errors so far"),
        ("inspect_calls", "Inspect model calls", "What each model was sent and what came back, call by call"),
        ("fork", "Fork the session…", "Branch at a reply: edit it, or ask again with another model or instruction"),
        ("branches", "Branches…", "This session's fork tree, with each branch's score differences"),
        ("labels", "Verdicts and labels…", "Every judge verdict of this session, with your label beside it: agree, disagree, note"),
    )

    def transcript_text(self) -> str:
        """The run as plain text, from the run record (what was shown is what it holds)."""
        lines = [self.env.id, ""]
        rec = self.builder.record
        section = rec.section if rec is not None else None
        if section is None:
            return "\n".join(lines + ["(no events yet)"])
        for ev in section.events:
            lines.append(f"[event {ev.index}] {ev.time}: {plain(ev.event)}")
            for att in ev.attempts:
                head = f"  retry {att.attempt}: " if att.attempt else "  "
                offer = "; ".join(plain(t) for t in att.tasks) if att.tasks else "no help needed"
                lines.append(f"{head}agent ({att.model}) proposes: {offer}")
                lines.append(f"    purpose: {plain(att.purpose)}")
                lines.append(f"    thoughts: {plain(att.thoughts)}")
                for v in att.verdicts:
                    lines.append(f"  verdict by {v.by}: {v.judgement}" + (f" — {plain(v.thought)}" if v.thought else ""))
            lines.append(f"  = {ev.outcome or ev.judgement or 'not scored'}")
        c = section.confusion
        lines += ["", f"TP {c.tp}  FP {c.fp}  TN {c.tn}  FN {c.fn}  skipped {c.skipped}"]
        lines += [f"{label}: {show(section.metrics, key)}" for key, label in METRIC_LABELS]
        label = ablation_label(self.spec.settings)
        if label:
            lines.append(f"Protocol: {label}")
        return "\n".join(lines)
