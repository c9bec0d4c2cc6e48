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
    first tries to restore the agent's own session: every reply's trace records where the agent's
    session then stood (`restore_points`: its session id, the dialogue it held, as a digest, and
    how many prompts it had been sent; with fork, a snapshot forked right after the turn). When the
    agent advertises `loadSession` and a recorded point holds exactly the dialogue before the
    open turn, the seat loads it (`session/load`), checks the agent's replay holds as many user
    messages as the record sent, forks it when the agent can (so the saved session stays as
    recorded for the next branch), and continues there: its replies are marked "restored from the
    agent's saved session" (identical history, per the agent). Otherwise, or when the load fails,
    it re-drives: each earlier user turn is prompted again, one by one, and the agent's new
    answers are discarded. Its later replies are then marked "re-driven, not identical" (the agent
    never saw its recorded answers; it saw its own new ones), and the trace and the record say why
    it was not restored (`continued`);
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
import hashlib
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
RESTORED = "restored from the agent's saved session"
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


def _digest(system: str, messages: list[dict[str, str]]) -> str:
    """What an agent session holds, as a short digest: the instructions and every line (role and
    text, trimmed). A restore point fits a dialogue only when their digests are equal."""
    lines = [[m.get("role", "user"), str(m.get("content", "")).strip()] for m in messages]
    return hashlib.sha256(json.dumps([system.strip(), lines], ensure_ascii=False).encode()).hexdigest()[:24]


