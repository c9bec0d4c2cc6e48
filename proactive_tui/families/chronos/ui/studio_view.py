"""Chronos in the studio: one generated item drawn from its step files (`synth.engine.read_item`).

What a person follows, in the order the pipeline makes it: the scenario card (the `background`
step: persona, initial need, constraints and when each is revealed, the monitored states, the
intention shift of a complex item, the two endings), then each branch's dialogue growing
utterance by utterance. An utterance is the draft its critic passed (total at least the run's
threshold, and `passed`), shown with its score; the drafts dropped on the way (a low score, or a
rule of the protocol: no critic was asked then) are one key away (`r`), each with its score or
reason, so the dialogue reads as the session the branch became. Each branch ends with how it
ended, then the item's verdict and a person's decision when there is one.

Everything is derived from the files, so the same drawing serves a run under way (a draft with
no critic file yet is being scored or was refused by rule: the next attempt, or the result's
`drafts` list, says which), a finished one, and one made headless. Blocks are bound to their
step (the card to `background`, an utterance to its draft), which is what `e` edits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.widget import Widget

from proactive_tui.families.chronos.synth import BRANCHES, PAPER_THRESHOLD, chronos_step_rank
from proactive_tui.synth.engine import ItemState, Outcome, StepRecord
from proactive_tui.textsafe import plain
from proactive_tui.ui.studio.view import StageBlock, StudioItemView

WIDE = 110
"""The view's width (columns) from which the two branches sit side by side; below, they stack."""

ENDING_WANTED = {"positive": ("completed", "the agent completes the task after the user's thanks"),
                 "negative": ("kept_silent", "the agent keeps silent through the last state")}


@dataclass
class Draft:
    """One draft of one utterance and what became of it."""

    step: str
    turn: int
    role: str
    attempt: int
    record: StepRecord
    critic: StepRecord | None
    score: int | None = None
    kept: bool = False
    why: str = ""
    """Why it was dropped (a score below the threshold, not passed, a rule), '' otherwise."""
    scoring: bool = False
    """Its critic is being called now (or has not been called yet, in a run under way)."""


def _total(critic: StepRecord) -> int | None:
    scores = (critic.output or {}).get("scores") if isinstance(critic.output, dict) else None
    if not isinstance(scores, dict):
        return None
    return sum(v for v in scores.values() if isinstance(v, int))


def _rule_reason(outcome: Outcome | None, branch: str, turn: int, role: str, attempt: int) -> str:
    """A rule's reason for a draft no critic scored: the record's drafts list (a finished item
    that got past the background), else the rejection's detail (`draft N: reason`)."""
    if outcome is None:
        return ""
    for d in (outcome.record or {}).get("drafts") or []:
        if (d.get("branch"), d.get("turn"), d.get("role"), d.get("attempt")) == (branch, turn, role, attempt):
            return str(d.get("rule") or "")
    if outcome.reason == f"critic_{role}" and outcome.detail.startswith(f"{branch} branch, turn {turn}:"):
        match = re.search(rf"draft {attempt}: (.*?)(?:; draft \d+: |\)$)", outcome.detail)
        if match:
            return match.group(1)
    return ""


