"""ProactiveBench in the studio: one generated trace, stage by stage, from its step files.

What the gym makes, in the order it makes it (`families/proactivebench/synth.py`): the scene and
the user's profile, then per batch the user's activity, the events the environment turns it into
on the simulated clock, the agent's proposal (a task or nothing) and the verdict on it (the user
seat's or the reward judge's), then the item's outcome and a person's decision beside it.

The clock is the pipeline's: each event advances it by its `deltatime` clamped to 1..600 s
(`MAX_DELTA_S`). Its start is derived from the run's seed, which no step file holds, so the times
are read back: from the item's record (kept, or a rejection that carries the trace made so far),
else from the first proposal's input (the agent is shown each event with its time). Before the
first proposal the events show the elapsed simulated time (`t+0:01:30`); each shows its delta.
Every block that is one model call is bound to its step, so `e` in the studio edits it; model
text is drawn literally (rich Text, never markup).
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.text import Text

from proactive_tui.families.proactivebench import synth_prompts as sp
from proactive_tui.families.proactivebench.judges import ProposalReply
from proactive_tui.families.proactivebench.synth import MAX_DELTA_S, pb_step_rank
from proactive_tui.families.proactivebench.ui.proposal_card import VERDICT_MARK, clock_time
from proactive_tui.synth.engine import ItemState, Outcome, StepRecord
from proactive_tui.textsafe import plain
from proactive_tui.ui.studio.view import StageBlock, StudioItemView

BATCH_STEP = re.compile(r"(activity|events|propose|verdict)-(\d+)")
STAGE_TITLES = {"activity": "activity", "events": "events", "propose": "proposal", "verdict": "verdict"}


def _elapsed(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    return f"t+{hours}:{rest // 60:02d}:{rest % 60:02d}"


def _delta(event: dict[str, Any]) -> int:
    """The seconds the pipeline's clock advanced for this event (its clamp, `run_item`)."""
    raw = event.get("deltatime", 1)
    value = raw if isinstance(raw, int) and not isinstance(raw, bool) else 1
    return min(max(value, 1), MAX_DELTA_S)


def _event_text(event: dict[str, Any]) -> str:
    """An event as the trace holds it (the pipeline joins its whitespace)."""
    return " ".join(str(event.get("event", "")).split())


def _field(text: Text, name: str, value: Any) -> None:
    text.append(f"\n{name}: ", style="bold")
    if isinstance(value, list):
        value = ", ".join(plain(str(v)) for v in value) or "-"
    text.append(plain(str(value)) if value not in (None, "") else "-")


