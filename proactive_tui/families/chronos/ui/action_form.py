"""For a person playing the Chronos agent: choose the action and status, write the text, and
optionally what the reminder watches for.

Posts `ActionForm.Submitted` with the reply, or `ActionForm.Refused` with the reason when the
reply cannot be used; then nothing is sent and the form keeps what was typed, to be fixed. If the
text box holds a whole reply (the one-line shorthand `ACTION [STATUS]: text @EVENT ...` or a JSON
object: `reply.typed_reply`), it is parsed as the reply (`reply.parse_agent_text`, what the
protocol then parses it with) and sent as it is, so what the person typed is what gets recorded,
whatever the selects say; a line in that shape that does not parse (an unknown action or status,
a reminder without a condition) is refused, never sent with the selects' action. Otherwise the
selects and boxes make the JSON reply (intention and constraints carry over from `previous`, or
the intention typed here; the status select starts from the previous reply's status, as the
shorthand does), checked the same way.

Layout (session.tcss): five rows, each field with a label to its left that stays when the field
holds text (a placeholder would vanish) and is highlighted while the field has focus. The selects
are as wide as their longest option so names are never cut, and their dropdowns open upwards
(over the transcript) since the form sits at the bottom, right above the status line.
"""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select

from proactive_tui.families.chronos.reply import ACTIONS, STATUSES, parse_agent_text, typed_reply

TRIGGERS = (("none", "none"), ("EVENT", "EVENT"), ("TIME", "TIME"))


def _field(label: str, widget: Widget, *, wide: bool = False) -> Horizontal:
    """A label and its field: the label stays while the field holds text, and shows which field
    has focus (`.field:focus-within`)."""
    return Horizontal(Label(label, classes="form-label"), widget, classes="field -wide" if wide else "field")


class ActionForm(Vertical):
    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Refused(Message):
        """The reply was not sent: `reason` says why (shown to the person, the form kept as it is)."""

        def __init__(self, reason: str) -> None:
            super().__init__()
            self.reason = reason

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.previous: Any = None

    def compose(self) -> ComposeResult:
        action = Select([(a, a) for a in ACTIONS], value="INFO_RETRIEVAL", allow_blank=False, id="form-action", compact=True)
        action.tooltip = "proactive_action: what the system should do"
        status = Select([(s, s) for s in STATUSES], value="PENDING", allow_blank=False, id="form-status", compact=True)
        status.tooltip = "task_description.status"
        ttype = Select(list(TRIGGERS), value="none", allow_blank=False, id="form-ttype", compact=True)
        ttype.tooltip = "trigger_condition.type (SET_REMINDER needs one)"
        text = Input(placeholder="what the user reads, or a whole reply (see the hint)", id="form-text", compact=True)
        text.tooltip = "response_text, or the whole reply: ACTION [STATUS]: text @EVENT condition, or JSON"
        tvalue = Input(placeholder="what the monitor watches for (a reminder needs it)", id="form-tvalue", compact=True)
        tvalue.tooltip = "trigger_condition.value"
        intention = Input(placeholder="blank: keep the last one", id="form-intention", compact=True)
        intention.tooltip = "task_description.intention"
        with Horizontal(classes="form-row"):
            yield _field("action", action)
            yield Button("Send ⏎", id="form-send", variant="primary", compact=True)
        with Horizontal(classes="form-row"):
            yield _field("status", status)
            yield _field("trigger", ttype)
        for label, box in (("text", text), ("watch for", tvalue), ("intention", intention)):
            with Horizontal(classes="form-row"):
                yield _field(label, box, wide=True)

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
        """Send the reply if it parses as the protocol will parse it; else say why and send nothing."""
        text = self.reply_text()
        typed = typed_reply(self.query_one("#form-text", Input).value)
        try:
            parse_agent_text(text, self.previous)
        except ValueError as exc:
            self.query_one("#form-text", Input).set_class(typed, "-invalid")
            self.post_message(self.Refused(str(exc)))
            return
        self.post_message(self.Submitted(text))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self._send()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._send()
