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
- The banner names this app and its address, not the full child command line.

Only `proactive-tui serve` imports this module (aiohttp and jinja2 are not start-up costs).
"""

from __future__ import annotations

import ipaddress
import re
import shlex
import socket
import sys
from collections.abc import Sequence
from importlib import resources
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.server import Server

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


class PlaygroundServer(Server):
    """textual-serve's `Server` with an origin check, no external request and our own banner."""

    def __init__(self, command: str, *, host: str, port: int, public_url: str, title: str = "proactive-tui") -> None:
        super().__init__(command, host=host, port=port, title=title, public_url=public_url)
        self.allowed_origins = allowed_origins(host, port, self.public_url)

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        aiohttp_jinja2.setup(app, loader=jinja2.DictLoader({TEMPLATE: page_template()}))
        return app

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        origin = (request.headers.get("Origin") or "").lower()
        if origin not in self.allowed_origins:
            shown = origin or "none"
            expected = ", ".join(sorted(self.allowed_origins))
            self.console.print(f"refused a connection from origin {shown} (this server answers {expected}; "
                               "see --public-url)", highlight=False, markup=False)
            return web.Response(status=403, text=f"origin {shown} may not drive this app\n")
        return await super().handle_websocket(request)

    async def on_startup(self, app: web.Application) -> None:
        self.console.print(f"proactive-tui serving on {self.public_url}  (Ctrl+C to quit)", highlight=False,
                           markup=False)
