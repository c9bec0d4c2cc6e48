"""The agent seat filled by an ACP agent program.

How a dialogue becomes ACP turns (the protocol keeps the conversation in the agent's session, a
model call is sent all of it every time):

- The family's instructions go in the first prompt of a session (ACP has no system prompt),
  above the first user message; a structured reply's format (the JSON schema) goes in too.
- Each later call sends, as one `session/prompt`, what the dialogue gained since the agent's last
  reply (normally the user's new message). The agent's own lines are already in its session, as it
  wrote them, so the family's reformatting of them (Chronos keeps the parsed JSON) is not a change.
- When the dialogue no longer continues what the session holds, the seat continues from a
  snapshot the agent forked with `session/fork` after that turn, when the agent advertises fork
  and one fits. Otherwise it starts a new session:
  - in a branch or a resumed session (the agent gave the earlier replies in another process), it
    re-drives it: each earlier user turn is prompted again, one by one, and the agent's new answers
    are discarded. Its later replies are then marked "re-driven, not identical" (the agent never
    saw its recorded answers; it saw its own new ones);
  - otherwise (a recorded context the agent never wrote, a family that rebuilds its dialogue
    every time, a restart after a crash) the first prompt gives the dialogue so far as a labelled
    transcript, and the agent answers from there.
- Silence (Chronos scores keeping silent): the agent answers with the JSON reply whose action is
  `KEEP_SILENT`; a turn that ends with no text at all is not silence and is never scored as a
  reply: it is an error naming the stop reason (asked again, then a failed reply).

Every turn is one call trace (`llm.trace`, the call inspector): the prompt sent, the message,
the stop reason, and the agent's side in `agent`: who answered (agent, version, protocol
version), thoughts, tool calls, plans, usage, permission requests.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ValidationError

from proactive_tui.core.events import SeatInfo, UsageInfo
from proactive_tui.core.participants import Participant, Reply, ReplyRequest, _mark_seat, scrub_model
from proactive_tui.llm.acp.agents import AgentSpec
from proactive_tui.llm.errors import ModelError
from proactive_tui.llm.jsonreply import NoJSON, extract_json
from proactive_tui.textsafe import scrub

STRUCTURED_REASKS = 2
REDRIVEN = "re-driven, not identical"
SILENCE_NOTE = ("Keeping silent is a valid answer here: to say nothing to the user this turn, answer with "
                "the action KEEP_SILENT. Never end a turn with no text: an empty turn counts as no answer.")


def _wants_silence_convention(schema: type[BaseModel]) -> bool:
    """A reply schema where silence is an answer (an action KEEP_SILENT among its choices)."""
    return "KEEP_SILENT" in json.dumps(schema.model_json_schema())


def _format_note(schema: type[BaseModel], first: bool) -> str:
    if not first:
        return "Answer with only a JSON object in the format given at the start, no other text."
    note = ("Answer every turn with only a JSON object, no other text. It must match this JSON schema:\n"
            + json.dumps(schema.model_json_schema(), ensure_ascii=False))
    if _wants_silence_convention(schema):
        note += "\n" + SILENCE_NOTE
    return note


def _render(messages: list[dict[str, str]], label_all: bool = False) -> str:
    """Dialogue lines the agent has not seen, as one prompt: user lines as they are (or labelled
    `[user]`, in a transcript of earlier lines); any other line (one the protocol put in the agent's
    mouth) labelled, so the agent can tell them apart."""
    parts = []
    for m in messages:
        role, text = m.get("role", "user"), str(m.get("content", ""))
        parts.append(text if role == "user" and not label_all else f"[{role}] {text}")
    return "\n\n".join(parts)


def _exchanges(messages: list[dict[str, str]]) -> list[tuple[list[dict[str, str]], dict[str, str] | None]]:
    """The dialogue as (lines before an agent reply, that reply), the last one open (reply None)."""
    out: list[tuple[list[dict[str, str]], dict[str, str] | None]] = []
    pending: list[dict[str, str]] = []
    for m in messages:
        if m.get("role") == "assistant":
            out.append((pending, m))
            pending = []
        else:
            pending.append(m)
    out.append((pending, None))
    return out


def _same_turns(a: list[dict[str, str]], b: list[dict[str, str]]) -> bool:
    """Same dialogue for the agent's session: same roles, same non-agent lines (its own lines may
    be reformatted by the family)."""
    if len(a) != len(b):
        return False
    return all(x.get("role") == y.get("role") and (x.get("role") == "assistant" or x.get("content") == y.get("content"))
               for x, y in zip(a, b))


def _parse(text: str, schema: type[BaseModel]) -> Any:
    """The reply as `schema`, read from its JSON as a model seat's is. Not the family's `parse_text`:
    that reads a person's typing, and some families ask the person again through it (ProactiveBench
    announces a new prompt for the seat), which must never happen for a program."""
    return schema.model_validate(extract_json(text))


class AcpParticipant(Participant):
    """An ACP agent program in a seat. Its process starts at the first call and stops when the
    session's protocol ends (`llm.closers`), or on `aclose()`."""

    def __init__(self, spec: AgentSpec, workdir_root: Path | None = None) -> None:
        self.spec = spec
        self.info = SeatInfo(kind="llm", label=spec.seat)
        self.agent: Any = None
        """The `client.AgentProcess`, once started."""
        self.session_id: str | None = None
        self.held: list[dict[str, str]] = []
        """The dialogue the agent's current session holds (user and assistant lines)."""
        self.system: str | None = None
        self.snapshots: dict[int, str] = {}
        """len(held) -> a session forked right after that turn (agents that advertise fork)."""
        self.redriven = False
        self.schema_sent = False
        self.workdir: Path | None = None
        self._root = workdir_root
        self._lock = asyncio.Lock()

    # -- lifecycle ------------------------------------------------------------------------------

    async def _ensure_started(self) -> None:
        if self.agent is not None and self.agent.alive:
            return
        from proactive_tui.llm import closers
        from proactive_tui.llm.acp.client import AgentProcess

        if self.workdir is None:
            from proactive_tui.paths import cache_dir

            root = self._root or (cache_dir() / "acp-sessions")
            self.workdir = root / f"{self.spec.name}-{uuid.uuid4().hex[:10]}"
            self.workdir.mkdir(parents=True, exist_ok=True)
            closers.register(self.aclose)  # outside a session: the caller's `aclose`, else the exit hook (client)
        self.agent = AgentProcess(self.spec)
        self.session_id = None
        self.held, self.snapshots = [], {}
        await self.agent.start(str(self.workdir))

    async def aclose(self) -> None:
        agent, self.agent = self.agent, None
        if agent is not None:
            await agent.close()
        if self.workdir is not None and not self.spec.config.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    @property
    def model_label(self) -> str:
        label = self.agent.info.label() if self.agent is not None and self.agent.info else self.spec.seat
        return f"{label}; {REDRIVEN}" if self.redriven else label

    # -- turns ----------------------------------------------------------------------------------

    async def _new_session(self) -> None:
        self.session_id = await self.agent.new_session(str(self.workdir))
        self.held, self.snapshots, self.schema_sent = [], {}, False

    def _opening(self, system: str) -> str:
        if not system:
            return ""
        return ("Instructions for this whole conversation (in place of a system prompt):\n\n" + system
                + "\n\n---\n\n")

    async def _turn(self, request: ReplyRequest, text: str, purpose: str,
                    on_chunk: Callable[[str], Any] | None) -> tuple[str, Any]:
        """One `session/prompt`, traced."""
        from proactive_tui.llm import trace

        started = time.monotonic()
        started_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        reply, turn, error = "", None, None
        try:
            reply, turn = await self.agent.prompt(self.session_id, text, self.spec.config.turn_timeout, on_chunk)
            return reply, turn
        except ModelError as exc:
            error, reply = exc.message, exc.partial_text
            raise
        except asyncio.CancelledError:
            error = "cancelled before the turn ended (session/cancel sent)"
            raise
        finally:
            last = getattr(self.agent, "last_turn", None)
            if turn is None and last is not None and last.trace.session_id == self.session_id:
                turn, reply = last.trace, reply or last.text  # a failed turn's thoughts and text so far
            if trace.SINK.get() is not None:
                usage = (turn.usage if turn is not None else None) or {}
                agent = {"info": self.agent.info.model_dump() if self.agent is not None and self.agent.info else
                         {"seat": self.spec.seat}, "session_id": self.session_id, "purpose": purpose,
                         "redriven": self.redriven}
                if turn is not None:
                    agent.update(turn.model_dump(exclude={"session_id", "stop_reason"}))
                with trace.labelled(request.seat, f"{request.purpose or request.seat + ' reply'}"
                                    + ("" if purpose == "reply" else f" ({purpose})"),
                                    turn=request.turn, message_id=request.message_id if purpose == "reply" else None):
                    trace.report(trace.CallTrace(
                        model=self.model_label, request={"messages": [{"role": "user", "content": text}], "stream": True},
                        reply=reply, finish_reason=turn.stop_reason if turn is not None else None,
                        prompt_tokens=int(usage.get("inputTokens") or 0), completion_tokens=int(usage.get("outputTokens") or 0),
                        started_at=started_at, latency_s=round(time.monotonic() - started, 3), attempts=1, error=error,
                        agent=agent))

    async def _catch_up(self, request: ReplyRequest, note: str) -> str:
        """Bring the agent's session to the dialogue of `request`; returns the prompt for its reply."""
        messages = [dict(m) for m in request.messages]
        if self.session_id is not None and self.system == request.system and len(messages) >= len(self.held) \
                and _same_turns(messages[:len(self.held)], self.held):
            new = messages[len(self.held):]
            self.held = messages
            text = _render(new) or (request.hint or "(No new message: it is your turn again.)")
            return text + note
        same_system = self.system == request.system
        self.system = request.system
        held = self.held
        usable = [n for n in self.snapshots if n <= len(messages) and _same_turns(messages[:n], held[:n])]
        if self.session_id is not None and usable and same_system:
            n = max(usable)
            self.session_id = await self.agent.fork(self.snapshots[n], str(self.workdir))
            self.snapshots = {k: v for k, v in self.snapshots.items() if k <= n}
            self.held = messages
            return (_render(messages[n:]) or "(It is your turn.)") + note
        from proactive_tui.llm import closers

        fresh = self.session_id is None and self.agent is not None and not self.held
        await self._new_session()
        opening = self._opening(request.system)
        exchanges = _exchanges(messages)
        if exchanges[:-1] and fresh and closers.continues_recorded():
            # A branch or a resumed session: the agent gave the earlier replies in another process.
            # Re-drive: every earlier user turn prompted again, its new answers discarded.
            for lines, _recorded in exchanges[:-1]:
                self.redriven = True
                await self._turn(request, opening + (_render(lines) or "(It is your turn.)"),
                                 "re-driving an earlier turn", None)
                opening = ""
        elif exchanges[:-1]:
            # Lines the agent did not write in its session (a recorded context, a family that rebuilds
            # the dialogue each time): one opening prompt gives them as the conversation so far.
            earlier = messages[:len(messages) - len(exchanges[-1][0])]
            opening += "The conversation so far:\n\n" + _render(earlier, label_all=True) + "\n\n---\n\n"
        self.held = messages
        return opening + (_render(exchanges[-1][0]) or "(It is your turn.)") + note

    async def _after_turn(self, text: str) -> None:
        self.held = self.held + [{"role": "assistant", "content": text}]
        if self.agent is not None and self.agent.info and self.agent.info.can_fork:
            self.snapshots[len(self.held)] = await self.agent.fork(self.session_id, str(self.workdir))

    async def reply(self, request: ReplyRequest) -> Reply:
        on_delta = request.on_delta
        try:
            async with self._lock:
                await self._ensure_started()
                prompt = await self._catch_up(request, "")
                text, turn = await self._turn(request, prompt, "reply",
                                              (lambda t: on_delta(scrub(t))) if on_delta is not None else None)
                if not text.strip():
                    raise ModelError(f"{self.spec.seat}: the agent ended its turn (stop reason "
                                     f"{turn.stop_reason}) with no message text", "other", self.spec.seat)
                await self._after_turn(text)
        except Exception as exc:
            _mark_seat(exc, request.seat)
            raise
        return Reply(text=scrub(text), model=self.model_label, usage=self._usage(turn))

    async def reply_structured(self, request: ReplyRequest, schema: type, parse_text: Any = None) -> tuple[Any, Reply]:
        """The reply parsed into `schema`; an unusable one is asked again in the same session (up
        to twice) with the reason, then a ModelError of kind `structured` keeps the last text."""
        try:
            async with self._lock:
                await self._ensure_started()
                prompt = await self._catch_up(request, "")
                prompt += "\n\n" + _format_note(schema, first=not self.schema_sent)
                self.schema_sent = True
                problem, text = "", ""
                seen = self.held  # the dialogue as the family has it; re-asks stay in the agent's session only
                for ask in range(1, STRUCTURED_REASKS + 2):
                    text, turn = await self._turn(request, prompt, "reply" if ask == 1 else f"re-ask {ask - 1}", None)
                    try:
                        if not text.strip():
                            raise ValueError(f"the turn ended (stop reason {turn.stop_reason}) with no text")
                        value = _parse(text, schema)
                    except (ValueError, ValidationError, NoJSON) as exc:
                        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                        prompt = f"That answer could not be used ({problem}). " + _format_note(schema, first=False)
                        continue
                    self.held = seen
                    await self._after_turn(text)
                    return scrub_model(value), Reply(text=scrub(text), model=self.model_label, usage=self._usage(turn),
                                                     asks=ask)
                self.held = seen + [{"role": "assistant", "content": text}]
                raise ModelError(f"{self.spec.seat}: no usable {schema.__name__} after {STRUCTURED_REASKS + 1} "
                                 f"answers; the last: {problem}", "structured", self.spec.seat, partial_text=text)
        except Exception as exc:
            _mark_seat(exc, request.seat)
            raise

    @staticmethod
    def _usage(turn: Any) -> UsageInfo:
        usage = (turn.usage if turn is not None else None) or {}
        prompt, completion = int(usage.get("inputTokens") or 0), int(usage.get("outputTokens") or 0)
        return UsageInfo(prompt_tokens=prompt, completion_tokens=completion,
                         total_tokens=int(usage.get("totalTokens") or prompt + completion))


def participant_for(seat: str) -> AcpParticipant:
    """The participant an `acp:` seat value names (config entries from the config file)."""
    from proactive_tui.llm.acp.agents import configured_agents, resolve

    return AcpParticipant(resolve(seat, configured_agents()))
