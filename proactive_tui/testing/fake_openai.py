"""A fake OpenAI-compatible chat server on 127.0.0.1, so tests and benchmarks drive the real litellm path.

Mocking `litellm.acompletion` would skip exactly the code that breaks in practice: request
building, SSE parsing, error mapping, retries and timeouts. This server speaks enough of the
OpenAI wire format (chat completions, streaming, usage, error bodies) for litellm's `openai/`
provider to treat it as the real thing, while staying stdlib-only and deterministic:

    with FakeOpenAIServer() as srv:
        srv.script(Reply.text("hello"), Reply.error(429, "slow down", retry_after=1))
        await litellm.acompletion(model="openai/fake", api_base=srv.base_url, api_key="sk-test", ...)

`flavor` makes it answer `response_format` and routes the way a real self-hosted server does
(`FLAVORS`), so the gateway's negotiation is tested against each server's real refusals.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Literal

Fault = Literal["none", "malformed", "hang", "drop_stream", "slow_first_token", "stall", "endless", "html",
                "empty_choices", "empty_stream", "reset", "page", "bad_utf8"]
"""`slow_first_token`: headers and the role chunk at once, then `delay` seconds before the text (a
slow prefill). `stall`: half the words, then silence until the client gives up. `endless`: words
forever, never a stop chunk (a model that loops with no token cap). `html`: HTTP 200 with an HTML
page for a body (a proxy's or captive portal's error page), streamed or not. `empty_choices`: a
well-formed 200 with `choices: []` (streamed: chunks with no choices, then [DONE]). `empty_stream`:
a 200 event stream that holds only `[DONE]`. `reset`: the connection is reset (TCP RST) after half
the stream's chunks, or, not streamed, before any byte of the answer. `page`: the reply's `content`
sent as an HTML page with the reply's `status` (a proxy's or provider's error page, which may quote
the request: `Reply.page`). `bad_utf8`: the reply's words, with one chunk's text replaced by bytes
that are not UTF-8 (a server or proxy that mangles the encoding), streamed or not."""

Flavor = Literal["openai", "llama_cpp", "ollama", "lm_studio"]
FLAVORS: dict[str, str] = {
    "openai": "takes every response_format type; routes /chat/completions under any prefix.",
    "llama_cpp": (
        "llama-cpp-python's `llama_cpp.server` (0.3.x): its request model only allows response_format "
        "type 'text' or 'json_object', and a validation error inside the handler is answered as HTTP "
        "500 naming `response_format.type` (observed against the real server: \"1 validation error: "
        "{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be "
        "'text' or 'json_object'\"...\"); `{\"type\": \"json_object\", \"schema\": ...}` is constrained to "
        "the schema. Routes live under /v1 only; elsewhere FastAPI's 404 `{\"detail\": \"Not Found\"}`."
    ),
    "ollama": (
        "Ollama's OpenAI endpoint (openai/openai.go, FromChatRequest): `json_schema` passes "
        "`json_schema.schema` on as the format (constrained), `json_object` becomes format \"json\" "
        "(any JSON, a `schema` key ignored), any other type is silently ignored; nothing is rejected. "
        "Before v0.5 json_schema itself was ignored (ollama/ollama#6473, #10001)."
    ),
    "lm_studio": (
        "LM Studio's server: `json_object` is refused with HTTP 400 `{\"error\": \"'response_format.type' "
        "must be 'json_schema' or 'text'\"}` (a string, not an object; lmstudio-ai/lmstudio-bug-tracker#189, "
        "#307, reported against 0.4.19 in willmiao/ComfyUI-Lora-Manager#1033); json_schema is constrained."
    ),
}
"""What each quirk mode imitates, and where the behaviour was checked."""

HANG_SECONDS = 30.0
"""How long a `hang` reply stalls when it names no delay: far beyond any sane test timeout."""

_ERROR_KINDS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "permission_denied"),
    404: ("not_found_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


@dataclass
class Reply:
    """One scripted answer. Scripts make tests say exactly what the "model" does, in order."""

    content: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Extra seconds before answering; for `hang`, how long to stall (0 means HANG_SECONDS)."""
    fault: Fault = "none"

    @classmethod
    def text(cls, content: str, **kwargs: Any) -> Reply:
        return cls(content=content, **kwargs)

    @classmethod
    def page(cls, status: int, html: str) -> Reply:
        """An HTML page (`text/html`) with this status, in place of the API's JSON."""
        return cls(content=html, status=status, fault="page")

    @classmethod
    def error(cls, status: int, message: str = "", retry_after: float | None = None) -> Reply:
        """An OpenAI-style error; `retry_after` sets the header clients use for back-off."""
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        return cls(content=message or f"fake error {status}", status=status, headers=headers)


