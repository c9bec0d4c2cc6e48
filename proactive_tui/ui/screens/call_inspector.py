"""What each model saw: the session's model calls, one at a time, exactly as they happened.

Every call a session makes is kept as a `model_called` event (`llm.trace`): the messages as sent,
system prompt included; the settings and response format; the raw reply; tokens, latency,
attempts, the reasons for each retry and the final error. This screen lists them in the order
they finished (seat · purpose · turn, a failed one marked) and shows the highlighted one in full,
so "why did it say that?" is answered by what it was given, not by a guess at the prompt. Opened
from any family's session screen (`i`), live, finished or replayed; the message in focus selects
the call that produced it. `y` copies the call as JSON. Everything shown is data: model text and
environment text appear literally, never as markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from proactive_tui.core.writers import EDITED_BY, PersonReply
from proactive_tui.textsafe import json_text, plain
from proactive_tui.ui.screens.modal import Modal
from proactive_tui.ui.widgets.description_view import DescriptionView, Section


def written_title(index: int, entry: Any) -> str:
    """One line for a reply a person wrote: `4. agent · agent message · turn 2 · written by person (edited)`."""
    turn = f" · turn {entry.turn}" if entry.turn and f"event {entry.turn}" not in entry.purpose else ""
    return f"{index}. {entry.seat} · {entry.purpose}{turn} · written by {entry.writer}"


def written_sections(entry: Any) -> list[Section]:
    """A reply a person wrote, as DescriptionView sections: who wrote it and that no model call
    made it (so none is shown for it), then its text."""
    what = [f"{entry.seat} · {entry.purpose}"]
    if entry.turn is not None:
        what.append(f"turn {entry.turn}")
    if entry.message_id:
        what.append(f"message {entry.message_id}")
    how = ("a person edited this reply when forking the session" if entry.writer == EDITED_BY
           else "a person in the seat wrote this reply")
    return [("Reply", " · ".join(what)),
            ("Written by", f"{entry.writer}: {how}; no model call made it, so there is no call to show"),
            ("Text", entry.text or "(empty)")]


def call_title(index: int, event: Any) -> str:
    """One line per call: `3. judge · turn 2 check · failed`."""
    turn = f" · turn {event.turn}" if event.turn and f"turn {event.turn}" not in event.purpose \
        and f"event {event.turn}" not in event.purpose else ""
    failed = " · failed" if event.call.error else ""
    return f"{index}. {event.seat} · {event.purpose}{turn}{failed}"


def call_sections(event: Any) -> list[Section]:
    """The call in full, as DescriptionView sections (title, literal text)."""
    call = event.call
    request = call.request
    where = f" at {call.api_base}" if call.api_base else ""
    what = [f"{event.seat} · {event.purpose}"]
    if event.turn is not None:
        what.append(f"turn {event.turn}")
    if event.message_id:
        what.append(f"became message {event.message_id}")
    fmt = request.get("response_format")
    if isinstance(fmt, dict):
        schema = (fmt.get("json_schema") or {}).get("name") if fmt.get("type") == "json_schema" else None
        fmt_text = fmt.get("type", "?") + (f" ({schema})" if schema else "")
    else:
        fmt_text = "none (free text, or the schema in the prompt)"
    settings = [f"model {call.model}{where}",
                *(f"{name} {request[name]}" for name in ("temperature", "max_tokens", "seed", "top_p", "stop")
                  if name in request),
                f"response format {fmt_text}",
                "streamed" if request.get("stream") else "whole reply (not streamed)"]
    cost = "" if call.cost is None else f", cost ${call.cost:.6f}"
    outcome = [f"{call.attempts} attempt(s), {call.latency_s:.2f} s, started {call.started_at}",
               f"tokens: {call.prompt_tokens} prompt + {call.completion_tokens} completion{cost}",
               f"finish reason: {call.finish_reason or 'not given'}"]
    outcome += [f"retried after attempt {i}: {reason}" for i, reason in enumerate(call.retries, 1)]
    outcome.append(f"failed: {call.error}" if call.error else "returned a reply")
    sections: list[Section] = [("Call", " · ".join(what)), ("Settings", "\n".join(settings)),
                               ("Outcome", "\n".join(outcome))]
    if getattr(call, "agent", None):  # an agent program's turn (llm/acp): its thoughts, tools, plan, usage
        from proactive_tui.llm.acp.inspect import sections as agent_sections

        sections += agent_sections(call.agent)
    messages = request.get("messages") or []
    for i, message in enumerate(messages, 1):
        sections.append((f"Sent {i}/{len(messages)}: {message.get('role', '?')}", str(message.get("content", ""))))
    sections.append(("Reply, raw" + (" (cut off)" if call.error and call.reply else ""),
                     call.reply or "(no text arrived)"))
    return sections


class CallInspector(Modal[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("y", "copy_call", "Copy call"),
        Binding("tab", "switch_pane", "List/detail", show=False),
    ]
    DEFAULT_CSS = """
    CallInspector { align: center middle; }
    CallInspector > #inspector { width: 96%; height: 92%; border: round $accent; background: $surface; }
    CallInspector #call-list { width: 38%; min-width: 24; height: 1fr; border: none; }
    CallInspector #call-detail { width: 1fr; height: 1fr; padding: 0 1; }
    """

    def __init__(self, calls: list[Any], selected: int | None = None, live: bool = False,
                 written: list[Any] | None = None, message_id: str | None = None) -> None:
        """`calls`: the `model_called` events; `selected`: which of them to show first (default
        the latest); `written`: the replies a person wrote (`core.writers.PersonReply`), listed
        among the calls in the order they happened; `message_id`: the message in focus, shown
        first when a person wrote it (it has no call to select)."""
        super().__init__()
        self.calls = list(calls)
        self.written = list(written or [])
        self.entries: list[Any] = sorted([*self.calls, *self.written], key=lambda e: e.seq) \
            if self.written else list(self.calls)
        """What the list shows: every model call and every reply a person wrote, in order."""
        own = next((w for w in self.written if message_id and w.message_id == message_id), None)
        if own is not None:
            self.selected = self.entries.index(own)
        elif selected is not None and self.calls:
            self.selected = self.entries.index(self.calls[selected])
        else:
            self.selected = len(self.entries) - 1
        self.live = live

    def compose(self) -> ComposeResult:
        box = Horizontal(id="inspector")
        count = f"{len(self.calls)} model call(s)" + (" so far (the session runs on)" if self.live else "")
        if self.written:
            count += f", {len(self.written)} repl{'y' if len(self.written) == 1 else 'ies'} written by a person"
        box.border_title = Content(f"What each model saw · {count}")
        box.border_subtitle = "↑↓ a call · tab the detail · y copies · esc closes"
        with box:
            options = [Option(self._title(i, e), id=str(i - 1)) for i, e in enumerate(self.entries, 1)]
            yield OptionList(*options, id="call-list")
            yield DescriptionView(self._sections(), id="call-detail")

    @staticmethod
    def _title(index: int, entry: Any) -> Text:
        if isinstance(entry, PersonReply):
            return Text(plain(written_title(index, entry)), style="italic")
        return Text(plain(call_title(index, entry)), style="bold red" if entry.call.error else "")

    def _sections(self) -> list[Section]:
        if not self.entries:
            return [("", "No model call yet: seats played by a person or a script make none, and a model's "
                          "first call shows here when it finishes.")]
        entry = self.entries[self.selected]
        return written_sections(entry) if isinstance(entry, PersonReply) else call_sections(entry)

    def on_mount(self) -> None:
        found = self.query("#call-list").results(OptionList)
        options = next(found, None)
        if options is None:  # the app is closing while the screen mounts
            return
        if self.entries:
            options.highlighted = self.selected
        options.focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index is None or event.option_index == self.selected:
            return
        self.selected = event.option_index
        self.query_one("#call-detail", DescriptionView).show(self._sections())

    def action_switch_pane(self) -> None:
        detail = self.query_one("#call-detail", DescriptionView)
        (self.query_one("#call-list", OptionList) if detail.has_focus else detail).focus()

    def action_copy_call(self) -> None:
        if not self.entries:
            return
        event = self.entries[self.selected]
        self.app.copy_to_clipboard(json_text(event.model_dump(mode="json"), indent=2))
        what = "Reply" if isinstance(event, PersonReply) else "Call"
        self.notify(f"{what} {self.selected + 1} copied as JSON", timeout=3)

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