def branch_turns(state: ItemState, branch: str, threshold: int, live: str | None) -> list[list[Draft]]:
    """The branch's utterances in the order they were made (user and agent, turn by turn), each
    as its drafts in attempt order."""
    ranked = sorted((r, name) for name in state.steps if (r := chronos_step_rank(name)) is not None
                    and r[0] == branch and r[4] == 0)
    groups: dict[tuple[int, int], list[Draft]] = {}
    for (_, turn, role_rank, attempt, _), name in ranked:
        role = "user" if role_rank == 0 else "agent"
        record = state.steps[name]
        critic = state.steps.get(f"{name}-critic")
        draft = Draft(step=name, turn=turn, role=role, attempt=attempt, record=record, critic=critic)
        groups.setdefault((turn, role_rank), []).append(draft)
    last_group = max(groups) if groups else None
    live_rank = chronos_step_rank(live) if live else None
    for key, drafts in groups.items():
        for draft in drafts:
            # Something of the branch was made (or is being made) after this draft's critic would
            # have been: no critic was asked, so a rule refused the draft.
            later = draft is not drafts[-1] or key != last_group or (
                live_rank is not None and live_rank[0] == branch
                and live_rank > (branch, draft.turn, key[1], draft.attempt, 1))
            if draft.record.rejection:
                draft.why = f"{draft.record.rejection}: {draft.record.detail}".rstrip(": ")
            elif draft.critic is not None and draft.critic.rejection:
                draft.why = f"critic {draft.critic.rejection}"
            elif draft.critic is not None:
                draft.score = _total(draft.critic)
                passed = bool((draft.critic.output or {}).get("passed"))
                draft.kept = draft.score is not None and draft.score >= threshold and passed
                if not draft.kept:
                    draft.why = f"score {draft.score}/100 (below {threshold})" if (draft.score or 0) < threshold \
                        else f"score {draft.score}/100, but the critic did not pass it"
            elif live == f"{draft.step}-critic" or not (later or state.outcome is not None):
                draft.scoring = True
            else:
                draft.why = _rule_reason(state.outcome, branch, draft.turn, draft.role, draft.attempt) or \
                    "refused by the protocol's rule (no critic asked)"
    return [groups[k] for k in sorted(groups)]


def _observation(text: str) -> tuple[str, str] | None:
    """(title, body) of an observation the agent answered (a look-up's or the monitor's), or None
    for a person's message."""
    match = re.match(r'<observation source="([a-z_]+)"(?: time="([^"]*)")?>', text)
    if match is None:
        return None
    source = "Monitor scan" if match.group(1) == "internal_trigger" else "Look-up"
    when = f" · {match.group(2)}" if match.group(2) else ""
    body = text.split("Available now:", 1)[1] if "Available now:" in text else text
    body = body.replace("</observation>", "").strip()
    return f"{source}{when}", f"available now:\n{body}"


def _state_line(text: Text, state: dict[str, Any], indent: str = "• ") -> None:
    mark = "✓ meets the needs" if state.get("meets_needs") else "✗ does not meet them"
    listings = "; ".join(plain(str(x)) for x in state.get("listings") or []) or "(nothing listed)"
    text.append(f"{indent}{plain(str(state.get('time', '?')))}  ", style="bold")
    text.append(f"{listings}  ")
    text.append(mark, style="italic")
    if state.get("note"):
        text.append(f"  ({plain(str(state['note']))})", style="italic")
    text.append("\n")


def card_text(output: dict[str, Any]) -> Text:
    """The scenario card, literally (the model's text is data)."""
    text = Text()

    def field(label: str, value: Any) -> None:
        text.append(f"{label}: ", style="bold")
        text.append(plain(str(value or "")) + "\n")

    field("Title", output.get("title"))
    field("Persona", output.get("persona"))
    field("Initial need", output.get("initial_need"))
    field("Intention", output.get("intention"))
    text.append("Constraints:\n", style="bold")
    for c in output.get("constraints") or []:
        turn = c.get("reveal_turn", 0)
        when = "in the opening" if not turn else f"revealed at turn {turn}"
        text.append(f"• {plain(str(c.get('key')))} = {plain(str(c.get('value')))}  ")
        text.append(f"({when})\n", style="italic")
    field("Start", output.get("start_time"))
    text.append("States (the monitor's scans):\n", style="bold")
    for state in output.get("timeline") or []:
        _state_line(text, state)
    shift = output.get("intention_shift")
    if isinstance(shift, dict):
        text.append("Intention shift: ", style="bold")
        text.append(f"“{plain(str(shift.get('utterance', '')))}”\n")
        text.append(f"• new intention: {plain(str(shift.get('intention', '')))}\n")
        for kv in shift.get("constraints") or []:
            text.append(f"• {plain(str(kv.get('key')))} = {plain(str(kv.get('value')))}\n")
        text.append("States after the shift:\n", style="bold")
        for state in shift.get("timeline") or []:
            _state_line(text, state)
    text.append("Endings:\n", style="bold")
    for branch in BRANCHES:
        ending = output.get(f"{branch}_ending")
        if isinstance(ending, dict):
            text.append(f"• {branch}: ")
            _state_line(text, ending, "")
    text.rstrip()
    return text


