"""The studio's drawing of an item for a family without its own view: every step file as a
block (stage, step, role and model, tokens, the output as literal JSON), then the verdict.

Why a generic one: the studio must show any run folder, a family's view or not (a plugin
family's pipeline, or a family whose view is not written yet); the step files say it all.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

from proactive_tui.synth.engine import ItemState, StepRecord
from proactive_tui.ui.studio.view import StageBlock, StudioItemView


def step_order(pipeline: Any, state: ItemState) -> list[tuple[str, StepRecord]]:
    """The item's steps in the pipeline's stage order (file names sort alphabetically, which is
    not the order they were made in); within a stage, by name (rounds and branches are numbered)."""
    stages = list(getattr(pipeline, "stages", ()))

    def key(pair: tuple[str, StepRecord]) -> tuple[int, str]:
        stage = pair[1].stage
        return (stages.index(stage) if stage in stages else len(stages), pair[0])

    return sorted(state.steps.items(), key=key)


def output_text(record: StepRecord) -> Text:
    """A step's output as pretty JSON, literal (model text is data, never markup)."""
    if record.rejection:
        return Text(f"rejected: {record.rejection}" + (f" ({record.detail})" if record.detail else ""), style="bold")
    return Text(json.dumps(record.output, indent=2, ensure_ascii=False, sort_keys=True))


def outcome_text(state: ItemState) -> Text:
    outcome = state.outcome
    if outcome is None:
        return Text("no verdict yet")
    if outcome.status == "kept":
        text = Text(f"kept ({outcome.tier or '-'})", style="bold")
    else:
        text = Text(f"rejected: {outcome.reason or '-'}", style="bold")
        if outcome.detail:
            text.append(f"\n{outcome.detail}")
    if outcome.decision is not None:
        d = outcome.decision
        verdict = d.pipeline_status + (f" ({d.pipeline_tier})" if d.pipeline_tier else "") + (
            f" ({d.pipeline_reason})" if d.pipeline_reason and d.pipeline_status == "rejected" else "")
        text.append(f"\ndecided by a person; the pipeline said {verdict}", style="italic")
    if outcome.edited_steps:
        text.append(f"\nsteps a person rewrote: {', '.join(outcome.edited_steps)}", style="italic")
    return text


class StepListView(StudioItemView):
    """Every step of an item as a block, in stage order; the step being called now last."""

    def blocks(self, state: ItemState, live: str | None) -> list[StageBlock]:
        out: list[StageBlock] = []
        for stem, record in step_order(self.pipeline, state):
            head = Text(f"{record.role} · {record.model} · {record.prompt_tokens + record.completion_tokens} tokens",
                        style="dim")
            body = Text.assemble(head, "\n", output_text(record))
            block_state = "rejected" if record.rejection else "edited" if record.edited is not None else "done"
            out.append(StageBlock(f"{record.stage}: {stem}", body, step=stem, state=block_state))
        if live is not None and live not in state.steps:
            out.append(StageBlock(f"{live}", Text("waiting for the model"), step=None, state="live"))
        out.append(StageBlock("verdict", outcome_text(state), step=None,
                              state="pending" if state.outcome is None else
                              "rejected" if state.outcome.status == "rejected" else "done"))
        return out
