"""One ACP agent program over stdio, as the agent seat uses it.

Why our own process handling around the SDK's `ClientSideConnection` rather than its
`spawn_agent_process` context manager: the seat's process lives across many calls of one session
(one `session/prompt` per user turn), is started lazily at the first and stopped when the session
ends (`llm.closers`), and a turn that never ends must be able to stop it. So we start the process,
hand its pipes to the SDK's connection, and keep the stderr tail for the message when it dies.

What the client advertises: no file system, no terminal (`clientCapabilities` all false): the
agent works on the dialogue only, in a scratch folder of its own. `session/request_permission`
is answered by the seat's policy (`agents.AcpAgentConfig.permission`), or by the person when the
playground has registered an asker (`set_permission_asker`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, Field

from proactive_tui.llm.acp.agents import AgentSpec
from proactive_tui.llm.errors import ModelError

if TYPE_CHECKING:
    from acp.interfaces import Client

PROTOCOL_VERSION = 1
CANCEL_GRACE_S = 5.0
"""After `session/cancel`, how long the agent has to end the turn before its process is stopped."""
STDERR_TAIL = 2000
AUTH_REQUIRED = -32000


class PermissionAsk(BaseModel):
    """A permission request as a person is shown it (the playground's modal)."""

    agent: str
    tool: str
    """The tool call's title (what the agent wants to do)."""
    kind: str | None = None
    options: list[tuple[str, str, str]] = Field(default_factory=list)
    """(option id, label, kind) as the agent offered them."""


PermissionAsker = Callable[[PermissionAsk], Awaitable[str | None]]
"""Returns the chosen option id, or None to cancel (deny)."""
_asker: PermissionAsker | None = None


def set_permission_asker(asker: PermissionAsker | None) -> None:
    """The playground registers how to ask a person; None (headless) means the policy's fallback: deny."""
    global _asker
    _asker = asker


class AgentInfo(BaseModel):
    """Who answered: what every record names (agent, its version, the protocol version)."""

    seat: str
    name: str
    title: str | None = None
    version: str | None = None
    protocol_version: int
    auth_methods: list[str] = Field(default_factory=list)
    """`name (id)` of each advertised method, shown; never used to log in on a person's behalf."""
    can_fork: bool = False
    can_load: bool = False

    def label(self) -> str:
        """`acp:gemini (gemini-cli 0.9.0, ACP v1)`."""
        who = " ".join(x for x in (self.name, self.version) if x)
        return f"{self.seat} ({who}, ACP v{self.protocol_version})"


class TurnTrace(BaseModel):
    """Everything one prompt turn sent back beside the message: for the call inspector."""

    session_id: str = ""
    stop_reason: str | None = None
    thoughts: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    plans: list[list[dict[str, Any]]] = Field(default_factory=list)
    usage: dict[str, Any] | None = None
    permissions: list[dict[str, Any]] = Field(default_factory=list)


class _Turn:
    def __init__(self, on_chunk: Callable[[str], Any] | None) -> None:
        self.text = ""
        self.trace = TurnTrace()
        self.on_chunk = on_chunk
        self.user_messages = 0
        """User messages the agent replayed (`session/load` replays the session's history as
        `user_message_chunk`s and `agent_message_chunk`s: consecutive user chunks are one message)."""
        self.last_kind = ""


def _dump(value: Any) -> dict[str, Any]:
    try:
        dumped: dict[str, Any] = value.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped
    except Exception:  # noqa: BLE001 - a trace must not break a turn
        return {"value": repr(value)}


class _Handler:
    """The client side of the protocol: what the agent may call on us."""

    def __init__(self, owner: "AgentProcess") -> None:
        self.owner = owner

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        turn = self.owner.turns.get(session_id)
        if turn is None:
            return
        kind = getattr(update, "session_update", "")
        if kind == "user_message_chunk" and turn.last_kind != kind:
            turn.user_messages += 1
        turn.last_kind = kind
        if kind == "agent_message_chunk":
            text = getattr(getattr(update, "content", None), "text", None) or ""
            if text:
                turn.text += text
                if turn.on_chunk is not None:
                    result = turn.on_chunk(text)
                    if asyncio.iscoroutine(result):
                        await result
        elif kind == "agent_thought_chunk":
            turn.trace.thoughts += getattr(getattr(update, "content", None), "text", None) or ""
        elif kind in ("tool_call", "tool_call_update"):
            turn.trace.tool_calls.append(_dump(update))
        elif kind == "plan":
            turn.trace.plans.append([_dump(e) for e in getattr(update, "entries", []) or []])
        elif kind == "usage_update":
            turn.trace.usage = {**(turn.trace.usage or {}), **_dump(update)}
            turn.trace.usage.pop("sessionUpdate", None)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        spec = self.owner.spec
        policy = spec.config.permission
        offered = [(o.option_id, o.name, o.kind) for o in options]
        chosen: str | None = None
        how: str = policy
        if policy == "allow_once":
            chosen = next((i for i, _, k in offered if k == "allow_once"), None)
        elif policy == "ask" and _asker is not None:
            ask = PermissionAsk(agent=spec.seat, tool=str(getattr(tool_call, "title", None) or "a tool call"),
                                kind=getattr(tool_call, "kind", None), options=offered)
            chosen = await _asker(ask)
            how = "asked the person"
        elif policy == "ask":
            how = "ask (nobody to ask: denied)"
        if chosen is None and policy != "ask":
            chosen = next((i for i, _, k in offered if k == "reject_once"), None)
        record = {"tool": _dump(tool_call), "options": [list(o) for o in offered], "policy": how, "chosen": chosen}
        turn = self.owner.turns.get(session_id)
        if turn is not None:
            turn.trace.permissions.append(record)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen))

    # No file system, no terminal: the capabilities say so, and a call anyway is refused.
    async def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        from acp import RequestError

        raise RequestError.method_not_found("this client offers no file system or terminal")

    write_text_file = read_text_file = create_terminal = terminal_output = _refuse
    release_terminal = wait_for_terminal_exit = kill_terminal = _refuse

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from acp import RequestError

        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