class ProactiveBenchStudioView(StudioItemView):
    """One ProactiveBench item as its step files hold it (see the module docstring)."""

    def _seat(self, stage: str) -> str:
        judge = getattr(getattr(self.pipeline, "options", None), "judge", "user")
        return {"scene": "environment", "events": "environment", "user": "user seat", "activity": "user seat",
                "propose": "agent", "verdict": "reward judge" if judge == "reward" else "user seat"}.get(stage, stage)

    def blocks(self, state: ItemState, live: str | None) -> list[StageBlock]:
        steps = dict(state.steps)
        names = sorted(steps, key=lambda s: (pb_step_rank(s), s))
        if live is not None and live not in steps:
            names = sorted([*names, live], key=lambda s: (pb_step_rank(s), s))
        start = self._clock_start(state)
        elapsed = 0
        blocks: list[StageBlock] = []
        for name in names:
            record = steps.get(name)
            if record is None:
                blocks.append(self._live_block(name))
                continue
            block_state = "rejected" if record.rejection else "edited" if record.edited is not None else "done"
            if name == live:
                block_state = "live"
            title, body = self._draw(name, record, state.item, start, elapsed)
            if record.stage == "events" and isinstance(record.output, dict):
                elapsed += sum(_delta(e) for e in record.output.get("events", []) if isinstance(e, dict))
            blocks.append(StageBlock(title, body, step=name, state=block_state))
        if not blocks:
            blocks.append(StageBlock("Nothing made yet", Text("step or auto starts this item's first call: the scene"),
                                     state="pending"))
        if state.outcome is not None:
            blocks.append(self._outcome_block(state.outcome))
        return blocks

    # -- one block per step ------------------------------------------------------------------------

    def _title(self, name: str) -> str:
        match = BATCH_STEP.fullmatch(name)
        if match:
            return f"Batch {match.group(2)} · {STAGE_TITLES[match.group(1)]}"
        return {"scene": "Scene", "user": "User profile"}.get(name, name)

    def _live_block(self, name: str) -> StageBlock:
        stage = BATCH_STEP.fullmatch(name).group(1) if BATCH_STEP.fullmatch(name) else name
        return StageBlock(self._title(name), Text(f"asking the {self._seat(stage)}…", style="italic"), step=None,
                          state="live")

    def _draw(self, name: str, record: StepRecord, item: str, start: float | None,
              elapsed: int) -> tuple[str, Text]:
        title = self._title(name)
        if record.rejection:
            body = Text()
            body.append(f"rejected: {plain(record.rejection)}", style="bold")
            if record.detail:
                body.append("\n" + plain(record.detail))
            return title, body
        out = record.output if isinstance(record.output, dict) else {}
        body = Text()
        if record.stage == "scene":
            scene = sp.SCENES.get(item.rsplit("-", 1)[0])
            if scene is not None:
                title = f"Scene · {scene['theme']}"
            body.append(plain(str(out.get("overview", ""))))
            _field(body, "entities", out.get("entities", []))
            _field(body, "agent operations", out.get("agent_ops", []))
        elif record.stage == "user":
            body.append(plain(str(out.get("name", ""))), style="bold")
            body.append(f", {out.get('age', '?')}, {plain(str(out.get('job', '')))}")
            _field(body, "education", out.get("education"))
            _field(body, "characteristics", out.get("characteristics", []))
            _field(body, "identities", out.get("identities", []))
            _field(body, "goal", out.get("goal"))
        elif record.stage == "activity":
            if out.get("is_finished"):
                body.append("finished", style="bold")
                body.append(" ")
                body.append("(read as the first action: a trace needs events)" if name == "activity-1"
                            else "(the user reached the goal: the trace ends)", style="italic")
                if out.get("act"):
                    body.append("\n" + plain(str(out.get("act"))))
            else:
                body.append(plain(str(out.get("act", ""))))
        elif record.stage == "events":
            body = self._events(out, start, elapsed)
        elif record.stage == "propose":
            # read as the pipeline reads it (its keys are tolerant: `Proactive Task`, `proactive_task`...)
            try:
                reply = ProposalReply.model_validate(out)
            except ValueError:
                reply = ProposalReply()
            if reply.proactive_task is None:
                body.append("nothing", style="bold")
                body.append(" ")
                body.append("(no help needed)", style="italic")
            else:
                body.append("proposes: ")
                body.append(plain(reply.proactive_task), style="bold")
            if reply.response:
                body.append("\n“" + plain(reply.response) + "”", style="italic")
            _field(body, "Purpose", reply.purpose)
            _field(body, "Thoughts", reply.thoughts)
        elif record.stage == "verdict":
            if "is_accepted" in out:
                judgement = "accepted" if out.get("is_accepted") else "rejected"
            else:
                judgement = str(out.get("judgement", "?"))
            body.append(f"{VERDICT_MARK.get(judgement, '?')} {judgement}", style="bold")
            body.append(" ")
            body.append(f"by the {self._seat('verdict')} ({plain(record.model)})", style="italic")
            if out.get("thought"):
                body.append("\n" + plain(str(out["thought"])))
        else:
            body.append(plain(str(record.output)))
        if record.stage not in ("verdict",):
            body.append(f"\n{self._seat(record.stage)}: {plain(record.model)}", style="italic")
        return title, body

    def _events(self, out: dict[str, Any], start: float | None, elapsed: int) -> Text:
        """The batch's events on the clock: the trace's times when the item has a record, else
        the elapsed simulated time; each with the seconds it advanced the clock."""
        body = Text()
        events = [e for e in out.get("events", []) if isinstance(e, dict)]
        if not events:
            body.append("no events", style="bold")
        at = elapsed
        for i, event in enumerate(events):
            delta = _delta(event)
            at += delta
            body.append("\n" if i else "")
            body.append(clock_time(str(start + at)) if start is not None else _elapsed(at), style="bold")
            body.append("  ")
            body.append(f"+{delta}s", style="italic")
            body.append("  ")
            body.append(plain(_event_text(event)) or "(empty event)")
        if out.get("thoughts"):
            body.append("\nthoughts: ", style="bold")
            body.append(plain(str(out["thoughts"])), style="italic")
        return body

    @staticmethod
    def _clock_start(state: ItemState) -> float | None:
        """Where the item's clock started: the first event's time less its delta. The time is
        the record's (the trace) or, before there is one, the one the agent was shown with the
        first batch (propose-1's input holds the observations with their times). None before
        the first proposal: the start is derived from the run's seed, which no step file holds."""
        first = state.steps.get("events-1")
        events = first.output.get("events") if first is not None and isinstance(first.output, dict) else None
        if not events or not isinstance(events[0], dict):
            return None
        record = state.outcome.record if state.outcome is not None else None
        trace = record.get("trace") if isinstance(record, dict) else None
        try:
            if trace:
                return float(trace[0]["observation"]["time"]) - _delta(events[0])
            shown = state.steps.get("propose-1")
            if shown is None:
                return None
            message = [m for m in shown.input if m.get("role") == "user"][-1]
            observations = json.loads(str(message.get("content", "")))["Observations"]
            return float(observations[0]["Time"]) - _delta(events[0])
        except (KeyError, IndexError, TypeError, ValueError):
            return None

    def _outcome_block(self, outcome: Outcome) -> StageBlock:
        body = Text()
        record = outcome.record if isinstance(outcome.record, dict) else {}
        trace = record.get("trace") or []
        if outcome.status == "kept":
            body.append(f"kept · scene {plain(outcome.tier or '-')}", style="bold")
            body.append(f"\n{len(trace)} events, {record.get('accepted', 0)} accepted proposals")
        else:
            body.append(f"rejected · {plain(outcome.reason or '-')}", style="bold")
            if outcome.detail and not (outcome.decision is not None and outcome.reason == "person"):
                body.append("\n" + plain(outcome.detail))  # a person's rejection is said below
            if trace and (outcome.decision is None or outcome.decision.pipeline_status == "rejected"):
                body.append(f"\nthe batches before it made a whole trace ({len(trace)} events): a person may keep it",
                            style="italic")
        if outcome.decision is not None:
            first = outcome.decision
            body.append(f"\n{outcome.status} by a person", style="bold")
            body.append(f" (the pipeline: {first.pipeline_status}"
                        + (f", {plain(first.pipeline_reason)}" if first.pipeline_reason else "") + ")")
        if outcome.edited_steps:
            body.append("\nsteps a person rewrote: " + ", ".join(plain(s) for s in outcome.edited_steps), style="italic")
        return StageBlock("Outcome", body, state="done" if outcome.status == "kept" else "rejected")
