"""For a person playing the Chronos agent: choose the action and status, write the text, and
optionally what the reminder watches for.

Posts `ActionForm.Submitted` with the reply. If the text box holds a whole reply (the one-line
shorthand `ACTION [STATUS]: text @EVENT ...` or a JSON object, `reply.typed_reply`), that text is
sent as it is and parsed by the protocol like any typed reply, so what the person typed is what
gets recorded; otherwise the form's selects and boxes make the JSON reply (intention and
constraints carry over from `previous`, or the intention typed here; the status select starts
from the previous reply's status, as the shorthand does).

Layout: the selects are as wide as their longest option so names are never cut, and their
dropdowns open upwards (over the transcript) since the form sits at the bottom, right above the
status line (session.tcss).
"""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.containers import Grid
from textual.message import Message
from textual.widgets import Button, Input, Select

from proactive_tui.families.chronos.reply import ACTIONS, STATUSES, typed_reply

TRIGGERS = (("no trigger", "none"), ("EVENT", "EVENT"), ("TIME", "TIME"))


class ActionForm(Grid):
    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.previous: Any = None

    def compose(self) -> ComposeResult:
        action = Select([(a, a) for a in ACTIONS], value="INFO_RETRIEVAL", allow_blank=False, id="form-action", compact=True)
        action.tooltip = "proactive_action: what the system should do"
        yield action
        status = Select([(s, s) for s in STATUSES], value="PENDING", allow_blank=False, id="form-status", compact=True)
        status.tooltip = "task_description.status"
        yield status
        yield Button("Send ⏎", id="form-send", variant="primary", compact=True)
        yield Input(placeholder="what the user reads · or a whole reply: ACTION [STATUS]: text @EVENT …",
                    id="form-text", compact=True)
        ttype = Select(list(TRIGGERS), value="none", allow_blank=False, id="form-ttype", compact=True)
        ttype.tooltip = "trigger_condition.type (SET_REMINDER needs one)"
        yield ttype
        yield Input(placeholder="trigger condition: what the monitor watches for", id="form-tvalue", compact=True)
        yield Input(placeholder="intention (blank: keep the last one)", id="form-intention", compact=True)

    def carry_over(self, reply: Any) -> None:
        """The agent's reply was taken: its task carries over, the status select starts from it,
        and the boxes are emptied for the next turn (kept until then, so a reply the protocol
        sends back can be fixed instead of retyped)."""
        self.previous = reply
        status = getattr(getattr(reply, "task_description", None), "status", None)
        if status in STATUSES:
            self.query_one("#form-status", Select).value = status
        for box in ("#form-text", "#form-tvalue", "#form-intention"):
            self.query_one(box, Input).value = ""
        self.query_one("#form-ttype", Select).value = "none"

    def reply_json(self) -> str:
        action = self.query_one("#form-action", Select).value
        status = self.query_one("#form-status", Select).value
        ttype = self.query_one("#form-ttype", Select).value
        tvalue = self.query_one("#form-tvalue", Input).value.strip()
        intention = self.query_one("#form-intention", Input).value.strip()
        prev = self.previous.task_description if self.previous is not None else None
        if ttype == "none" and tvalue:
            ttype = "EVENT"  # a condition was written: watching for an event is what it means
        trigger = {"type": ttype, "value": tvalue or None} if ttype != "none" else {"type": None, "value": None}
        return json.dumps({
            "response_text": self.query_one("#form-text", Input).value.strip(),
            "proactive_action": action,
            "trigger_condition": trigger,
            "task_description": {
                "intention": intention or (prev.intention if prev else None),
                "constraints": prev.constraints if prev else None,
                "status": status,
            },
        })

    def reply_text(self) -> str:
        """What to send: the typed whole reply as it is, else the form's reply as JSON."""
        text = self.query_one("#form-text", Input).value
        return text.strip() if typed_reply(text) else self.reply_json()

    def _send(self) -> None:
        self.post_message(self.Submitted(self.reply_text()))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self._send()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._send()