class _SdkLogging:
    """Stands in for the `logging` module inside the SDK's modules.

    Why: the SDK reports through the root logger with `logging.exception` (a line an agent prints
    on stdout that is not JSON-RPC, a handler that raised); the first such call installs a stderr
    handler on the root logger, and a headless run would print tracebacks between the dialogue's
    lines. Its messages go to our logger instead, at INFO, without the traceback: what matters of
    them reaches the person as the seat's error."""

    def __getattr__(self, name: str) -> Any:
        import logging

        return getattr(logging, name)

    @staticmethod
    def exception(msg: str, *args: Any, **kwargs: Any) -> None:
        import logging

        logging.getLogger("proactive_tui.llm.acp").info("ACP SDK: " + str(msg), *args)


def _quiet_sdk_logging() -> None:
    import logging
    import sys

    shim = _SdkLogging()
    for name, module in list(sys.modules.items()):
        if (name == "acp" or name.startswith("acp.")) and getattr(module, "logging", None) is logging:
            module.logging = shim  # type: ignore[attr-defined]


_live_groups: set[int] = set()
"""Process groups of agent programs still running: stopped at interpreter exit, should a seat be
used outside a session (no closer scope) and never closed. Each runs in its own group
(`start_new_session`), so nothing else would stop it."""


def _stop_leftovers() -> None:
    import signal

    for pgid in list(_live_groups):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    _live_groups.clear()


