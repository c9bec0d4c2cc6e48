"""Fold text too long to show: keep its head and say how much is hidden.

A value read from a file or written by a model can be megabytes long. Printed or laid out in
full it costs far more than anyone reads (a 20 MB environment field kept `envs show` busy for
minutes; a 1 MB reply made every view of its session megabytes). Where such text is *shown*, it
goes through here; where it is *kept* (the store, JSON exports, `--json`), it stays whole.

No Textual or Rich here: the CLI, the picker and the exports share it.
"""

from __future__ import annotations

from typing import Any, Callable

LINE_CHARS = 2000
"""Longest line shown; a longer line is cut and says how many characters follow."""
TEXT_CHARS = 100_000
"""Most characters of one value shown, whatever its lines."""


def hidden_note(count: int, where: str = "") -> str:
    """The marker left where characters were folded away."""
    return f"… {count:,} more character{'s' if count != 1 else ''} hidden{f' ({where})' if where else ''}"


def fold_text(text: str, line_chars: int = LINE_CHARS, text_chars: int = TEXT_CHARS, where: str = "") -> str:
    """`text` with each line longer than `line_chars` cut (a note saying how many characters
    follow on that line) and what follows the first `text_chars` characters (cut at a line end
    when one is near) replaced by a note saying how many characters are hidden. Text within both
    limits comes back unchanged (the same object)."""
    if len(text) <= line_chars:
        return text
    head, at_line_end = text, False
    if len(text) > text_chars:
        cut = text.rfind("\n", text_chars // 2, text_chars)
        head, at_line_end = (text[:cut], True) if cut > 0 else (text[:text_chars], False)
    lines = head.split("\n")
    if head is text and max(map(len, lines)) <= line_chars:
        return text
    tail = len(text) - len(head)
    out = []
    for i, line in enumerate(lines):
        more = tail if i == len(lines) - 1 and not at_line_end else 0  # a cut mid-line: one note says all
        if len(line) > line_chars:
            out.append(line[:line_chars] + " " + hidden_note(len(line) - line_chars + more, where))
        else:
            out.append(line + " " + hidden_note(more, where) if more else line)
    if at_line_end:
        out.append(hidden_note(tail, where))
    return "\n".join(out)


VIEW_CHARS = 20_000
"""Most characters of one reply a shared page (the HTML viewer, the SVG picture) shows: a page
of several 1 MB replies made a 33 MB page and a 48.5 MB picture, none of it readable there."""
IN_EXPORT = "the run-record export keeps it whole"


def fold_view(text: str, where: str = IN_EXPORT) -> str:
    """A string of a shared page: its first VIEW_CHARS characters (long lines kept: a page wraps
    them), then a line saying how many are hidden and where the whole text is."""
    return fold_text(text, line_chars=VIEW_CHARS, text_chars=VIEW_CHARS, where=where)


def fold_strings(value: Any, fold: Callable[[str], str] = fold_view) -> Any:
    """JSON-like data with every string folded (keys kept)."""
    if isinstance(value, str):
        return fold(value)
    if isinstance(value, (list, tuple)):
        return [fold_strings(v, fold) for v in value]
    if isinstance(value, dict):
        return {k: fold_strings(v, fold) for k, v in value.items()}
    return value


def folded_model(model: Any, fold: Callable[[str], str] = fold_view) -> Any:
    """A copy of a pydantic model (a report section) with every string in it folded."""
    return type(model).model_validate(fold_strings(model.model_dump(mode="python"), fold))
