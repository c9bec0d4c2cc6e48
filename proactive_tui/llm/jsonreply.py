"""Tolerant reading of JSON that a model wrote: code fences, chatter before and after, "null"."""

from __future__ import annotations

import json
import re
from typing import Any

from proactive_tui.textsafe import scrub_deep

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class NoJSON(ValueError):
    pass


def extract_json(text: str) -> Any:
    """Return the first JSON object (or array) in `text`.

    Tries, in order: a fenced ```json block, the whole text, then the first `{`/`[` onward with
    trailing text ignored (raw_decode stops where the value ends). Lone surrogates the JSON
    spells (`"\\ud800"`) come back as U+FFFD (`textsafe.scrub_deep`): the reply text is scrubbed
    where it enters, but parsing makes them anew, and one left in a parsed value made the
    session's record unwritable as UTF-8 (`run --out`, the store, every export).
    """
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    last_error = "no JSON object found in the reply"
    for candidate in candidates:
        stripped = candidate.strip()
        if not stripped:
            continue
        try:
            return scrub_deep(json.loads(stripped))
        except json.JSONDecodeError:
            pass
        for match in re.finditer(r"[\{\[]", stripped):
            try:
                value, _ = decoder.raw_decode(stripped, match.start())
                return scrub_deep(value)
            except json.JSONDecodeError as exc:
                last_error = f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
                break
    raise NoJSON(last_error)
