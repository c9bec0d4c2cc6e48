"""An agent program's side of one turn, as the call inspector shows it (plain text sections).

Kept beside the client rather than in the UI: the sections are data (title, literal text), the
inspector renders them like every other section of a call, and tests read them without a screen.
"""

from __future__ import annotations

import json
from typing import Any


def sections(agent: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(title, text) for a call trace's `agent` (None: a model call, no sections)."""
    if not agent:
        return []
    info = agent.get("info") or {}
    who = " ".join(str(x) for x in (info.get("name"), info.get("version")) if x) or str(info.get("seat", "?"))
    head = [f"{who} · ACP v{info.get('protocol_version', '?')} · {info.get('seat', '')}",
            f"session {agent.get('session_id') or '?'}" + (f" · {agent['purpose']}" if agent.get("purpose") else "")]
    continued = agent.get("continued") or {}
    if agent.get("restored"):
        head.append(f"restored from the agent's saved session {continued.get('from_session', '?')} "
                    f"({continued.get('via', 'session/load')}): identical history, per the agent")
    if agent.get("redriven"):
        head.append("re-driven, not identical: this branch's session was rebuilt by prompting the earlier user turns again"
                    + (f" (not restored: {continued['reason']})" if continued.get("reason") else ""))
    if info.get("auth_methods"):
        head.append("login methods: " + ", ".join(info["auth_methods"]))
    head.append("session fork: " + ("advertised" if info.get("can_fork") else "not advertised")
                + " · session/load: " + ("advertised" if info.get("can_load") else "not advertised"))
    out = [("Agent program", "\n".join(head))]
    if agent.get("thoughts"):
        out.append(("Thoughts", agent["thoughts"]))
    calls = agent.get("tool_calls") or []
    if calls:
        out.append(("Tool calls", "\n".join(
            " · ".join(str(c.get(k)) for k in ("title", "kind", "status") if c.get(k)) or json.dumps(c) for c in calls)))
    plans = agent.get("plans") or []
    if plans:
        out.append(("Plan (latest)", "\n".join(f"[{e.get('status', '?')}] {e.get('content', '')} ({e.get('priority', '?')})"
                                                for e in plans[-1])))
    if agent.get("usage"):
        out.append(("Usage", json.dumps(agent["usage"], ensure_ascii=False)))
    for p in agent.get("permissions") or []:
        title = (p.get("tool") or {}).get("title") or "a tool call"
        options = ", ".join(f"{o[1]} ({o[0]})" for o in p.get("options") or [])
        out.append(("Permission request", f"{title}\noffered: {options}\nanswer: {p.get('chosen') or 'cancelled'} "
                                          f"(policy: {p.get('policy')})"))
    return out