@dataclass
class RecordedRequest:
    """What a client sent. Indexing reads the JSON body, so `req["messages"]` works directly."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased, since HTTP header names are case-insensitive."""
    body: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.body[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.body.get(key, default)


def _text_of(content: Any) -> str:
    """Message content is a string or a list of parts; only text parts count."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def count_tokens(text: str) -> int:
    """Whitespace words: crude, but deterministic, which is what usage assertions need."""
    return len(text.split())


def example_for_schema(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """The smallest value valid for a JSON schema: only required properties, first enum value."""
    defs = defs if defs is not None else {**schema.get("definitions", {}), **schema.get("$defs", {})}
    if "$ref" in schema:
        return example_for_schema(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return example_for_schema(options[0], defs)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: example_for_schema(props.get(name, {}), defs) for name in schema.get("required", [])}
    return {"string": "x", "integer": 1, "number": 1.0, "boolean": True, "array": [], "null": None}.get(kind, "x")


def schema_name(request: dict[str, Any]) -> str | None:
    """The `json_schema` name a structured request asks for (None for free text)."""
    return ((request.get("response_format") or {}).get("json_schema") or {}).get("name")


def proactiveeval_responder(free_text: str = "Shall we talk about it?") -> Callable[[dict[str, Any]], str]:
    """Replies that carry a ProactiveEval session through every step: a plan, a plan score of 6,
    turn checks that never reach the target (so each session runs its full turns), a guidance
    score of 8, and `free_text` for the agent's and the user's messages. Shared by the batch tests
    and the throughput benchmark, which need sessions of a known, fixed number of calls."""

    def respond(request: dict[str, Any]) -> str:
        name = schema_name(request)
        if name == "PlanDraft":
            return json.dumps({"target": "t", "sub_targets": ["a", "b"]})
        if name == "PlanJudgement":
            return json.dumps({"reasoning": "fine", "score": 6})
        if name == "TurnVerdict":
            return json.dumps({"reasoning": "not yet", "target_reached": False, "covered_steps": [1]})
        if name == "GuidanceJudgement":
            return json.dumps({"reasoning": "ok", "overall": 8, "effectiveness": 6, "personalization": 6, "tone": 6,
                               "engagement": 6, "naturalness": 6})
        return free_text

    return respond


def default_responder(request: dict[str, Any]) -> str:
    """Echo the last user message, or emit schema-valid JSON when the request asks for JSON.

    A `json_object` request carrying a `schema` gets a schema-valid object (what llama-cpp-python
    does; the flavors that ignore that schema strip it before answering)."""
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return json.dumps(example_for_schema((fmt.get("json_schema") or {}).get("schema") or {}))
    if fmt.get("type") == "json_object":
        return json.dumps(example_for_schema(fmt["schema"])) if isinstance(fmt.get("schema"), dict) else "{}"
    users = [m for m in request.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
    return "ok: " + (_text_of(users[-1].get("content")) if users else "")[:200]


def _event_bytes(event: dict[str, Any], fault: str) -> bytes:
    """An event (or a whole completion) as the bytes sent: JSON in UTF-8, or for `bad_utf8` the
    text written as Latin-1, so every non-ASCII character arrives as a byte that is not UTF-8."""
    if fault == "bad_utf8":
        return json.dumps(event, ensure_ascii=False).encode("latin-1", errors="replace")
    return json.dumps(event).encode()


class _Handler(BaseHTTPRequestHandler):
    """One request per connection (HTTP/1.0 + Connection: close): no keep-alive races in clients.

    With the server's `keep_alive` on, whole (non-streamed) replies keep the connection open
    (HTTP/1.1), as vLLM, llama.cpp and the hosted APIs do; streams still end with a close."""

    server: _Server
    protocol_version = "HTTP/1.0"

    def setup(self) -> None:
        super().setup()
        if self.server.fake.keep_alive:
            import socket

            self.protocol_version = "HTTP/1.1"
            # head and body go out as two writes: without this, Nagle holds the body until the
            # client's delayed ACK (40 ms) on every call after a connection's first
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence per-request stderr lines; they drown test output."""

    def do_GET(self) -> None:
        self._guard(self._get)

    def do_POST(self) -> None:
        self._guard(self._post)

    def _guard(self, handler: Callable[[], None]) -> None:
        """A client that gave up (timeout, cancel) is normal here, not an error to report."""
        try:
            handler()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError):
            self.close_connection = True

    def _get(self) -> None:
        fake = self.server.fake
        fake._record(RecordedRequest("GET", self.path, self._headers(), {}))
        if self.path.rstrip("/").endswith("/models"):
            data = [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, fake._error_body(404, f"no route {self.path}"))

    def _post(self) -> None:
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        fake._record(RecordedRequest("POST", self.path, self._headers(), body if isinstance(body, dict) else {}))
        model = str(body.get("model")) if isinstance(body, dict) else ""
        fake._enter(model)
        try:
            self._answer(body)
        finally:
            fake._leave(model)

    def _answer(self, body: Any) -> None:
        fake = self.server.fake
        if fake.flavor == "llama_cpp" and not self.path.startswith("/v1/"):
            return self._send_json(404, {"detail": "Not Found"})  # FastAPI's route miss
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send_json(404, fake._error_body(404, f"no route {self.path}"))
        if not isinstance(body, dict):
            return self._send_json(400, fake._error_body(400, "request body is not a JSON object"))
        refusal = fake._refuse_format(body)
        if refusal is not None:
            return self._send_json(*refusal)
        reply = fake._next_reply(fake._as_flavor_reads(body))
        wait = fake.latency + reply.delay
        if reply.fault in ("slow_first_token", "stall"):
            wait = fake.latency  # their delay is inside the stream, after the head and first chunks
        elif reply.fault == "hang":
            wait = fake.latency + (reply.delay or HANG_SECONDS)
        if fake._sleep(wait):
            self.close_connection = True  # stopped while waiting: drop the connection, say nothing
            return
        if reply.fault == "page":
            return self._send_raw(reply.status, reply.content.encode(), "text/html; charset=utf-8", reply.headers)
        if reply.status >= 400:
            return self._send_json(reply.status, fake._error_body(reply.status, reply.content), reply.headers)
        if reply.fault == "malformed":
            return self._send_raw(200, b'{"id": "chatcmpl-broken", "choices": [{', "application/json", reply.headers)
        if reply.fault == "html":
            page = b"<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>"
            return self._send_raw(200, page, "text/html", reply.headers)
        if reply.fault == "reset" and not body.get("stream"):
            return self._reset()
        if reply.fault == "empty_choices" and not body.get("stream"):
            return self._send_json(200, {**fake._completion(body, ""), "choices": []}, reply.headers)
        if body.get("stream"):
            return self._stream(body, reply)
        payload = _event_bytes(fake._completion(body, reply.content), reply.fault)
        if reply.fault == "drop_stream":  # promise the whole body, deliver half
            self._send_head(200, "application/json", reply.headers, len(payload))
            self.wfile.write(payload[: len(payload) // 2])
            self.close_connection = True
            return
        self._send_raw(200, payload, "application/json", reply.headers)

    def _stream(self, body: dict[str, Any], reply: Reply) -> None:
        """SSE the way OpenAI does it: role chunk, word chunks, stop chunk, optional usage, [DONE]."""
        fake = self.server.fake
        base = {"id": "chatcmpl-" + uuid.uuid4().hex[:24], "object": "chat.completion.chunk",
                "created": int(time.time()), "model": body.get("model", "fake-model")}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

        pieces = re.findall(r"\S+\s*|\s+", reply.content)
        if reply.fault in ("slow_first_token", "stall", "endless"):
            return self._stream_slowly(chunk, pieces, reply)
        events = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": p}) for p in pieces]
        events.append(chunk({}, "stop"))
        if reply.fault == "empty_choices":
            events = [{**base, "choices": []}, {**base, "choices": []}]
        elif reply.fault == "empty_stream":
            events = []
        elif reply.fault == "reset":
            self._send_head(200, "text/event-stream", {"Cache-Control": "no-cache", **reply.headers})
            for event in events[: max(2, len(events) // 2)]:
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
                self.wfile.flush()
            return self._reset()
        if reply.fault == "drop_stream":
            events = events[: max(1, len(events) // 2)]
        elif (body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "choices": [], "usage": fake._usage(body, reply.content)})
        self._send_head(200, "text/event-stream", {"Cache-Control": "no-cache", **reply.headers})
        for i, event in enumerate(events):
            if i and fake._sleep(fake.chunk_delay):
                break
            self.wfile.write(b"data: " + _event_bytes(event, reply.fault) + b"\n\n")
            self.wfile.flush()
        else:
            if reply.fault != "drop_stream":
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
        self.close_connection = True

    def _stream_slowly(self, chunk: Callable[..., dict[str, Any]], pieces: list[str], reply: Reply) -> None:
        """The stream faults: a late first token, a stall mid-reply, a reply that never ends."""
        fake = self.server.fake

        def send(event: dict[str, Any]) -> None:
            self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.flush()

        self._send_head(200, "text/event-stream", {"Cache-Control": "no-cache", **reply.headers})
        send(chunk({"role": "assistant", "content": ""}))
        self.close_connection = True
        if reply.fault == "slow_first_token":
            if fake._sleep(reply.delay):
                return
            for piece in pieces:
                send(chunk({"content": piece}))
        elif reply.fault == "stall":
            for piece in pieces[: max(1, len(pieces) // 2)]:
                send(chunk({"content": piece}))
            fake._sleep(reply.delay or HANG_SECONDS)
            return
        else:  # endless: the same words again and again, until the client hangs up
            words = pieces or ["again "]
            i = 0
            while not fake._sleep(fake.chunk_delay or 0.005):
                send(chunk({"content": words[i % len(words)]}))
                i += 1
            return
        send(chunk({}, "stop"))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def _reset(self) -> None:
        """Abort the connection with a TCP RST (SO_LINGER 0), as a crashed server or a proxy does,
        instead of the orderly close that ends a truncated stream."""
        import socket
        import struct

        try:
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass
        self.close_connection = True

    def _send_head(self, status: int, ctype: str, extra: dict[str, str], length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if length is not None:
            self.send_header("Content-Length", str(length))
        if length is None or not self.server.fake.keep_alive:
            self.send_header("Connection", "close")
            self.close_connection = True
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()

    def _send_raw(self, status: int, payload: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        self._send_head(status, ctype, extra or {}, len(payload))
        self.wfile.write(payload)
        self.wfile.flush()

    def _send_json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(obj).encode(), "application/json", extra)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # concurrent benchmark bursts; the default 5 refuses connections
    fake: FakeOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Swallow handler crashes' tracebacks on stderr; the client already sees a dropped connection."""

    def process_request(self, request: Any, client_address: Any) -> None:
        self.fake._connection_opened()
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        """The end of every accepted connection (its handler thread's `finally`), answered or dropped."""
        try:
            super().shutdown_request(request)
        finally:
            self.fake._connection_closed()


class FakeOpenAIServer:
    """OpenAI-compatible server in a background thread; script replies, then inspect `requests`.

    `latency` is slept once before the first byte (time to first token); `chunk_delay` between
    SSE chunks so a test can cancel mid-stream. Without a script, `responder(request_json)`
    (default: `default_responder`) supplies the text.
    """

    def __init__(
        self,
        latency: float = 0.0,
        responder: Callable[[dict[str, Any]], str | Reply] | None = None,
        chunk_delay: float = 0.0,
        flavor: Flavor = "openai",
        keep_alive: bool = False,
    ) -> None:
        if flavor not in FLAVORS:
            raise ValueError(f"unknown flavor {flavor!r}; one of {', '.join(FLAVORS)}")
        self.flavor = flavor
        self.keep_alive = keep_alive
        """Whole replies on a kept-alive connection (benchmarks: real servers keep connections;
        tests keep the default, one request per connection, free of keep-alive races)."""
        self.latency = latency
        self.chunk_delay = chunk_delay
        self.responder = responder or default_responder
        self.reply_queue: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.in_flight: dict[str, int] = {}
        """POST requests being answered now, per `model` in the body (the provider prefix gone)."""
        self.max_in_flight: dict[str, int] = {}
        """The most POST requests answered at once, per model: what a concurrency bound is tested by."""
        self._lock = threading.Lock()
        self._connections = threading.Condition()
        self._opened = self._closed = 0
        """Connections accepted and connections done with (`settle`)."""
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -------------------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging or delayed handlers wake up and drop their connections."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not running; call start() first")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        """The server without `/v1`: what a person types when they forget it."""
        return f"http://127.0.0.1:{self.port}"

    def chat_requests(self) -> list[RecordedRequest]:
        """The POSTs to a chat completions route (what a test counts to prove no blind retries)."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path.rstrip("/").endswith("/chat/completions")]

    # scripting and inspection ----------------------------------------------------------------
    def script(self, *replies: Reply | str) -> FakeOpenAIServer:
        """Queue replies, answered first-in first-out; bare strings become `Reply.text`."""
        with self._lock:
            self.reply_queue.extend(Reply.text(r) if isinstance(r, str) else r for r in replies)
        return self

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def last_request(self) -> RecordedRequest | None:
        with self._lock:
            return self.requests[-1] if self.requests else None

    # internals used by the handler -----------------------------------------------------------
    def _enter(self, model: str) -> None:
        with self._lock:
            now = self.in_flight[model] = self.in_flight.get(model, 0) + 1
            self.max_in_flight[model] = max(self.max_in_flight.get(model, 0), now)

    def _leave(self, model: str) -> None:
        with self._lock:
            self.in_flight[model] -= 1

    def _connection_opened(self) -> None:
        with self._connections:
            self._opened += 1

    def _connection_closed(self) -> None:
        with self._connections:
            self._closed += 1
            self._connections.notify_all()

    def settle(self, guard_s: float = 120.0) -> None:
        """Return once every request a client sent so far is recorded and answered (or dropped):
        after a client was killed, a request it had written may still wait in the listen queue or
        in a handler thread, and would be counted with whatever the test sends next. A request of
        our own goes through first: connections are accepted in the order they arrived, so every
        one before it is accepted by the time it is answered; then we wait until all accepted ones
        are done. No time decides anything; `guard_s` only keeps a broken server from hanging a test."""
        import urllib.request

        urllib.request.urlopen(f"{self.base_url}/models", timeout=guard_s).read()
        with self._connections:
            if not self._connections.wait_for(lambda: self._closed >= self._opened, timeout=guard_s):
                raise TimeoutError(f"{self._opened - self._closed} connection(s) still open after {guard_s} s")

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _refuse_format(self, body: dict[str, Any]) -> tuple[int, Any] | None:
        """(status, body) when this flavor refuses the request's response_format, else None."""
        kind = (body.get("response_format") or {}).get("type") if isinstance(body.get("response_format"), dict) else None
        if self.flavor == "llama_cpp" and kind not in (None, "text", "json_object"):
            detail = {"type": "literal_error", "loc": ("body", "response_format", "type"),
                      "msg": "Input should be 'text' or 'json_object'", "input": kind,
                      "ctx": {"expected": "'text' or 'json_object'"}}
            message = f"1 validation error:\n  {detail}\n\n  POST /v1/chat/completions"
            return 500, {"error": {"message": message, "type": "internal_server_error", "param": None, "code": None}}
        if self.flavor == "lm_studio" and kind not in (None, "text", "json_schema"):
            return 400, {"error": "'response_format.type' must be 'json_schema' or 'text'"}
        return None

    def _as_flavor_reads(self, body: dict[str, Any]) -> dict[str, Any]:
        """The request as this flavor understands it (what the responder then answers): Ollama's
        json_object drops the schema (any JSON), and types it does not know are ignored."""
        fmt = body.get("response_format")
        if self.flavor != "ollama" or not isinstance(fmt, dict):
            return body
        if fmt.get("type") == "json_object":
            return {**body, "response_format": {"type": "json_object"}}
        if fmt.get("type") != "json_schema":
            return {k: v for k, v in body.items() if k != "response_format"}
        return body

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.reply_queue:
                return self.reply_queue.popleft()
        answer = self.responder(body)  # text, or a whole Reply (a fault for one kind of request)
        return answer if isinstance(answer, Reply) else Reply.text(answer)

    def _sleep(self, seconds: float) -> bool:
        """Wait, unless stop() is called first; returns True when the server is stopping."""
        if seconds <= 0:
            return self._stopping.is_set()
        return self._stopping.wait(seconds)

    def _usage(self, body: dict[str, Any], content: str) -> dict[str, int]:
        prompt = sum(count_tokens(_text_of(m.get("content"))) for m in body.get("messages", []) if isinstance(m, dict))
        completion = count_tokens(content)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _completion(self, body: dict[str, Any], content: str) -> dict[str, Any]:
        return {
            "id": "chatcmpl-" + uuid.uuid4().hex[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": None,
                "finish_reason": "stop",
            }],
            "usage": self._usage(body, content),
        }

    @staticmethod
    def _error_body(status: int, message: str) -> dict[str, Any]:
        kind, code = _ERROR_KINDS.get(status, ("server_error", "server_error"))
        return {"error": {"message": message or f"fake error {status}", "type": kind, "param": None, "code": code}}


class UnacceptingPort:
    """A loopback port whose connections never complete: it listens with a backlog of 0, never
    accepts, and its queue is filled at once, so the kernel drops further SYNs and a client's
    connect hangs until its connect timeout (a firewalled or dead host, without leaving the machine).

        with UnacceptingPort() as port:
            ... api_base=port.base_url ...
    """

    def __init__(self) -> None:
        import socket

        self._socket_module = socket
        self._listener: Any = None
        self._fillers: list[Any] = []

    def __enter__(self) -> UnacceptingPort:
        socket = self._socket_module
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(0)
        for _ in range(3):  # backlog 0 still queues one or two; fill them
            filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            filler.setblocking(False)
            try:
                filler.connect(self._listener.getsockname())
            except BlockingIOError:
                pass
            self._fillers.append(filler)
        return self

    def __exit__(self, *exc: object) -> None:
        for sock in self._fillers + [self._listener]:
            try:
                sock.close()
            except OSError:
                pass

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"
