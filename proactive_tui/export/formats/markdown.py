"""`markdown`: a readable transcript with a header (environment, models, settings, human seats)
and a score table, for pasting into an issue, a paper draft or a notebook.

Model text is data: terminal escape sequences are stripped (`textsafe.plain`) and characters a
Markdown renderer would act on as HTML (`<`, `>`, `&`) are backslash-escaped, so a message can
quote a tag but never inject one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from proactive_tui.export.formats.common import env_item, header_facts, ordered_messages, score_rows, write_documents
from proactive_tui.export.registry import Exporter, register
from proactive_tui.textsafe import plain


# family -> extra Markdown lines for what only that family records (proposals, timeline...),
# placed after the dialogue. Families add theirs (one line); escape model text with `_text`.
FAMILY_SECTIONS: dict[str, Callable[[Any], list[str]]] = {}


def _text(text: str) -> str:
    return plain(text).replace("\\", "\\\\").replace("<", "\\<").replace(">", "\\>").replace("&", "\\&")


def _cell(text: str) -> str:
    return _text(" ".join(text.split())).replace("|", "\\|")


def _quoted(text: str) -> str:
    return "\n".join("> " + line if line.strip() else ">" for line in _text(text).splitlines() or [""])


def render(record: Any) -> str:
    lines = [f"# Session {record.id}", ""]
    lines += ["| | |", "|---|---|"] + [f"| {k} | {_cell(v)} |" for k, v in header_facts(record)]
    item = env_item(record)
    env = item.get("environment") if isinstance(item.get("environment"), dict) else None
    if env:
        lines += ["", "## Environment", "", f"**User information.** {_text(str(env.get('user_information', '')))}",
                  "", f"**Trigger.** {_text(str(env.get('trigger_factor', '')))}"]
        if item.get("target"):
            lines += ["", f"**Reference target.** {_text(str(item['target']))}", ""]
            lines += [f"{i}. {_text(str(s))}" for i, s in enumerate(item.get("sub_target") or [], 1)]
    p = record.planning
    if p.target is not None:
        lines += ["", f"## Plan ({_text(p.model or '-')})", "", f"**Target.** {_text(p.target)}", ""]
        lines += [f"{i}. {_text(s)}" for i, s in enumerate(p.sub_targets, 1)]
        if p.score is not None:
            lines += ["", f"Plan score **{p.score}/10** by {_text(p.judge_model or '-')}: {_text(p.reasoning or '')}"]
    lines += ["", "## Dialogue"]
    checks = {c.turn: c for c in record.turn_checks}
    turn = None
    for m in ordered_messages(record):
        if m.turn != turn:
            if turn in checks:
                lines += ["", _check_line(checks[turn])]
            turn = m.turn
            lines += ["", f"### Turn {turn}"]
        who = "person" if m.role in record.human_seats else m.model
        cut = " *(cut off)*" if m.partial else ""
        lines += ["", f"**{m.role.capitalize()}** ({_text(who)}){cut}", "", _quoted(m.content)]
    if turn in checks:
        lines += ["", _check_line(checks[turn])]
    if not record.messages:
        lines += ["", "*(no messages)*"]
    if record.family in FAMILY_SECTIONS:
        lines += FAMILY_SECTIONS[record.family](record)
    rows = score_rows(record)
    lines += ["", "## Scores", ""]
    if rows:
        lines += ["| | score |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
    else:
        lines.append("*(not scored)*")
    if record.guidance is not None:
        g = record.guidance
        lines += ["", f"Judged by {_text(g.judge_model)}: {_text(g.reasoning)}"]
    if record.live_scores:
        lines += ["", "Live overall scores: " + ", ".join(f"turn {s.turn}: {s.overall}" for s in record.live_scores)]
    if record.errors:
        lines += ["", "## Problems", ""] + [f"- {_text(e)}" for e in record.errors]
    return "\n".join(lines) + "\n"


def _check_line(check: Any) -> str:
    reached = "-" if check.target_reached is None else ("yes" if check.target_reached else "no")
    covered = ", ".join(map(str, check.covered_sub_targets)) or "none"
    probes = f"; probes: {', '.join(check.probes)}" if check.probes else ""
    return f"*Check after turn {check.turn}: target reached {reached}; sub-targets covered {covered}{probes}.*"


def write(records: list[Any], out: Path) -> list[Path]:
    return write_documents(records, out, "md", render)


EXPORTER = register(Exporter(name="markdown", description="a readable transcript with header and score table (.md)",
                             write=write))
