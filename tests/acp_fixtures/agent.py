"""A small ACP agent program, written with the SDK, for the tests of `proactive_tui.llm.acp`.

Run as `python agent.py MODE [--fork] [--version V]`; it speaks ACP over its stdio like any agent
program. What it answers is a function of what it was sent, so a test can check the protocol:

- echo: streams `echo: <the prompt's last line>` in two chunks, after a thought, a plan, a tool
  call and a usage update; a prompt asking for a JSON object gets one (a Chronos agent reply,
  with KEEP_SILENT when the prompt says `be quiet`; a ProactiveEval plan when asked for one);
  `turn N` counts the prompts of its session;
- slow: as echo, but waits mid-reply (50 steps of 0.2 s), ending the turn as cancelled when a
  session/cancel arrives meanwhile;
- crash: starts a reply, then exits with code 3 mid-turn;
- permission: asks for permission to run a tool and says which option came back;
- auth: advertises two login methods and answers session/new with auth_required;
- never: streams one chunk and never ends the turn (ends it as cancelled on session/cancel,
  unless `--deaf`, when it ignores the cancel too).
- empty: ends every turn with no text.

`--noisy` prints a banner line on stdout first (not JSON-RPC, as some programs do).

`--fork` advertises session/fork and implements it (the copy keeps the turn count); every
session/new and session/fork is written to stderr as `NEW`/`FORK` for the tests to count.

`--load` advertises loadSession: every session (its turn count and history) is saved as a file in
the folder `ACP_TEST_SESSIONS` names, and `session/load` reads it back in another process,
replaying the history as user and agent message chunks, as the protocol asks; the turn count goes
on from there, so a reply after a load shows the earlier turns were restored. `--load-fails`
advertises it but refuses every load. Each NEW, FORK and LOAD line is also appended to
`ACP_TEST_SESSIONS/log`, for a test whose agent runs inside another process (a CLI run).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from typing import Any

from acp import (PROTOCOL_VERSION, Agent, RequestError, plan_entry, run_agent, start_tool_call,
                 update_agent_message_text, update_agent_thought_text, update_plan, update_user_message_text)
from acp.schema import (AgentCapabilities, AuthMethodAgent, ForkSessionResponse, Implementation, InitializeResponse,
                        LoadSessionResponse, NewSessionResponse, PermissionOption, PromptResponse, SessionCapabilities,
                        SessionForkCapabilities, ToolCallUpdate, Usage, UsageUpdate)

MODE = sys.argv[1] if len(sys.argv) > 1 else "echo"
FORK = "--fork" in sys.argv
DEAF = "--deaf" in sys.argv
VERSION = sys.argv[sys.argv.index("--version") + 1] if "--version" in sys.argv else "1.2.3"
LOAD = "--load" in sys.argv or "--load-fails" in sys.argv
SAVED = os.environ.get("ACP_TEST_SESSIONS", "")


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
    if SAVED and line.split(" ", 1)[0] in ("NEW", "FORK", "LOAD"):
        with open(os.path.join(SAVED, "log"), "a", encoding="utf-8") as f:
            f.write(line + "\n")


class TestAgent(Agent):
    def __init__(self) -> None:
        self.conn: Any = None
        self.turns: dict[str, int] = {}
        self.cancelled: dict[str, asyncio.Event] = {}
        self.json_mode: set[str] = set()
        self.history: dict[str, list[list[str]]] = {}
        """Per session, [role, text] of every prompt and reply (what a load replays)."""

    def save(self, sid: str) -> None:
        if LOAD and SAVED:
            with open(os.path.join(SAVED, f"{sid}.json"), "w", encoding="utf-8") as f:
                json.dump({"turns": self.turns[sid], "json_mode": sid in self.json_mode,
                           "history": self.history.get(sid, [])}, f)

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        fs = client_capabilities.fs if client_capabilities else None
        log(f"CAPS fs_read={getattr(fs, 'read_text_file', None)} fs_write={getattr(fs, 'write_text_file', None)} "
            f"terminal={getattr(client_capabilities, 'terminal', None)}")
        methods = [AuthMethodAgent(id="oauth", name="Log in with Example"),
                   AuthMethodAgent(id="key", name="Use an API key")] if MODE == "auth" else []
        caps = AgentCapabilities(load_session=LOAD,
                                 session_capabilities=SessionCapabilities(fork=SessionForkCapabilities() if FORK else None))
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=caps, auth_methods=methods,
                                  agent_info=Implementation(name="test-agent", version=VERSION))

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        if MODE == "auth":
            raise RequestError.auth_required({"details": "not logged in"})
        sid = uuid.uuid4().hex[:8]
        self.turns[sid] = 0
        log(f"NEW {sid} cwd={cwd}")
        self.save(sid)
        return NewSessionResponse(session_id=sid)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any) -> LoadSessionResponse:
        path = os.path.join(SAVED, f"{session_id}.json")
        if "--load-fails" in sys.argv or not os.path.exists(path):
            raise RequestError.resource_not_found(session_id)
        with open(path, encoding="utf-8") as f:
            saved = json.load(f)
        self.turns[session_id], self.history[session_id] = saved["turns"], saved["history"]
        if saved["json_mode"]:
            self.json_mode.add(session_id)
        for role, text in saved["history"]:  # the history replayed, as the protocol asks of a load
            update = update_user_message_text(text) if role == "user" else update_agent_message_text(text)
            await self.conn.session_update(session_id=session_id, update=update)
        log(f"LOAD {session_id} turns={saved['turns']}")
        return LoadSessionResponse()

    async def fork_session(self, session_id: str, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> ForkSessionResponse:
        sid = uuid.uuid4().hex[:8]
        self.turns[sid] = self.turns[session_id]
        self.history[sid] = list(self.history.get(session_id, []))
        if session_id in self.json_mode:
            self.json_mode.add(sid)
        log(f"FORK {session_id} -> {sid}")
        self.save(sid)
        return ForkSessionResponse(session_id=sid)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        log(f"CANCEL {session_id}")
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def say(self, sid: str, text: str) -> None:
        await self.conn.session_update(session_id=sid, update=update_agent_message_text(text))

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        sid = session_id
        self.turns[sid] += 1
        n = self.turns[sid]
        text = "".join(getattr(b, "text", "") for b in prompt)
        log(f"PROMPT {sid} turn {n} chars {len(text)}")
        cancelled = self.cancelled.setdefault(sid, asyncio.Event())
        cancelled.clear()
        if MODE == "empty":
            return PromptResponse(stop_reason="end_turn")
        if MODE == "crash":
            await self.say(sid, "I was about to")
            await asyncio.sleep(0.05)
            log("crashing now")
            sys.stdout.flush()
            import os

            os._exit(3)
        if MODE == "never":
            await self.say(sid, "thinking forever")
            if DEAF:
                await asyncio.Event().wait()
            await cancelled.wait()
            return PromptResponse(stop_reason="cancelled")
        if MODE == "permission":
            answer = await self.conn.request_permission(
                session_id=sid,
                tool_call=ToolCallUpdate(tool_call_id="t1", title="delete everything", kind="delete"),
                options=[PermissionOption(option_id="yes", name="Allow once", kind="allow_once"),
                         PermissionOption(option_id="no", name="Reject", kind="reject_once")])
            outcome = answer.outcome
            chosen = getattr(outcome, "option_id", None) or outcome.outcome
            await self.say(sid, f"permission: {chosen}")
            return PromptResponse(stop_reason="end_turn")
        await self.conn.session_update(session_id=sid, update=update_agent_thought_text(f"pondering turn {n}"))
        await self.conn.session_update(session_id=sid, update=update_plan([plan_entry("answer", priority="high", status="in_progress")]))
        await self.conn.session_update(session_id=sid, update=start_tool_call("c1", "look around", kind="read", status="completed"))
        await self.conn.session_update(session_id=sid, update=UsageUpdate(session_update="usage_update", used=10 * n, size=1000))
        last = [line for line in text.strip().splitlines() if line.strip()][-1:] or [""]
        if "JSON object" in text and "sub_targets" in text:  # a ProactiveEval plan, asked once
            reply = json.dumps({"target": "walk more", "sub_targets": ["ask", "suggest"]})
        elif "JSON object" in text and "proactive_action" in text:
            self.json_mode.add(sid)
        if "JSON object" in text and "sub_targets" in text:
            pass
        elif sid in self.json_mode:
            tail = text.rsplit("\n---\n", 1)[-1]  # this turn's lines, not the instructions above them
            quiet = "be quiet" in tail or 'source="internal_trigger"' in tail
            reply = json.dumps({"response_text": "" if quiet else f"turn {n}",
                                "proactive_action": "KEEP_SILENT" if quiet else "INFO_RETRIEVAL",
                                "task_description": {"intention": "help", "status": "IN_PROGRESS"}})
        else:
            reply = f"echo: {last[0]} (turn {n})"
        half = len(reply) // 2
        await self.say(sid, reply[:half])
        if MODE == "slow":  # a bounded wait mid-reply, cut short by session/cancel
            for _ in range(50):
                if cancelled.is_set():
                    return PromptResponse(stop_reason="cancelled")
                await asyncio.sleep(0.2)
        await self.say(sid, reply[half:])
        self.history.setdefault(sid, []).extend([["user", text], ["agent", reply]])
        self.save(sid)
        return PromptResponse(stop_reason="end_turn", usage=Usage(total_tokens=len(text) + len(reply),
                                                                  input_tokens=len(text), output_tokens=len(reply)))


if __name__ == "__main__":
    import os

    if "--noisy" in sys.argv:  # a banner on stdout, as some programs print: not JSON-RPC
        print("Welcome to test-agent!", flush=True)
    if os.environ.get("ACP_TEST_PIDFILE"):  # so a test can check the process is gone afterwards
        with open(os.environ["ACP_TEST_PIDFILE"], "a") as f:
            f.write(f"{os.getpid()}\n")
    asyncio.run(run_agent(TestAgent(), use_unstable_protocol=True))  # session/fork is unstable in the SDK
