"""`markdown`: a readable transcript with a header (environment, models, settings, human seats)
and the family's report sections (dialogue or trace or timeline, judges, scores), for pasting
into an issue, a paper draft or a notebook.

Model text is data: terminal escape sequences are stripped (`textsafe.plain`) and every character a
Markdown renderer would act on is backslash-escaped: HTML (`<`, `>`, `&`), links and images
(`[`, `]`: with them escaped no `[text](url)` or `![alt](src)` forms), emphasis, code, headings and
tables (`*`, `_`, `` ` ``, `#`, `~`, `|`), and the
colon of a bare URL and the dot of `www.` (GitHub and linkify turn those into live links). So a
message can quote a tag, a link or an image but never make one live in the rendered page.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from proactive_tui.export.formats.common import header_facts, write_documents
from proactive_tui.export.registry import Exporter, register
from proactive_tui.core.run_record import failures_of
from proactive_tui.textsafe import plain


_ACTIVE = re.compile(r"([\\<>&\[\]*`#~|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
"""`_` inside a word (`max_turns`) never opens emphasis in CommonMark, so it stays as it is."""
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto)(:)|\b(www)(\.)")


def _text(text: str) -> str:
    escaped = _ACTIVE.sub(r"\\\1", plain(text))
    return _AUTOLINK.sub(lambda m: f"{m.group(1)}\\:" if m.group(1) else f"{m.group(3)}\\.", escaped)


def _cell(text: str) -> str:
    return _text(" ".join(str(text).split()))  # `|` is escaped by _text


def _quoted(text: str) -> str:
    return "\n".join("> " + line if line.strip() else ">" for line in _text(text).splitlines() or [""])


def _block(block: Any) -> list[str]:
    kind = block.kind
    if kind == "line":
        text = _text(block.text)
        if block.style in ("dim", "judge"):
            text = f"*{text}*" if text.strip() and "\n" not in text else text
        label = f"**{_text(block.label)}** " if block.label else ""
        return ["", label + text]
    if kind == "speech":
        turn = f"[turn {block.turn}] " if block.turn is not None else ""
        cut = " *(cut off)*" if block.partial else ""
        muted = " *(not shown to the user)*" if block.muted else ""
        who = f" ({_text(block.who)})" if block.who else ""
        return ["", f"**{turn}{block.speaker.capitalize()}**{who}{cut}{muted}", "", _quoted(block.text)]
    if kind == "facts":
        return ["", "| | |", "|---|---|"] + [f"| {_cell(k)} | {_cell(v)} |" for k, v in block.rows]
    lines = [""]
    if block.title:
        lines += [f"**{_text(block.title)}**", ""]
    lines.append("| " + " | ".join(_cell(c) for c in block.columns) + " |")
    lines.append("|" + "|".join("---:" if i < len(block.align) and block.align[i] == "right" else "---"
                                for i in range(len(block.columns))) + "|")
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in block.rows]
    return lines


def render(record: Any) -> str:
    from proactive_tui.export.rich_view import family_sections

    lines = [f"# Session {record.id}", ""]
    lines += ["| | |", "|---|---|"] + [f"| {k} | {_cell(v)} |" for k, v in header_facts(record)]
    for section in family_sections(record):
        lines += ["", f"## {_text(section.title)}"]
        for block in section.blocks:
            lines += _block(block)
    if record.errors:
        lines += ["", "## Problems", ""] + [f"- {_text(f.who)}: {_text(f.message)}" for f in failures_of(record)]
    return "\n".join(lines) + "\n"


def write(records: list[Any], out: Path) -> list[Path]:
    return write_documents(records, out, "md", render)


EXPORTER = register(Exporter(suffix='.md', name="markdown", description="a readable transcript with header and score table (.md)",
                             write=write))
