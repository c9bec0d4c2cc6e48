"""For a person playing the Chronos agent: choose the action and status, write the text, and
optionally what the reminder watches for. Posts `ActionForm.Submitted` with the reply as JSON
(intention and constraints carry over from `previous`, or the intention typed here)."""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.containers import Grid
from textual.message import Message
from textual.widgets import Button, Input, Select

from proactive_tui.families.chronos.reply import ACTIONS, STATUSES


class ActionForm(Grid):
    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.previous: Any = None

    def compose(self) -> ComposeResult:
        yield Select([(a, a) for a in ACTIONS], value="INFO_RETRIEVAL", allow_blank=False, id="form-action", compact=True)
        yield Select([(s, s) for s in STATUSES], value="PENDING", allow_blank=False, id="form-status", compact=True)
        yield Select([("no trigger", "none"), ("EVENT", "EVENT"), ("TIME", "TIME")], value="none", allow_blank=False,
                     id="form-ttype", compact=True)
        yield Input(placeholder="trigger condition (SET_REMINDER)", id="form-tvalue", compact=True)
        yield Input(placeholder="what the user reads (Enter sends)", id="form-text", compact=True)
        yield Input(placeholder="intention (blank: keep the last one)", id="form-intention", compact=True)
        yield Button("Send", id="form-send", variant="primary", compact=True)

    def reply_json(self) -> str:
        action = self.query_one("#form-action", Select).value
        status = self.query_one("#form-status", Select).value
        ttype = self.query_one("#form-ttype", Select).value
        tvalue = self.query_one("#form-tvalue", Input).value.strip()
        intention = self.query_one("#form-intention", Input).value.strip()
        prev = self.previous.task_description if self.previous is not None else None
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

    def _send(self) -> None:
        self.post_message(self.Submitted(self.reply_json()))
        self.query_one("#form-text", Input).value = ""

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self._send()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._send()
