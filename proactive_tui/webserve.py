"""The playground in a browser: textual-serve, made safe to leave running on a laptop.

Each browser tab that connects gets its own `python -m proactive_tui` process (textual-serve's
model), with this process's environment: the same config, store, keys and `--envs`. Three things
differ from textual-serve's stock `Server`, each for a reason:

- Only the page this server served may drive the app. A WebSocket is not bound by the browser's
  same-origin rules, so without a check any web page the presenter visits could open
  `ws://127.0.0.1:8000/ws`, type into the playground and spend its keys (a DNS-rebinding page
  too). The `Origin` of every WebSocket handshake must be one of `allowed_origins`: the public URL's
  and, on a loopback address, its `localhost` / `127.0.0.1` / `[::1]` spellings.
- No request leaves the machine. The stock page links a Google Fonts stylesheet; here that link is
  removed and the Roboto Mono file textual-serve ships is declared with `@font-face`, so a demo works
  offline and tells no third party it is running.
- Only someone given the printed URL may drive the app. The Origin check stops other web pages,
  not other local processes: any program on the machine can send the right `Origin`. So, as
  Jupyter does, serve makes a random token, prints the URL with it (`/?token=...`) and refuses
  (403) the page, the WebSocket and downloads without it. The page passes it on in its
  WebSocket address (`/ws/TOKEN`) and in a cookie (for downloads, which the page opens by
  path). The static files (textual-serve's script, styles, fonts) are public: they hold nothing
  of the user's. `--no-token` opts out, on a loopback address only.
- Every app process ends with its tab and with serve. textual-serve asks a tab's app to quit and
  then waits for it without bound, and nothing ends the apps when serve stops: a tab closed while
  its app was still starting left the app running, and SIGTERM to serve orphaned every app. Here
  each app is started in its own process group (no shell between), a closed tab's app gets
  `QUIT_GRACE_S` to quit and is then ended with its group (SIGTERM, then SIGKILL), and serve ends
  every group it started when it stops (SIGINT, SIGTERM, SIGHUP, or an error; `atexit` as the
  last resort).
- The banner names this app and its address, not the full child command line.

Only `proactive-tui serve` imports this module (aiohttp and jinja2 are not start-up costs).
"""

from __future__ import annotations

import asyncio
import atexit
import hmac
import ipaddress
import logging
import os
import re
import secrets
import shlex
import signal
import socket
import sys
from collections.abc import Sequence
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

log = logging.getLogger("textual-serve")

TEMPLATE = "app_index.html"
_FONT_LINK = re.compile(r"<link[^>]*fonts\.googleapis\.com[^>]*>\s*", re.S)
_LOCAL_FONT = """<style>
      @font-face {
        font-family: "Roboto Mono";
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype");
        font-style: normal;
      }
      @font-face {
        font-family: "Roboto Mono";
        src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype");
        font-style: italic;
      }
    </style>
"""
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
QUIT_GRACE_S = 3.0
"""How long a closed tab's app (or, at shutdown, every app) may take to quit before its process group is
sent SIGTERM; as long again before SIGKILL. A Textual app quits in well under a second once it reads the
request; one still starting up may never read it."""
TOKEN_BYTES = 24
"""192 random bits (32 URL-safe characters), as unguessable as Jupyter's token."""


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


class ServeError(ValueError):
    """A serve option that cannot work, said in one line before anything listens."""


def is_loopback(host: str) -> bool:
    """Whether `host` only accepts connections from this machine."""
    name = host.strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def default_public_url(host: str, port: int) -> str:
    """The address the page tells the browser to connect back to.

    A wildcard bind (0.0.0.0, ::) is not an address anyone can type, so the machine's name stands
    in for it; an IPv6 literal needs brackets in a URL.
    """
    name = host.strip("[]")
    if name in ("0.0.0.0", "::", ""):
        name = socket.gethostname()
    elif ":" in name:
        name = f"[{name}]"
    return f"http://{name}:{port}"


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL, lower-case, the form a browser sends as `Origin`."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServeError(f"--public-url must be an http:// or https:// URL, not {url!r}")
    if parts.username or parts.password:
        raise ServeError("--public-url must not carry a user name or password")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    default_port = 443 if parts.scheme == "https" else 80
    port = "" if parts.port in (None, default_port) else f":{parts.port}"
    return f"{parts.scheme}://{host}{port}"


def allowed_origins(host: str, port: int, public_url: str) -> frozenset[str]:
    """The pages allowed to open the app's WebSocket (see the module docstring)."""
    origins = {origin_of(public_url)}
    if is_loopback(host):
        origins |= {f"http://localhost:{port}", f"http://127.0.0.1:{port}", f"http://[::1]:{port}"}
    return frozenset(origins)


