"""Agent programs in the agent seat, over the Agent Client Protocol (ACP, protocol version 1).

Why a seat of its own: agents such as Claude Code, Gemini CLI, goose or Codex are programs, not a
model plus a prompt; many speak ACP (JSON-RPC over the program's stdio). A seat value
`acp:NAME` (an `[acp_agents.NAME]` entry of the config file) or `acp:COMMAND ARGS...` starts such
a program and talks to it through the `agent-client-protocol` SDK (imported as `acp`), so a person
can watch, play against, judge, fork and compare it like a model.

- `agents`: the seat value and the config entry (no SDK import: read at startup by `config`).
- `client`: one agent process over stdio: initialize, sessions, prompts, cancel, fork, load.
- the agent seat built on it is `core.acp_seat` (a `core.participants.Participant`: the engine layer, above this one).

The SDK is imported only when an ACP seat starts (tests/test_import_contracts.py).
"""

from __future__ import annotations

PREFIX = "acp:"


def is_acp_seat(model: str | None) -> bool:
    """Whether a seat's model value names an ACP agent program rather than a litellm model."""
    return model is not None and model.strip().startswith(PREFIX)
