"""The person answers an agent program's permission request (`session/request_permission`, llm/acp).

Asked only for a seat whose config says `permission = "ask"`; every other policy answers without
a person. The modal names the agent and what it wants to do, and offers the agent's own options
as buttons; Escape (or closing it) denies, so nothing is allowed by accident. Everything shown
is the agent's text, shown literally.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from proactive_tui.llm.acp.client import PermissionAsk, set_permission_asker
from proactive_tui.ui.screens.modal import Modal


class PermissionModal(Modal["str | None"]):
    HELP_TITLE = "Agent permission request"
    DEFAULT_CSS = """
    PermissionModal { align: center middle; }
    #acp-permission { width: 72; height: auto; border: round $warning; padding: 1 2; background: $panel; }
    #acp-permission-options { height: auto; margin-top: 1; }
    #acp-permission-options Button { margin-right: 1; }
    """
    BINDINGS = [Binding("escape", "deny", "Deny")]

    def __init__(self, ask: PermissionAsk) -> None:
        super().__init__()
        self.ask = ask

    def compose(self) -> ComposeResult:
        with Vertical(id="acp-permission") as box:
            box.border_title = "Permission request"
            box.border_subtitle = "Escape denies"
            kind = f" ({self.ask.kind})" if self.ask.kind else ""
            yield Static(Text.assemble((self.ask.agent, "bold"), " asks to: ", (self.ask.tool + kind, "bold")),
                         id="acp-permission-what")
            with Horizontal(id="acp-permission-options"):
                for i, (option_id, label, kind) in enumerate(self.ask.options):
                    variant = "error" if kind.startswith("allow") else "default"
                    button = Button(Text(label), id=f"acp-option-{i}", variant=variant)
                    button.option_id = option_id  # type: ignore[attr-defined]
                    yield button
                yield Button("Deny", id="acp-deny", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#acp-deny", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(getattr(event.button, "option_id", None))

    def action_deny(self) -> None:
        self.dismiss(None)


def install(app: Any) -> None:
    """Make `app` the one who answers `permission = "ask"` requests, with the modal."""

    async def ask(request: PermissionAsk) -> str | None:
        answered: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

        def done(choice: str | None) -> None:
            if not answered.done():
                answered.set_result(choice)

        app.call_later(app.push_screen, PermissionModal(request), done)
        return await answered

    set_permission_asker(ask)


def uninstall() -> None:
    set_permission_asker(None)