def page_template() -> str:
    """textual-serve's page without its one external request (the Google Fonts link)."""
    text = resources.files("textual_serve").joinpath("templates", TEMPLATE).read_text(encoding="utf-8")
    text = _FONT_LINK.sub(_LOCAL_FONT, text, count=1)
    if "fonts.googleapis.com" in text:  # a textual-serve release changed the page: say so, never leak
        raise ServeError("textual-serve's page template links Google Fonts in a way this version cannot remove")
    return text


def app_command(envs: Sequence[str] = (), report: str | None = None, command: Sequence[str] = ()) -> str:
    """The shell command textual-serve runs per browser tab: this same interpreter and package, with
    the global options, then `command` (e.g. `demo ID --speed 2`) or none (the playground)."""
    argv = [sys.executable, "-m", "proactive_tui"]
    for path in envs:
        argv += ["--envs", path]
    if report:
        argv += ["--report", report]
    return shlex.join([*argv, *command])


class TabApp(AppService):
    """One tab's app process, which ends with its tab (see the module docstring).

    Started without a shell, in a process group of its own, so that ending the group ends the app
    and anything it started, and a Ctrl+C meant for serve's terminal reaches serve alone (which
    then ends every app itself)."""

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        self._process = process = await asyncio.create_subprocess_exec(
            *shlex.split(self.command), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self._build_environment(width=width, height=height),
            start_new_session=True)
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def stop(self) -> None:
        """Ask the app to quit, as textual-serve does, but wait a bounded time: an app that has not
        quit by then (one still starting up, say) is ended with its process group."""
        task, self._task = self._task, None
        if task is None:
            return
        try:
            async with asyncio.timeout(QUIT_GRACE_S):
                await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
                await self.send_meta({"type": "quit"})
                await asyncio.shield(task)
        except TimeoutError:
            pass
        await self.end_process()
        try:  # the reader ends at the pipe's end, once the group is gone
            async with asyncio.timeout(QUIT_GRACE_S):
                await asyncio.shield(task)
        except TimeoutError:
            task.cancel()

    async def end_process(self) -> None:
        """End the app's process group: SIGTERM once the app had its chance to quit, then SIGKILL."""
        process = self._process
        if process is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if process.returncode is not None:
                break
            self.signal_group(sig)
            try:
                async with asyncio.timeout(QUIT_GRACE_S):
                    await process.wait()
            except TimeoutError:
                continue
        self.signal_group(signal.SIGKILL)  # whatever the app started and left behind

    def signal_group(self, sig: int) -> None:
        if self._process is None:
            return
        try:
            os.killpg(self._process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass  # the group is gone


class PlaygroundServer(Server):
    """textual-serve's `Server` with a token, an origin check, apps that end with their tab and with
    serve, no external request and our own banner (see the module docstring)."""

    def __init__(self, command: str, *, host: str, port: int, public_url: str, title: str = "proactive-tui",
                 token: str | None = None) -> None:
        super().__init__(command, host=host, port=port, title=title, public_url=public_url)
        self.allowed_origins = allowed_origins(host, port, self.public_url)
        self.token = token
        """None: `--no-token` (loopback only, checked by the command)."""
        self.cookie_name = f"proactive-tui-token-{port}"  # cookies are shared across ports; tokens are not
        self.tabs: dict[TabApp, web.WebSocketResponse] = {}
        """Every app process running now, with its tab's WebSocket."""
        atexit.register(self._kill_every_app)

    @property
    def url(self) -> str:
        """The address to open: the public URL, with the token."""
        return f"{self.public_url}/?token={self.token}" if self.token else self.public_url

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        aiohttp_jinja2.setup(app, loader=jinja2.DictLoader({TEMPLATE: page_template()}))
        app.router.add_get("/ws/{token}", self.handle_websocket)
        app.middlewares.append(self._token_gate)
        return app

    # -- the token ------------------------------------------------------------------------------

    def has_token(self, request: web.Request) -> bool:
        if self.token is None:
            return True
        expected = self.token.encode()
        given = [request.query.get("token"), request.match_info.get("token"), request.cookies.get(self.cookie_name)]
        return any(hmac.compare_digest(value.encode("utf-8", "replace"), expected) for value in given if value)

    @web.middleware
    async def _token_gate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path.startswith("/static/") or self.has_token(request):
            return await handler(request)
        self.console.print(f"refused {request.method} {request.path}: no token (open the URL printed at start-up)",
                           highlight=False, markup=False)
        return web.Response(status=403, text="This playground needs its token: open the URL `proactive-tui serve` "
                            "printed when it started (it ends in /?token=...).\n")

    async def handle_index(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        """textual-serve's page, whose WebSocket address carries the token; the token is also set
        as a cookie, for the downloads the page opens by path."""
        router = request.app.router

        def url(route: str, **parts: str) -> str:
            return f"{self.public_url}{router[route].url_for(**parts)}"

        ws = url("websocket") + (f"/{self.token}" if self.token else "")
        scheme = "wss:" if self.public_url.startswith("https") else "ws:"
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": scheme + ws.split(":", 1)[1],
            "config": {"static": {"url": url("static", filename="/").rstrip("/") + "/"}},
            "application": {"name": self.title},
        }
        response = aiohttp_jinja2.render_template(TEMPLATE, request, context)
        if self.token:
            response.set_cookie(self.cookie_name, self.token, httponly=True, samesite="Strict", path="/")
        return response

    # -- the apps -------------------------------------------------------------------------------

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        """textual-serve's handler, with the origin check, and an app that ends with the tab."""
        origin = (request.headers.get("Origin") or "").lower()
        if origin not in self.allowed_origins:
            shown = origin or "none"
            expected = ", ".join(sorted(self.allowed_origins))
            self.console.print(f"refused a connection from origin {shown} (this server answers {expected}; "
                               "see --public-url)", highlight=False, markup=False)
            return web.Response(status=403, text=f"origin {shown} may not drive this app\n")
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        tab: TabApp | None = None
        try:
            await websocket.prepare(request)
            tab = TabApp(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                         close=websocket.close, download_manager=self.download_manager, debug=self.debug)
            self.tabs[tab] = websocket
            await tab.start(width, height)
            await self._process_messages(websocket, tab)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # noqa: BLE001 - one tab's failure is logged, never serve's end
            log.exception(error)
        finally:
            if tab is not None:
                try:
                    await asyncio.shield(tab.stop())
                finally:
                    await tab.end_process()  # also when the stop itself was cancelled
                    self.tabs.pop(tab, None)
        return websocket

    async def on_shutdown(self, app: web.Application) -> None:
        """End every app (they had `QUIT_GRACE_S` to quit) and close every tab, before serve exits."""
        tabs = list(self.tabs.items())
        await asyncio.gather(*(tab.stop() for tab, _ in tabs), return_exceptions=True)
        await asyncio.gather(*(tab.end_process() for tab, _ in tabs), return_exceptions=True)
        await asyncio.gather(*(ws.close() for _, ws in tabs), return_exceptions=True)

    def _kill_every_app(self) -> None:
        """The last resort, at interpreter exit: SIGKILL every app group still known."""
        for tab in list(self.tabs):
            tab.signal_group(signal.SIGKILL)

    def serve(self, debug: bool = False) -> None:
        """textual-serve's `serve`, also ending (with every app) when its terminal closes (SIGHUP)."""
        try:
            loop = asyncio.get_event_loop()
        except Exception:  # noqa: BLE001 - as textual-serve does
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
        try:
            loop.add_signal_handler(signal.SIGHUP, self.request_exit)
        except (NotImplementedError, AttributeError):
            pass
        super().serve(debug=debug)

    async def on_startup(self, app: web.Application) -> None:
        asyncio.get_running_loop().create_task(self._announce_when_listening())

    async def _announce_when_listening(self) -> None:
        """The banner, once the port accepts connections: aiohttp runs `on_startup` before it binds
        the port, so a script (or a person) acting on the printed URL at once was refused. A bare
        connection sends no request, so the access log shows nothing of it."""
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)
        for _ in range(1200):  # a minute at most, then the banner anyway (the bind error, if any, says why)
            try:
                _, writer = await asyncio.open_connection(host, self.port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            break
        # one line, never wrapped: the URL is copied from it
        self.console.print(f"proactive-tui serving on {self.url}  (Ctrl+C to quit)", highlight=False, markup=False,
                           soft_wrap=True)

    def initialize_logging(self) -> None:
        """textual-serve's logging, with the token masked in the access log (a shared screen or a
        pasted log must not hand it on)."""
        super().initialize_logging()
        if self.token:
            logging.getLogger("aiohttp.access").addFilter(_MaskToken(self.token))


class _MaskToken(logging.Filter):
    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        if self.token in record.getMessage():
            record.msg, record.args = record.getMessage().replace(self.token, "<token>"), None
        return True
