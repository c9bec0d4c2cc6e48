"""ProactiveEval's drawing of one generated item in the studio, read from its step files.

The order is the pipeline's (`families/proactiveeval/synth.py`): the topic path, the environment
(U, F), the target candidates side by side, the merged reference, each probe round (every probe's
guess beside the reference, with the judge's same / different verdict), each refinement round as
a diff of U and F against the text it rewrote, the validators' votes, then the tier or the
rejection, and a person's decision beside the pipeline's verdict. Every block that is one model
call is bound to its step, so the studio's edit (`e`) rewrites that step and re-runs what follows.

Model output is data: every text is a rich `Text`, never markup.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import Container, Vertical
from textual.events import Resize
from textual.widgets import Static

from proactive_tui.synth.engine import ItemState, StepRecord
from proactive_tui.ui.studio.view import StageBlock, StudioItemView

PROBES = 3
FIELDS = (("user_information", "user information"), ("trigger_factor", "trigger factor"))
KINDS = (("obfuscate", "obfuscation"), ("noise", "noise injection"))
_TOPIC = re.compile(r"^Topic: (.*)$", re.M)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class StageRow(Vertical):
    """Blocks of one rank side by side (the candidates, a round's probes, the votes) under a
    title, as many columns as fit at `MIN_COLUMN` cells each, so 80 columns wraps five
    candidates onto rows of two instead of squeezing them to a word a line. `step` and `title`
    make it read like a block to the studio's focus keeping (it is no step itself)."""

    MIN_COLUMN = 34
    DEFAULT_CSS = """
    StageRow { height: auto; margin: 0 0 1 0; }
    StageRow > .stage-row-title { color: $text-muted; text-style: bold; }
    StageRow > .stage-row-grid { layout: grid; grid-size: 1; grid-gutter: 1 2; grid-rows: auto; height: auto; }
    StageRow > .stage-row-grid > StageBlock { margin: 0; }
    """

    def __init__(self, title: str, blocks: list[StageBlock]) -> None:
        super().__init__()
        self.step: str | None = None
        self.title = title
        self.blocks = blocks

    def compose(self):
        yield Static(Text(self.title), classes="stage-row-title")
        with Container(classes="stage-row-grid"):
            yield from self.blocks

    def on_resize(self, event: Resize) -> None:
        self._fit(event.size.width)

    def on_mount(self) -> None:
        self._fit(self.size.width)

    def _fit(self, width: int) -> None:
        if width <= 0:
            return
        columns = max(1, min(len(self.blocks), (width + 2) // (self.MIN_COLUMN + 2)))
        grid = self.query_one(".stage-row-grid")
        if grid.styles.grid_size_columns != columns:
            grid.styles.grid_size_columns = columns


def topic_path(state: ItemState) -> str | None:
    """The leaf topic the environment was made from, as its prompt names it (the pipeline puts
    `Topic: <root / ... / leaf>` in the environment request)."""
    record = state.steps.get("environment")
    if record is None:
        return None
    for message in reversed(record.input):
        match = _TOPIC.search(str(message.get("content", "")))
        if match:
            return match.group(1).strip()
    return None


def _pieces(text: str) -> list[str]:
    """A text cut into lines and sentences, so a rewrite's diff shows what changed at the size a
    person reads (a one-paragraph field would otherwise be one removed and one added line)."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(p for p in _SENTENCE.split(line.strip()) if p)
    return out


def diff_text(before: str, after: str, bad: str = "red", good: str = "green") -> Text:
    """`after` against `before`: removed pieces `- ` in the theme's error colour (`bad`), added
    `+ ` in its success colour (`good`), unchanged ones dimmed; literal text throughout."""
    out = Text()
    changed = False
    for line in difflib.ndiff(_pieces(before), _pieces(after)):
        tag, body = line[:2], line[2:]
        if tag == "? ":
            continue
        changed = changed or tag in ("- ", "+ ")
        if out:
            out.append("\n")
        if tag == "- ":
            out.append("- " + body, style=bad)
        elif tag == "+ ":
            out.append("+ " + body, style=good)
        else:
            out.append("  " + body, style="dim")
    if not changed:
        return Text("(no change) ", style="italic").append(out)
    return out


def _state(record: StepRecord | None, step: str, live: str | None) -> str:
    if record is None:
        return "live" if step == live else "pending"
    if record.rejection:
        return "rejected"
    if record.edited is not None:
        return "edited"
    return "done"


def _rejected_body(record: StepRecord) -> Text:
    return Text(f"the reply could not be used ({record.rejection}): {record.detail}".rstrip(": "))


def _label(text: str, value: str) -> Text:
    out = Text()
    out.append(text + ": ", style="bold")
    out.append(value)  # the model's text in the plain style: only the label is bold
    return out


def _numbered(items: list[Any]) -> Text:
    out = Text()
    for i, item in enumerate(items, 1):
        out.append(("\n" if i > 1 else "") + f"{i}. ")
        out.append(str(item))
    return out


class ProactiveEvalStudioView(StudioItemView):
    """One ProactiveEval item, stage by stage (see the module docstring)."""

    @classmethod
    def setup_tool(cls) -> tuple[str, type] | None:
        from proactive_tui.families.proactiveeval.ui.topic_tree import TopicTreeScreen

        return ("Topic tree…", TopicTreeScreen)

    good = "green"
    bad = "red"

    def _colours(self) -> None:
        """The theme's success and error colours for the verdicts and the diffs (a light theme's
        are darker; rich styles cannot name Textual's CSS variables)."""
        theme = self.app.current_theme if self.is_attached else None
        self.good = (theme.success if theme is not None else None) or "green"
        self.bad = (theme.error if theme is not None else None) or "red"

    def _planned_topic(self, item: str) -> str | None:
        """Before the environment is made: the leaf the pipeline will draw for `item`, derived
        as it derives it, when the run was given its tree (`--tree`, as the studio's topic tree
        gives it); None when the tree is made during the run."""
        options = getattr(self.pipeline, "options", None)
        tree = getattr(options, "tree", None)
        domain, _, number = item.rpartition("-")
        if not isinstance(tree, dict) or domain not in tree or not number.isdigit():
            return None
        from proactive_tui.families.proactiveeval.synth import TopicNode

        try:
            leaves = getattr(self.pipeline, "chosen", {}).get(domain) or TopicNode.model_validate(tree[domain]).leaves()
            return self.pipeline._topic(domain, int(number), leaves)
        except (ValueError, AttributeError, IndexError, ZeroDivisionError):
            return None

    def _option(self, name: str, default: int) -> int:
        options = getattr(self.pipeline, "options", None)
        return int(getattr(options, name, default) or default)

    def _block(self, state: ItemState, step: str, title: str, body: RenderableType | None, live: str | None,
               *, pending: str = "") -> StageBlock | None:
        """The block of one step: its output drawn by `body`, or what became of the call (live,
        rejected); None for a step neither on disk nor being called."""
        record = state.steps.get(step)
        shown = _state(record, step, live)
        if record is None and shown == "pending" and not pending:
            return None
        if record is None:
            body = Text(pending or "", style="italic")
        elif record.rejection:
            body = _rejected_body(record)
        return StageBlock(title, body if body is not None else Text(""), step, state=shown)

    def blocks(self, state: ItemState, live: str | None) -> list[StageBlock]:
        steps = state.steps
        out: list[Any] = []
        self._colours()

        path = topic_path(state) or self._planned_topic(state.item)
        out.append(StageBlock("Topic", Text(path or "(the environment's topic is chosen when it is made)",
                                            style="" if path else "italic")))

        env = steps.get("environment")
        env_body = None
        if env is not None and isinstance(env.output, dict):
            env_body = Group(_label("User information (U)", str(env.output.get("user_information", ""))),
                             _label("Trigger factor (F)", str(env.output.get("trigger_factor", ""))))
        block = self._block(state, "environment", "Environment", env_body, live)
        if block is not None:
            out.append(block)
        texts = {f: str((env.output or {}).get(f, "")) for f, _ in FIELDS} if env is not None and isinstance(
            env.output, dict) else None

        k_count = max([self._option("candidates", 5)] + [int(s.split("-")[1]) for s in steps
                                                          if re.fullmatch(r"candidate-\d+", s)])
        if any(s.startswith("candidate-") for s in steps) or (live or "").startswith("candidate-"):
            row = []
            for k in range(1, k_count + 1):
                record = steps.get(f"candidate-{k}")
                body = None
                if record is not None and isinstance(record.output, dict):
                    body = Group(Text(str(record.output.get("target", ""))),
                                 _numbered(list(record.output.get("sub_targets") or [])))
                row.append(self._block(state, f"candidate-{k}", f"Candidate {k}", body, live, pending="waiting"))
            out.append(StageRow(f"Target candidates ({k_count})", [b for b in row if b is not None]))

        ensemble = steps.get("ensemble")
        reference = ""
        if ensemble is not None and isinstance(ensemble.output, dict):
            reference = str(ensemble.output.get("target", ""))
            body = Group(Text(reference, style="bold"), _numbered(list(ensemble.output.get("sub_targets") or [])),
                         Text(str(ensemble.output.get("analysis", "")), style="dim italic"))
            block = self._block(state, "ensemble", "Merged reference (ensemble)", body, live)
        else:
            block = self._block(state, "ensemble", "Merged reference (ensemble)", None, live)
        if block is not None:
            out.append(block)

        rounds = sorted({int(m.group(1)) for s in [*steps, live or ""]
                         if (m := re.fullmatch(r"(?:probe|judge)-r(\d+)(?:-\d+)?", s))} |
                        {int(m.group(1)) for s in [*steps, live or ""]
                         if (m := re.fullmatch(r"(?:obfuscate|noise)-\w+-r(\d+)", s))})
        for r in rounds:
            if r >= 1:
                out.extend(self._refinement(state, r, texts, live))
                if texts is not None:
                    for field, _ in FIELDS:
                        record = steps.get(f"noise-{field}-r{r}")
                        if record is not None and isinstance(record.output, dict):
                            texts[field] = str(record.output.get("text", ""))
            probe_row = self._probe_round(state, r, reference, live)
            if probe_row is not None:
                out.append(probe_row)

        votes = []
        yes = 0
        for k in range(1, self._option("validators", 5) + 1):
            record = steps.get(f"validator-{k}")
            body = None
            if record is not None and isinstance(record.output, dict):
                best = bool(record.output.get("reference_is_best"))
                yes += best
                body = Group(Text("yes: the reference is the best target" if best else "no",
                                  style=f"bold {self.good}" if best else f"bold {self.bad}"),
                             Text(str(record.output.get("reasoning", ""))))
            block = self._block(state, f"validator-{k}", f"Validator {k}", body, live,
                                pending="waiting" if any(s.startswith("validator-") for s in [*steps, live or ""])
                                else "")
            if block is not None:
                votes.append(block)
        if votes:
            done = sum(1 for k in range(1, self._option("validators", 5) + 1) if f"validator-{k}" in steps)
            out.append(StageRow(f"Final check: {yes} of {done} votes say the reference is the best target", votes))

        if state.outcome is not None:
            out.append(self._verdict(state))
        return out

    def _probe_round(self, state: ItemState, r: int, reference: str, live: str | None) -> StageRow | None:
        steps = state.steps
        judge = steps.get(f"judge-r{r}")
        matches = list(judge.output.get("matches") or []) if judge is not None and isinstance(judge.output,
                                                                                              dict) else []
        row: list[StageBlock] = [StageBlock("Reference", Text(reference or "(no reference)"))]
        for k in range(1, PROBES + 1):
            step = f"probe-r{r}-{k}"
            record = steps.get(step)
            body = None
            if record is not None and isinstance(record.output, dict):
                guess = Text(str(record.output.get("target", "")))
                if k - 1 < len(matches):
                    same = bool(matches[k - 1])
                    verdict = Text("judge: same" if same else "judge: different",
                                   style=f"bold {self.good}" if same else f"bold {self.bad}")
                elif judge is not None and judge.rejection:
                    verdict = Text("judge: no verdict", style="italic")
                else:
                    verdict = Text("judge: …", style="italic")
                body = Group(guess, verdict)
            block = self._block(state, step, f"Probe {k} ({record.model if record else 'probe' + str(k)})", body,
                                live, pending="waiting")
            if block is not None:
                row.append(block)
        right = sum(1 for m in matches if m)
        if judge is not None and not judge.rejection:
            if right >= 2:
                then = "too easy: refine" if r < self._option("max_rounds", 5) else "too easy at the round cap"
            else:
                then = "hard" if right == 0 else "fair"
            summary = Text(f"{right} of {len(matches)} probes conveyed the reference: {then}")
            row.append(StageBlock(f"Judge (round {r})", summary, f"judge-r{r}",
                                  state="edited" if judge.edited is not None else "done"))
        else:
            block = self._block(state, f"judge-r{r}", f"Judge (round {r})", None, live)
            if block is not None:
                row.append(block)
        title = "Difficulty probe" if r == 0 else f"Difficulty probe after refinement round {r}"
        return StageRow(title, row)

    def _refinement(self, state: ItemState, r: int, texts: dict[str, str] | None, live: str | None) -> list[Any]:
        """Round `r`'s rewrites, each drawn as a diff against the text it rewrote (obfuscation
        against the round before, noise against the obfuscation)."""
        blocks: list[StageBlock] = []
        current = dict(texts or {})
        for kind, kind_name in KINDS:
            for field, field_name in FIELDS:
                step = f"{kind}-{field}-r{r}"
                record = state.steps.get(step)
                body = None
                if record is not None and isinstance(record.output, dict):
                    after = str(record.output.get("text", ""))
                    body = diff_text(current.get(field, ""), after, self.bad, self.good)
                    if not record.output.get("reference_still_valid", True):
                        body.append("\nthe rewrite says the reference no longer holds", style=f"bold {self.bad}")
                block = self._block(state, step, f"{kind_name.capitalize()} of the {field_name}", body, live)
                if block is not None:
                    blocks.append(block)
            for field, _ in FIELDS:
                record = state.steps.get(f"{kind}-{field}-r{r}")
                if record is not None and isinstance(record.output, dict):
                    current[field] = str(record.output.get("text", ""))
        return [StageRow(f"Refinement round {r}: U and F against the round before", blocks)] if blocks else []

    def _verdict(self, state: ItemState) -> StageBlock:
        outcome = state.outcome
        assert outcome is not None
        lines: list[Text] = []
        if outcome.status == "kept":
            lines.append(Text(f"kept: tier {outcome.tier}", style=f"bold {self.good}"))
        else:
            line = Text(f"rejected: {outcome.reason}", style=f"bold {self.bad}")
            lines.append(line)
            if outcome.detail:
                lines.append(Text(outcome.detail))
        if outcome.decision is not None:
            d = outcome.decision
            was = f"kept ({d.pipeline_tier})" if d.pipeline_status == "kept" else f"rejected ({d.pipeline_reason})"
            lines.append(Text(f"decided by a person; the pipeline had {was}", style="bold"))
        if outcome.edited_steps:
            lines.append(Text("steps a person rewrote: " + ", ".join(outcome.edited_steps), style="italic"))
        return StageBlock("Verdict", Group(*lines), None, state="done" if outcome.status == "kept" else "rejected")