def recorded_restore_points(events: list[Any], record: Any = None) -> dict[str, list[dict[str, Any]]]:
    """Per seat, the agent sessions a continued dialogue may restore (see the module docstring):
    from the traces of `events` (a branch's inherited prefix) and from `record`'s `models[seat]
    ["acp"]["restore_points"]` (the record a resumed session continues)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        agent = getattr(getattr(event, "call", None), "agent", None)
        if getattr(event, "type", "") == "model_called" and isinstance(agent, dict):
            out.setdefault(event.seat, []).extend(p for p in agent.get("restore_points") or [] if isinstance(p, dict))
    for seat, model in (getattr(record, "models", None) or {}).items():
        acp = model.get("acp") if isinstance(model, dict) else None
        if isinstance(acp, dict):
            out.setdefault(seat, []).extend(p for p in acp.get("restore_points") or [] if isinstance(p, dict))
    return out


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
        self.restored = False
        self.continued: dict[str, Any] | None = None
        """How a continued dialogue was brought into the agent (restored or re-driven, and why),
        for the trace and the record."""
        self.prompts = 0
        """Prompts the current session has been sent (its own and, for a fork, its origin's)."""
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
        info = await self.agent.start(str(self.workdir))
        # Who answers, once known: what a message announced from now on names (agent, version).
        self.info = SeatInfo(kind="llm", label=info.label())

    async def start(self, seat: str = "agent") -> None:
        """Start the agent program now, so the message about to be announced names it."""
        try:
            async with self._lock:
                await self._ensure_started()
        except Exception as exc:
            _mark_seat(exc, seat)
            raise

    async def aclose(self) -> None:
        agent, self.agent = self.agent, None
        if agent is not None:
            await agent.close()
        if self.workdir is not None and not self.spec.config.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    @property
    def model_label(self) -> str:
        label = self.agent.info.label() if self.agent is not None and self.agent.info else self.spec.seat
        if self.restored:
            return f"{label}; {RESTORED}"
        return f"{label}; {REDRIVEN}" if self.redriven else label

    # -- turns ----------------------------------------------------------------------------------

    async def _new_session(self) -> None:
        self.session_id = await self.agent.new_session(str(self.workdir))
        self.held, self.snapshots, self.schema_sent, self.prompts = [], {}, False, 0

    def _opening(self, system: str) -> str:
        if not system:
            return ""
        return ("Instructions for this whole conversation (in place of a system prompt):\n\n" + system
                + "\n\n---\n\n")

    async def _turn(self, request: ReplyRequest, text: str, purpose: str,
                    on_chunk: Callable[[str], Any] | None,
                    after: Callable[[str, Any], Any] | None = None) -> tuple[str, Any]:
        """One `session/prompt`, traced. `after(text, turn)`, when given, runs once the turn ended
        and before the trace goes out; the restore points it returns go in the trace."""
        from proactive_tui.llm import trace

        started = time.monotonic()
        started_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        reply, turn, error = "", None, None
        points: list[dict[str, Any]] = []
        try:
            self.prompts += 1
            reply, turn = await self.agent.prompt(self.session_id, text, self.spec.config.turn_timeout, on_chunk)
            if after is not None:
                points = await after(reply, turn)
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
                         "redriven": self.redriven, "restored": self.restored}
                if self.continued is not None:
                    agent["continued"] = self.continued
                if points:
                    agent["restore_points"] = points
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
        exchanges = _exchanges(messages)
        continued = bool(exchanges[:-1]) and fresh and closers.continues_recorded()
        if continued:
            # A branch or a resumed session: the agent gave the earlier replies in another process.
            # Its own saved session, when it can load one that holds this dialogue; else re-drive.
            why_not = await self._restore(request, messages, len(messages) - len(exchanges[-1][0]))
            if why_not is None:
                return (_render(exchanges[-1][0]) or "(It is your turn.)") + note
            self.continued = {"how": "re-driven", "reason": why_not}
        await self._new_session()
        opening = self._opening(request.system)
        if continued:
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

    async def _restore(self, request: ReplyRequest, messages: list[dict[str, str]], upto: int) -> str | None:
        """Continue from the agent's own saved session holding `messages[:upto]` (the dialogue
        before the open turn): None when done, else why not (the caller re-drives)."""
        from proactive_tui.llm import closers

        info = self.agent.info
        if info is None or not info.can_load:
            return "the agent does not offer session/load"
        digest = _digest(request.system or "", messages[:upto])
        fitting = [p for p in closers.recorded_for(request.seat)
                   if p.get("messages") == upto and digest in (p.get("digests") or []) and p.get("session_id")]
        if not fitting:
            return ("no saved agent session holds the dialogue before this turn (an edited or regenerated "
                    "line, or a point the agent kept no copy of)")
        fitting.sort(key=lambda p: not p.get("snapshot"))  # a snapshot first: nothing was sent to it since
        problems = []
        for point in fitting:
            saved = str(point["session_id"])
            try:
                replayed = await self.agent.load(saved, str(self.workdir))
                if replayed != point.get("prompts"):
                    problems.append(f"the agent's session {saved} replayed {replayed} user messages, the record "
                                    f"sent {point.get('prompts')}")
                    continue
                session_id, via = saved, "session/load"
                if info.can_fork:  # the saved session stays as recorded, for another branch of it
                    session_id, via = await self.agent.fork(saved, str(self.workdir)), "session/load, session/fork"
            except ModelError as exc:
                problems.append(f"restoring {saved} failed: {exc.message}")
                if not self.agent.alive:  # nothing more to ask it; the caller's new session says why
                    break
                continue
            self.session_id, self.held, self.snapshots = session_id, messages, {}
            self.prompts, self.schema_sent = int(point.get("prompts") or 0), bool(point.get("schema_sent"))
            self.restored = True
            self.continued = {"how": "restored", "from_session": saved, "via": via}
            return None
        return "; ".join(problems)

    async def _after_turn(self, text: str, value: Any = None) -> list[dict[str, Any]]:
        """The reply joins what the session holds; returns where the session now stands (and,
        with fork, the snapshot taken of it), for a later branch or resume to restore."""
        held = self.held + [{"role": "assistant", "content": text}]
        self.held = held
        digests = [_digest(self.system or "", held)]
        if value is not None and hasattr(value, "model_dump_json"):  # a family may keep the parsed value
            digests.append(_digest(self.system or "", held[:-1] + [{"role": "assistant", "content": value.model_dump_json()}]))
        point = {"messages": len(held), "digests": digests, "prompts": self.prompts, "schema_sent": self.schema_sent}
        points = [{"session_id": self.session_id, **point}]
        if self.agent is not None and self.agent.info and self.agent.info.can_fork:
            snapshot = await self.agent.fork(self.session_id, str(self.workdir))
            self.snapshots[len(self.held)] = snapshot
            points.append({"session_id": snapshot, **point, "snapshot": True})
        return points

    async def reply(self, request: ReplyRequest) -> Reply:
        on_delta = request.on_delta
        try:
            async with self._lock:
                await self._ensure_started()
                prompt = await self._catch_up(request, "")

                async def after(text: str, turn: Any) -> list[dict[str, Any]]:
                    return await self._after_turn(scrub(text)) if text.strip() else []

                text, turn = await self._turn(request, prompt, "reply",
                                              (lambda t: on_delta(scrub(t))) if on_delta is not None else None, after)
                if not text.strip():
                    raise ModelError(f"{self.spec.seat}: the agent ended its turn (stop reason "
                                     f"{turn.stop_reason}) with no message text", "other", self.spec.seat)
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
                parsed: list[Any] = []

                async def after(text: str, turn: Any) -> list[dict[str, Any]]:
                    """The reply read as `schema` (kept in `parsed`); a usable one joins the session."""
                    nonlocal problem
                    try:
                        if not text.strip():
                            raise ValueError(f"the turn ended (stop reason {turn.stop_reason}) with no text")
                        value = scrub_model(_parse(text, schema))
                    except (ValueError, ValidationError, NoJSON) as exc:
                        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                        return []
                    parsed.append(value)
                    self.held = seen
                    return await self._after_turn(scrub(text), value)

                for ask in range(1, STRUCTURED_REASKS + 2):
                    text, turn = await self._turn(request, prompt, "reply" if ask == 1 else f"re-ask {ask - 1}", None,
                                                  after)
                    if not parsed:
                        prompt = f"That answer could not be used ({problem}). " + _format_note(schema, first=False)
                        continue
                    return parsed[0], Reply(text=scrub(text), model=self.model_label, usage=self._usage(turn), asks=ask)
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
