"""Each streamed reply is kept once in the store: its deltas. Every later copy of it is a reference.

A reply's text reached the events table several times: as its `message_delta` rows (written as it
streams, so a kill loses at most 250 ms of it), again whole in its `message_done`, again as the
`model_called` trace's `reply`, and again in every later call's request and message context that
quotes it (the next turn's prompt, the judge's transcript, the next message's visible context). A
session with 1 MB replies held 50 MB.

The deltas stay exactly as they were: they are what a session cut off mid-reply resumes from. In
any later event of the same session, a string of at least `MIN_CHARS` that equals, or contains,
the whole text a message has streamed so far is stored with that text left out: the string is
written as "" and the event's top-level `stored_refs` lists `[path, parts]`, where `path` leads to
the string (keys and indexes) and `parts` rebuild it in order, each a literal string or
`[message_id]` (that message's deltas so far, joined). Reading (`expand`, in `queries`) puts every
string back before the event is parsed, so every reader (replay, resume, fork, exports, the
inspector) sees the events exactly as they were emitted.

References point only backwards, to deltas of the same session stored before the event (the
recorder flushes a message's deltas before writing any other event), so a reader rebuilds them
in one pass in order. Only the recorder writes references; any other writer stores events whole,
and an event without `stored_refs` is read as it is.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

MIN_CHARS = 1024
"""Shorter replies are stored as before: a reference would save little."""
REFS_KEY = "stored_refs"

Part = str | list[str]


class StreamedReplies:
    """What each message of one session has streamed into the store so far, and the payloads of
    later events with the copies of those texts left out."""

    def __init__(self) -> None:
        self._parts: dict[str, list[str]] = {}
        self._texts: dict[str, str] | None = {}
        """Whole text -> message id, for texts of at least MIN_CHARS (None: to rebuild)."""

    def streamed(self, message_id: str, text: str) -> None:
        """A delta of `message_id` was handed to the store."""
        self._parts.setdefault(message_id, []).append(text)
        self._texts = None

    def _known(self) -> dict[str, str]:
        if self._texts is None:
            texts: dict[str, str] = {}
            for message_id, parts in self._parts.items():
                if sum(map(len, parts)) >= MIN_CHARS:
                    joined = "".join(parts)
                    self._parts[message_id] = [joined]  # joined once, not again per event
                    texts.setdefault(joined, message_id)
            self._texts = texts
        return self._texts

    def payload(self, event: Any) -> str:
        """The event's stored JSON: as `db.event_json` writes it, with every copy of a streamed
        reply left out (see the module's docstring)."""
        from proactive_tui.store.db import event_json

        text = event_json(event)
        known = self._known()
        if not known or event.type == "message_delta" or len(text) < MIN_CHARS:
            return text
        data = json.loads(text)
        refs: list[list[Any]] = []
        longest = sorted(known, key=len, reverse=True)
        for path, value in _long_strings(data, ()):
            parts = _split(value, known, longest)
            if parts is not None:
                refs.append([list(path), parts])
        if not refs:
            return text
        for path, _ in refs:
            _set(data, path, "")
        data[REFS_KEY] = refs
        return json.dumps(data, ensure_ascii=False)


def _long_strings(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(value, str):
        if len(value) >= MIN_CHARS:
            yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _long_strings(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _long_strings(item, path + (index,))


def _split(value: str, known: dict[str, str], longest: list[str]) -> list[Part] | None:
    """`value` as literal strings and `[message_id]` references, or None when it holds no
    streamed text. The longest texts are taken out first; occurrences do not overlap."""
    whole = known.get(value)
    if whole is not None:
        return [[whole]]
    parts: list[Part] = [value]
    found = False
    for text in longest:
        if len(text) > len(value):
            continue
        out: list[Part] = []
        for part in parts:
            if not isinstance(part, str) or len(part) < len(text) or text[:64] not in part:
                out.append(part)
                continue
            start = 0
            while (at := part.find(text, start)) >= 0:
                if at > start:
                    out.append(part[start:at])
                out.append([known[text]])
                start = at + len(text)
                found = True
            if start < len(part):
                out.append(part[start:])
        parts = out
    return parts if found else None


def _set(data: Any, path: list[Any], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


class ReplyReader:
    """Rebuilds one session's stored events in order: `read(type, payload)` gives each row's
    payload to parse; `streamed(message_id, text)` is told each delta read."""

    def __init__(self) -> None:
        self._parts: dict[str, list[str]] = {}

    def streamed(self, message_id: str, text: str) -> None:
        self._parts.setdefault(message_id, []).append(text)

    def read(self, type_: str, payload: str) -> str | dict[str, Any]:
        """The payload as stored, or (an event with `stored_refs`) as data with every string put back."""
        if type_ == "message_delta" or REFS_KEY not in payload:
            return payload
        data: Any = json.loads(payload)
        refs = data.pop(REFS_KEY, None) if isinstance(data, dict) else None
        if not refs:
            return payload
        for path, parts in refs:
            _set(data, path, "".join(p if isinstance(p, str) else self._text(p[0]) for p in parts))
        restored: dict[str, Any] = data  # a dict: `refs` came out of it
        return restored

    def _text(self, message_id: str) -> str:
        parts = self._parts.get(message_id, [])
        if len(parts) > 1:
            self._parts[message_id] = parts = ["".join(parts)]
        return parts[0] if parts else ""