class AgentProcess:
    """The agent program, started on `start()`, stopped on `close()` (idempotent)."""

    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec
        self.info: AgentInfo | None = None
        self.turns: dict[str, _Turn] = {}
        self.last_turn: _Turn | None = None
        """The latest prompt's text and trace so far, kept when it fails or is cancelled."""
        self._process: asyncio.subprocess.Process | None = None
        self._conn: Any = None
        self._stderr = b""
        self._stderr_task: asyncio.Task[None] | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self, cwd: str) -> AgentInfo:
        from acp import connect_to_agent
        from acp.transports import default_environment

        _quiet_sdk_logging()

        spec = self.spec
        env = {**default_environment(), **spec.config.env}
        try:
            self._process = await asyncio.create_subprocess_exec(
                *spec.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd, limit=50 * 1024 * 1024,
                start_new_session=True)  # its own process group: stopping it stops what it started
        except OSError as exc:
            raise ModelError(f"{spec.seat}: cannot start {spec.config.command!r}: {exc.strerror or exc}",
                             "no_api", spec.seat) from None
        if not _live_groups:
            import atexit

            atexit.unregister(_stop_leftovers)
            atexit.register(_stop_leftovers)
        _live_groups.add(self._process.pid)
        self._stderr_task = asyncio.create_task(self._read_stderr(), name=f"acp-stderr-{spec.name}")
        # The handler answers the requests we support; acp's router refuses the rest (the library
        # itself casts partial clients the same way).
        self._conn = connect_to_agent(cast("Client", _Handler(self)), self._process.stdin, self._process.stdout,
                                      use_unstable_protocol=True)
        try:
            return await self._handshake()
        except BaseException:  # an agent that failed to start is stopped, never reused half-started
            await self.close()
            raise

    async def _handshake(self) -> AgentInfo:
        """`initialize`: protocol version 1, no file system, no terminal; who the agent is."""
        from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

        from proactive_tui import __version__

        spec = self.spec
        caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=False, write_text_file=False),
                                  terminal=False)
        reply = await self._call(self._conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=caps,
            client_info=Implementation(name="proactive-tui", title="proactive-tui", version=__version__)),
            "initialize")
        if reply.protocol_version != PROTOCOL_VERSION:
            raise ModelError(f"{spec.seat}: the agent speaks ACP version {reply.protocol_version}; this client "
                             f"speaks version {PROTOCOL_VERSION}", "bad_request", spec.seat)
        agent = reply.agent_info
        session_caps = getattr(reply.agent_capabilities, "session_capabilities", None)
        self.info = AgentInfo(
            seat=spec.seat, name=(agent.name if agent else spec.name), title=agent.title if agent else None,
            version=agent.version if agent else None, protocol_version=reply.protocol_version,
            auth_methods=[f"{m.name} ({m.id})" for m in reply.auth_methods or []],
            can_fork=getattr(session_caps, "fork", None) is not None,
            can_load=bool(getattr(reply.agent_capabilities, "load_session", False)))
        pinned = spec.config.version
        if pinned and self.info.version != pinned:
            raise ModelError(f"{spec.seat}: the agent reports version {self.info.version or 'none'}, the config pins "
                             f"{pinned} ([acp_agents.{spec.name}] version)", "bad_request", spec.seat)
        return self.info

    async def _read_stderr(self) -> None:
        """Drained always (a full pipe would block the agent); the tail explains a crash."""
        assert self._process is not None and self._process.stderr is not None
        while True:
            chunk = await self._process.stderr.read(4096)
            if not chunk:
                return
            self._stderr = (self._stderr + chunk)[-STDERR_TAIL:]

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def close(self) -> None:
        """Close stdin, give the program a moment, then terminate and kill its process group."""
        process, self._process = self._process, None
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()
            self._conn = None
        if process is not None:
            if process.stdin is not None:
                with contextlib.suppress(Exception):
                    process.stdin.close()
            import signal

            for sig, wait in ((None, 1.0), (signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
                if sig is not None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(process.pid, sig)
                try:
                    await asyncio.wait_for(process.wait(), timeout=wait)
                    break
                except asyncio.TimeoutError:
                    continue
            with contextlib.suppress(ProcessLookupError, PermissionError):  # what it started and left running
                os.killpg(process.pid, signal.SIGKILL)
            _live_groups.discard(process.pid)
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            with contextlib.suppress(BaseException):
                await self._stderr_task
            self._stderr_task = None

    # -- calls ----------------------------------------------------------------------------------

    def _died(self, what: str) -> ModelError:
        process = self._process
        code = process.returncode if process is not None else None
        tail = self._stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        said = f"; it said: {' | '.join(tail)}" if tail else ""
        status = f" (exit code {code})" if code is not None else ""
        return ModelError(f"{self.spec.seat}: the agent program ended during {what}{status}{said}", "server", self.spec.seat)

    def _auth_message(self) -> str:
        methods = ", ".join(self.info.auth_methods) if self.info and self.info.auth_methods else "none advertised"
        import shlex

        return (f"{self.spec.seat}: the agent needs a login: run `{shlex.join(self.spec.argv)}` (or the agent's own "
                f"CLI) in a terminal and log in as it says, then start again (its login methods: {methods})")

    async def _call(self, awaitable: Awaitable[Any], what: str, bounded: bool = True) -> Any:
        """One request; the SDK's errors as ModelErrors a person can read (no traceback). Bounded by
        the turn deadline (a program that never answers `initialize` is not an agent), except a
        prompt, which `prompt` bounds and cancels itself."""
        from acp import RequestError

        try:
            if not bounded:
                return await awaitable
            try:
                return await asyncio.wait_for(awaitable, timeout=self.spec.config.turn_timeout)
            except asyncio.TimeoutError:
                raise ModelError(f"{self.spec.seat}: no answer to {what} within {self.spec.config.turn_timeout:g}s "
                                 "(turn_timeout); is it an ACP agent?", "timeout", self.spec.seat) from None
        except RequestError as exc:
            if exc.code == AUTH_REQUIRED:
                raise ModelError(self._auth_message(), "auth", self.spec.seat) from None
            raise ModelError(f"{self.spec.seat}: {what} failed: {exc} (code {exc.code})", "bad_request",
                             self.spec.seat) from None
        except (ConnectionError, BrokenPipeError, asyncio.IncompleteReadError):
            await asyncio.sleep(0.05)  # let the exit code arrive
            raise self._died(what) from None

    async def new_session(self, cwd: str) -> str:
        reply = await self._call(self._conn.new_session(cwd=cwd, mcp_servers=[]), "session/new")
        session_id: str = reply.session_id
        return session_id

    async def fork(self, session_id: str, cwd: str) -> str:
        """A copy of `session_id` as it is now (the agent's `session/fork`, when advertised)."""
        reply = await self._call(self._conn.fork_session(session_id=session_id, cwd=cwd, mcp_servers=[]), "session/fork")
        forked: str = reply.session_id
        return forked

    async def load(self, session_id: str, cwd: str) -> int:
        """The agent's saved session `session_id` made live again (`session/load`, when the agent
        advertises `loadSession`); returns how many user messages its replay of the history held,
        so the caller can check the copy holds what the record says it sent."""
        replay = self.turns[session_id] = _Turn(None)
        try:
            await self._call(self._conn.load_session(cwd=cwd, session_id=session_id, mcp_servers=[]), "session/load")
            await asyncio.sleep(0)  # notification handlers the response overtook
        finally:
            self.turns.pop(session_id, None)
        return replay.user_messages

    async def prompt(self, session_id: str, text: str, deadline_s: float,
                     on_chunk: Callable[[str], Any] | None = None) -> tuple[str, TurnTrace]:
        """One user turn: the streamed message text and the turn's trace, ended by the stop reason.

        Past `deadline_s` a `session/cancel` goes out; an agent that still does not end the turn
        within `CANCEL_GRACE_S` is stopped. Either way a ModelError (kind `timeout`) carries the text
        that had arrived. A cancelled caller (the session stopped) cancels the turn the same way."""
        from acp import text_block

        turn = self.turns[session_id] = self.last_turn = _Turn(on_chunk)
        turn.trace.session_id = session_id
        task = asyncio.ensure_future(self._call(self._conn.prompt(session_id=session_id, prompt=[text_block(text)]),
                                                "session/prompt", bounded=False))
        try:
            done, _ = await asyncio.wait({task}, timeout=deadline_s)
            if not done:
                ended = await self._cancel(session_id, task)
                how = "it ended the turn as cancelled" if ended else "it did not end the turn, so it was stopped"
                error = ModelError(f"{self.spec.seat}: no end of turn within {deadline_s:g}s (turn_timeout); "
                                   f"session/cancel sent, {how}", "timeout", self.spec.seat)
                error.partial_text = turn.text
                raise error
            try:
                reply = task.result()
            except ModelError as exc:
                exc.partial_text = turn.text
                raise
            turn.trace.stop_reason = reply.stop_reason
            if reply.usage is not None:
                turn.trace.usage = {**(turn.trace.usage or {}), **_dump(reply.usage)}
            return turn.text, turn.trace
        except asyncio.CancelledError:
            if not task.done():
                await asyncio.shield(self._cancel(session_id, task))
            raise
        finally:
            self.turns.pop(session_id, None)

    async def _cancel(self, session_id: str, task: asyncio.Future[Any]) -> bool:
        """Send `session/cancel`; True when the agent then ended the turn, else its process is stopped."""
        with contextlib.suppress(Exception):
            await self._conn.cancel(session_id=session_id)
        done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
        if done:
            with contextlib.suppress(BaseException):
                task.result()
            return True
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        await self.close()
        return False


def elapsed_since(started: float) -> float:
    return round(time.monotonic() - started, 3)
