"""A run record as Rich renderables: the shared body of the html and svg exports and `sessions show`.

Model text is data: it goes in as `Text` (never parsed as markup) after `plain()` strips terminal
escape sequences, so a message that says `[bold]` or carries an escape code shows as written.
"""

from __future__ import annotations

import io
from typing import Any, Callable, Iterator

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from proactive_tui.export.formats.common import env_item, header_facts, ordered_messages, score_rows
from proactive_tui.textsafe import plain

SPEAKER_STYLE = {"agent": "bold cyan", "user": "bold green", "judge": "bold magenta"}
EXPORT_WIDTH = 100

# family -> extra renderables for what only that family records, placed after the dialogue.
# Families add theirs (one line); model text must go in as `Text`, never as a markup string.
FAMILY_RENDERABLES: dict[str, Callable[[Any], list[RenderableType]]] = {}


def _t(text: Any, style: str = "") -> Text:
    return Text(plain(str(text)), style=style)


def _header(record: Any) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for key, value in header_facts(record):
        grid.add_row(Text(key), _t(value, "yellow" if key == "Human seats" and value != "none" else ""))
    return grid


def _environment(record: Any) -> Iterator[RenderableType]:
    item = env_item(record)
    env = item.get("environment") if isinstance(item.get("environment"), dict) else None
    if not env:
        return
    yield Text("Environment", style="bold underline")
    yield Text.assemble(("User information. ", "bold"), _t(env.get("user_information", "")))
    yield Text.assemble(("Trigger. ", "bold"), _t(env.get("trigger_factor", "")))
    if item.get("target"):
        steps = "".join(f"\n  {i}. {plain(str(s))}" for i, s in enumerate(item.get("sub_target") or [], 1))
        yield Text.assemble(("Reference target. ", "bold"), _t(item["target"]), _t(steps))
    yield Text("")


def _plan(record: Any) -> Iterator[RenderableType]:
    p = record.planning
    if p.target is None:
        return
    steps = "".join(f"\n  {i}. {plain(s)}" for i, s in enumerate(p.sub_targets, 1))
    yield Text.assemble((f"Plan ({plain(p.model or '-')}): ", "bold"), _t(p.target), _t(steps))
    if p.score is not None:
        yield Text.assemble((f"  plan score {p.score}/10 by {plain(p.judge_model or '-')}: ", "magenta"),
                            _t(p.reasoning or "", "magenta"))
    yield Text("")


def _check(check: Any) -> Text:
    reached = "-" if check.target_reached is None else ("yes" if check.target_reached else "no")
    covered = ",".join(map(str, check.covered_sub_targets)) or "none"
    probes = f" · probes: {', '.join(check.probes)}" if check.probes else ""
    return _t(f"  ⤷ check after turn {check.turn}: reached {reached} · covered {covered}{probes}", "magenta")


def _dialogue(record: Any) -> Iterator[RenderableType]:
    yield Text("Dialogue", style="bold underline")
    checks = {c.turn: c for c in record.turn_checks}
    turn = None
    for m in ordered_messages(record):
        if m.turn != turn and turn in checks:
            yield _check(checks[turn])
        turn = m.turn
        who = "person" if m.role in record.human_seats else m.model
        line = Text.assemble((f"[turn {m.turn}] {m.role}", SPEAKER_STYLE.get(m.role, "bold")), (f" ({plain(who)})", "dim"),
                             ": ", _t(m.content))
        if m.partial:
            line.append(" [cut off]", style="yellow")
        yield line
    if turn in checks:
        yield _check(checks[turn])
    if not record.messages:
        yield Text("(no messages)", style="dim")
    yield Text("")


def _scores(record: Any) -> Iterator[RenderableType]:
    rows = score_rows(record)
    if not rows:
        yield Text("Not scored.", style="dim")
        return
    table = Table(title="Scores", title_justify="left", show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for key, value in rows:
        table.add_row(key, value)
    yield table
    if record.guidance is not None:
        yield Text.assemble((f"Judged by {plain(record.guidance.judge_model)}: ", "magenta"),
                            _t(record.guidance.reasoning, "magenta"))
    if record.live_scores:
        yield _t("Live overall scores: " + ", ".join(f"turn {s.turn}: {s.overall}" for s in record.live_scores), "dim")


def transcript(record: Any) -> Group:
    """The whole session as one renderable: header, environment, plan, dialogue, scores, problems."""
    parts: list[RenderableType] = [Text(f"proactive-tui session {record.id}", style="bold reverse"), _header(record), Text("")]
    parts += [*_environment(record), *_plan(record), *_dialogue(record)]
    parts += FAMILY_RENDERABLES.get(record.family, lambda r: [])(record)
    parts += [*_scores(record)]
    if record.errors:
        parts.append(Text("Problems", style="bold red"))
        parts += [_t(f"- {e}", "red") for e in record.errors]
    return Group(*parts)


def recording_console(width: int = EXPORT_WIDTH) -> Console:
    """A console that records what is printed, independent of the terminal and environment
    (fixed width, truecolor, no COLUMNS/NO_COLOR influence), so exports are reproducible."""
    return Console(record=True, width=width, file=io.StringIO(), force_terminal=True, color_system="truecolor",
                   highlight=False, emoji=False, legacy_windows=False, _environ={})