def _agent_body(output: dict[str, Any]) -> Text:
    text = Text(plain(str(output.get("response_text") or "")) or "(no text)")
    task = output.get("task_description") or {}
    trigger = output.get("trigger_condition") or {}
    text.append("\n⤷ ", style="bold")
    text.append(f"{plain(str(output.get('proactive_action', '?')))} / {plain(str(task.get('status', '?')))}",
                style="bold")
    if trigger.get("value"):
        text.append(f" · watch {plain(str(trigger.get('type') or 'EVENT'))}: {plain(str(trigger['value']))}")
    return text


def _draft_body(draft: Draft) -> Text:
    output = draft.record.output if isinstance(draft.record.output, dict) else {}
    if draft.record.rejection:
        return Text(f"(no usable reply: {plain(draft.why)})", style="italic")
    if draft.role == "agent":
        return _agent_body(output)
    return Text(plain(str(output.get("text") or "")))


def _edited(draft: Draft) -> bool:
    return draft.record.edited is not None or (draft.critic is not None and draft.critic.edited is not None)


class ChronosStudioView(StudioItemView):
    """The scenario card, both branches' dialogues with each utterance's critic score, the
    branches' endings and the item's verdict (see the module docstring)."""

    BINDINGS = [Binding("r", "toggle_rejected", "Rejected drafts")]

    DEFAULT_CSS = """
    ChronosStudioView .-branches { height: auto; }
    ChronosStudioView .-branch-column { width: 1fr; height: auto; }
    ChronosStudioView .-branch-column.-positive { margin-right: 1; }
    ChronosStudioView StageBlock.-branch-head { border-left: thick $primary; }
    ChronosStudioView StageBlock.-observation { color: $text-muted; }
    """

    def __init__(self, pipeline: Any, *, id: str | None = None) -> None:
        super().__init__(pipeline, id=id)
        self.show_rejected = False
        self._wide: bool | None = None

    @property
    def threshold(self) -> int:
        """The run's critic threshold (the manifest's options the pipeline was built from)."""
        options = getattr(self.pipeline, "options", None)
        return getattr(options, "threshold", PAPER_THRESHOLD)

    def action_toggle_rejected(self) -> None:
        """`r`: show or hide the drafts the critic or a rule dropped."""
        self.show_rejected = not self.show_rejected
        if self.state is not None:
            self.show(self.state, self.live)
            # A hidden draft that had the focus is gone: keep the focus in the view, so the key
            # that hid it shows it again.
            self.call_after_refresh(self._keep_focus)

    def _keep_focus(self) -> None:
        if self.app.focused is None:
            self.focus()

    # -- the blocks ------------------------------------------------------------------------------

    def blocks(self, state: ItemState, live: str | None) -> list[StageBlock]:
        out = [self._card(state, live)]
        background = state.steps.get("background")
        opening = ""
        if background is not None and isinstance(background.output, dict) and not background.rejection:
            opening = str(background.output.get("initial_need") or "")
        for branch in BRANCHES:
            out.extend(self._branch(state, branch, live, opening))
        out.extend(self._verdict(state))
        return out

    def _card(self, state: ItemState, live: str | None) -> StageBlock:
        record = state.steps.get("background")
        if record is None:
            block = StageBlock("Scenario background", "the generator writes the persona, needs, constraints, "
                               "states and endings", "background" if live == "background" else None,
                               state="live" if live == "background" else "pending")
        elif record.rejection:
            block = StageBlock("Scenario background", Text(f"no usable reply: {plain(record.rejection)} "
                                                           f"{plain(record.detail)}".rstrip()), "background",
                               state="rejected")
        else:
            tier = state.item.rsplit("-", 2)[1] if state.item.count("-") >= 2 else ""
            # Rejected with no dialogue played: the scenario itself failed a check (an assumption,
            # the loader), which the verdict below names.
            refused = state.outcome is not None and state.outcome.status == "rejected" and \
                state.outcome.decision is None and not any(chronos_step_rank(s) for s in state.steps)
            block = StageBlock(f"Scenario card · {tier}".rstrip(" ·"), card_text(record.output or {}), "background",
                               state="edited" if record.edited is not None else "rejected" if refused else "done")
        block.branch = None
        return block

    def _branch(self, state: ItemState, branch: str, live: str | None, opening: str) -> list[StageBlock]:
        if not opening:
            return []
        played = any((r := chronos_step_rank(s)) is not None and r[0] == branch for s in [*state.steps, live or ""])
        if not played and state.outcome is not None:
            return []  # the item was decided before this branch was played
        want, meaning = ENDING_WANTED[branch]
        head = StageBlock(f"{branch.capitalize()} branch", Text(f"must end: {meaning}", style="italic"))
        head.add_class("-branch-head")
        first = StageBlock("User · opening", Text(plain(opening)))
        blocks = [head, first]
        turns = branch_turns(state, branch, self.threshold, live)
        for drafts in turns:
            blocks.extend(self._utterance(drafts, live))
        rank = chronos_step_rank(live) if live else None
        if rank is not None and rank[0] == branch and rank[4] == 0 and live not in state.steps:
            who = "User" if rank[2] == 0 else "Agent"
            blocks.append(StageBlock(f"{who} · turn {rank[1]} · draft {rank[3]}", Text("drafting…", style="italic"),
                                     live, state="live"))
        ending = self._ending(state, branch, want)
        if ending is not None:
            blocks.append(ending)
        for block in blocks:
            block.branch = branch
        return blocks

    def _utterance(self, drafts: list[Draft], live: str | None) -> list[StageBlock]:
        kept = next((d for d in drafts if d.kept or d.scoring), None)
        dropped = [d for d in drafts if not (d.kept or d.scoring)]
        blocks: list[StageBlock] = []
        first = drafts[0]
        who = "User" if first.role == "user" else "Agent"
        if first.role == "agent":
            context = first.record.input[-1].get("content") if first.record.input else None
            seen = _observation(str(context)) if isinstance(context, str) else None
            if seen is not None:
                note = StageBlock(seen[0], Text(plain(seen[1])))
                note.add_class("-observation")
                blocks.append(note)
        if self.show_rejected:
            for d in dropped:
                body = _draft_body(d)
                body.append("\n✗ dropped: ", style="bold")
                body.append(plain(d.why))
                blocks.append(StageBlock(f"Dropped {d.role} draft · turn {d.turn} · draft {d.attempt}", body, d.step,
                                         state="rejected"))
        hidden = "" if self.show_rejected or not dropped else \
            f"  ({len(dropped)} dropped draft{'s' if len(dropped) > 1 else ''}: r shows)"
        if kept is not None:
            title = f"{who} · turn {kept.turn}"
            if kept.scoring:
                title += " · critic scoring…" if live == f"{kept.step}-critic" else " · awaiting its critic"
            else:
                title += f" · critic {kept.score}/100"
            if kept.attempt > 1:
                title += f" · draft {kept.attempt}"
            body = _draft_body(kept)
            if hidden:
                body.append(hidden, style="italic")
            state = "live" if kept.scoring and live == f"{kept.step}-critic" else \
                "pending" if kept.scoring else "edited" if _edited(kept) else "done"
            blocks.append(StageBlock(title, body, kept.step, state=state))
        elif dropped and not self.show_rejected:
            last = dropped[-1]
            body = Text(f"no {who.lower()} draft kept: {len(dropped)} dropped (last: {plain(last.why)})")
            body.append("  r shows them", style="italic")
            blocks.append(StageBlock(f"{who} · turn {last.turn}", body, last.step, state="rejected"))
        return blocks

    def _ending(self, state: ItemState, branch: str, want: str) -> StageBlock | None:
        outcome = state.outcome
        if outcome is None:
            return None
        ended = ((outcome.record or {}).get("endings") or {}).get(branch)
        reason = outcome.decision.pipeline_reason if outcome.decision else outcome.reason
        pipeline_kept = (outcome.decision.pipeline_status if outcome.decision else outcome.status) == "kept"
        if isinstance(ended, dict):
            good = ended.get("reason") == want
            text = Text(f"{plain(str(ended.get('reason')))}: {plain(str(ended.get('detail') or ''))}".rstrip(": "))
        elif pipeline_kept:
            good, text = True, Text(f"{want}, as the branch must end")
        elif reason and reason.startswith("critic_") and outcome.detail.startswith(f"{branch} branch"):
            good, text = False, Text(f"stopped: {plain(outcome.detail)}")
        elif reason == f"branch_{branch}":
            good, text = False, Text(plain(outcome.detail))
        elif reason and (reason.startswith(("critic_", "branch_"))):
            good, text = False, Text("not played to an ending (the item was stopped on the other branch)")
        else:
            return None
        return StageBlock(f"{branch.capitalize()} ending · " + ("as it must" if good else "not as it must"), text,
                          state="done" if good else "rejected")

    def _verdict(self, state: ItemState) -> list[StageBlock]:
        outcome = state.outcome
        if outcome is None:
            return []
        decision = outcome.decision
        text = Text()
        if decision is not None:
            text.append("The pipeline: ", style="bold")
            text.append(f"{decision.pipeline_status}"
                        + (f" ({decision.pipeline_tier})" if decision.pipeline_status == "kept" else "")
                        + (f" — {decision.pipeline_reason}" if decision.pipeline_reason else ""))
            text.append("\nA person decided: ", style="bold")
            text.append(f"{outcome.status}" + (f" ({outcome.tier})" if outcome.status == "kept" and outcome.tier else ""))
        elif outcome.status == "kept":
            text.append(f"kept as {outcome.tier}")
        else:
            text.append(f"rejected: {plain(outcome.reason or '')}", style="bold")
        if outcome.detail and not (decision is None and outcome.status == "kept"):
            text.append(f"\n{plain(outcome.detail)}")
        if outcome.edited_steps:
            text.append(f"\nrewritten by a person: {', '.join(outcome.edited_steps)}", style="italic")
        title = "Verdict · decided by a person" if decision is not None else "Verdict"
        block = StageBlock(title, text, state="edited" if decision is not None else
                           "done" if outcome.status == "kept" else "rejected")
        block.branch = None
        return [block]

    # -- the layout ------------------------------------------------------------------------------

    def _is_wide(self) -> bool:
        width = self.size.width or (self.app.size.width if self.is_attached else 0)
        return width >= WIDE

    def place_blocks(self, blocks: list[Widget]) -> None:
        """The two branches in two columns when the view is wide (the base class's `show`
        keeps the focus)."""
        state = self.state
        self._wide = self._is_wide()
        if self._wide and state is not None:
            columns = {b: [x for x in blocks if getattr(x, "branch", None) == b] for b in BRANCHES}
            head = [x for x in blocks if getattr(x, "branch", None) is None and x is not blocks[-1]] if \
                state.outcome is not None else [x for x in blocks if getattr(x, "branch", None) is None]
            tail = [blocks[-1]] if state.outcome is not None and getattr(blocks[-1], "branch", None) is None else []
            self.mount_all(head)
            if any(columns.values()):
                self.mount(Horizontal(*(Vertical(*columns[b], classes=f"-branch-column -{b}") for b in BRANCHES),
                                      classes="-branches"))
            self.mount_all(tail)
        else:
            self.mount_all(blocks)

    def on_resize(self, event: Resize) -> None:
        if self.state is not None and self._wide is not None and self._is_wide() != self._wide:
            self.show(self.state, self.live)
