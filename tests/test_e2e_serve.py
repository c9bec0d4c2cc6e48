"""`proactive-tui serve`: the playground in a browser, end to end, plus the guards around it.

The browser test starts `serve` on a free loopback port, opens the page in headless Chromium
(Debian's `chromium`, driven through Playwright's Python API; `./dev test` installs it with apt-get
when it can), waits for the picker, starts a session on the embedded model (Enter, then ctrl+s on
the setup screen), waits until the transcript holds the agent's first reply (the user's turn 1 has
begun, so the agent's turn 1 is complete), and saves a PNG of the page.

What the browser shows is read from the bytes the server sends it over the WebSocket (the terminal
output xterm.js draws on a canvas), with the escape sequences removed. The work is bounded by turns
and token caps; the deadlines are hang guards only (minutes), never a measure of speed. Where
Playwright or Chromium is missing, or Chromium cannot start here, the test is skipped with the
reason (pytest's `-ra` summary prints it), never passed silently.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

import pytest

from conftest import chromium as find_chromium
from proactive_tui.cli.main import main

HANG_GUARD_S = 900
"""Start-up plus one planning call, one plan judgement and one reply on the embedded model; on a
quiet machine about half a minute, on a loaded 2-core one a few minutes."""
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
_ESCAPES = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Served:
    def __init__(self, proc: subprocess.Popen, port: int, log: Path) -> None:
        self.proc, self.port, self.log = proc, port, log
        self.base = f"http://127.0.0.1:{port}"
        self.token: str | None = None
        self.url = self.base + "/"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def read_banner(self) -> None:
        """The URL serve printed, and its token (none with --no-token)."""
        match = re.search(r"proactive-tui serving on (\S+)", self.log_text())
        assert match, self.log_text()
        token = re.search(r"[?&]token=([\w-]+)", match.group(1))
        self.token = token.group(1) if token else None
        self.url = f"{self.base}/?token={self.token}" if self.token else self.base + "/"

    def ws_url(self, token: str | None = "served") -> str:
        """The app's WebSocket, with the served token (or `token`, or none)."""
        token = self.token if token == "served" else token
        return f"ws://127.0.0.1:{self.port}/ws" + (f"/{token}" if token else "")


def _start_serve(tmp_path: Path, *flags: str, env: dict[str, str] | None = None) -> _Served:
    port = _free_port()
    log = tmp_path / f"serve-{port}.log"
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "proactive_tui", "serve", "--port", str(port), *flags],
                                stdout=out, stderr=subprocess.STDOUT, env=full_env)
    served = _Served(proc, port, log)
    guard = time.monotonic() + 120
    while "proactive-tui serving on" not in served.log_text():
        if proc.poll() is not None or time.monotonic() > guard:
            proc.kill()
            raise AssertionError(f"serve did not start:\n{served.log_text()[-3000:]}")
        time.sleep(0.1)
    served.read_banner()
    return served


def _stop(served: _Served) -> None:
    served.proc.terminate()
    try:
        served.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        served.proc.kill()


@pytest.fixture
def served(tmp_path: Path):
    s = _start_serve(tmp_path)
    try:
        yield s
    finally:
        _stop(s)


# -- the guards ---------------------------------------------------------------------------------


def test_a_non_loopback_host_is_refused_without_allow_remote(capsys) -> None:
    assert main(["serve", "--host", "0.0.0.0", "--port", str(_free_port())]) == 2
    err = capsys.readouterr().err
    assert "--allow-remote" in err and "spend its keys" in err


def test_allow_remote_says_who_drives_the_app_before_it_listens(tmp_path: Path) -> None:
    s = _start_serve(tmp_path, "--host", "0.0.0.0", "--allow-remote", "--public-url", "http://demo.example:9")
    try:
        text = s.log_text()
        assert "anyone who can reach port" in text and "spends its keys" in text
        assert text.index("anyone who can reach") < text.index("proactive-tui serving on")
        assert "serving on http://demo.example:9" in text
    finally:
        _stop(s)


def test_loopback_spellings_need_no_flag_and_urls_are_checked() -> None:
    from proactive_tui.webserve import ServeError, allowed_origins, is_loopback, origin_of

    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1") and is_loopback("127.3.4.5")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4") and not is_loopback("demo.example")
    assert origin_of("HTTP://Demo.Example:80/x") == "http://demo.example"
    assert origin_of("https://demo.example:8443") == "https://demo.example:8443"
    with pytest.raises(ServeError, match="user name or password"):
        origin_of("http://me:secret@demo.example")
    with pytest.raises(ServeError, match="http"):
        origin_of("ftp://demo.example")
    assert allowed_origins("127.0.0.1", 8000, "http://127.0.0.1:8000") == {
        "http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"}
    # a remote bind answers its public address only: a page on a loopback name is not it
    assert allowed_origins("0.0.0.0", 8000, "http://demo.example:8000") == {"http://demo.example:8000"}


def test_the_page_makes_no_request_off_this_server(served: _Served) -> None:
    page = urllib.request.urlopen(served.url, timeout=30).read().decode()
    assert "fonts.googleapis.com" not in page
    assert "@font-face" in page and "fonts/RobotoMono-VariableFont_wght.ttf" in page
    for ref in re.findall(r'(?:href|src)="([^"]+)"', page) + re.findall(r'url\("([^"]+)"\)', page):
        assert ref.startswith(served.base + "/static/"), ref
    assert f'data-session-websocket-url="{served.ws_url()}"' in page
    font = urllib.request.urlopen(served.base + "/static/fonts/RobotoMono-VariableFont_wght.ttf", timeout=30)
    assert font.status == 200 and len(font.read()) > 10_000


def test_only_the_served_page_may_open_the_app(served: _Served) -> None:
    import aiohttp

    async def handshake(origin: str | None) -> int:
        headers = {"Origin": origin} if origin else {}
        async with aiohttp.ClientSession() as session:
            try:
                async with session.ws_connect(served.ws_url(), headers=headers) as ws:
                    await ws.close()
                    return 101
            except aiohttp.WSServerHandshakeError as exc:
                return exc.status

    assert asyncio.run(handshake("http://evil.example")) == 403
    assert asyncio.run(handshake(f"http://evil.example:{served.port}")) == 403  # a DNS-rebinding page
    assert asyncio.run(handshake(None)) == 403
    assert "refused a connection from origin http://evil.example" in served.log_text()


# -- the token (issue 33): any local process can send the right Origin -------------------------------

def _status(url: str, cookie: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


async def _handshake(url: str, origin: str) -> int:
    """The status of a WebSocket handshake with this `Origin` (101: the app was opened)."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(url, headers={"Origin": origin}) as ws:
                await ws.close()
                return 101
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status


def test_nothing_but_the_static_files_is_served_without_the_printed_token(served: _Served) -> None:
    from secrets import token_urlsafe as new_token

    token = served.token
    assert token and len(token) >= 32  # as long as Jupyter's (a new one per run: the fixture's serve is new)
    assert served.url == f"{served.base}/?token={token}"
    assert _status(served.base + "/") == 403
    assert _status(served.base + "/?token=" + new_token()) == 403
    with urllib.request.urlopen(served.url, timeout=30) as page:
        assert page.status == 200
        cookie = page.headers["Set-Cookie"]
    assert token in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    # downloads (opened by path from the page) need the cookie; the page's own files are public
    assert _status(served.base + "/download/0123abc") == 403
    assert _status(served.base + "/download/0123abc", cookie=cookie.split(";")[0]) == 404  # past the gate
    assert _status(served.base + "/static/js/textual.js") == 200
    origin = served.base
    assert asyncio.run(_handshake(served.ws_url(None), origin)) == 403
    assert asyncio.run(_handshake(served.ws_url(new_token()), origin)) == 403
    assert asyncio.run(_handshake(served.ws_url(), origin)) == 101
    log = served.log_text()
    assert "refused GET /ws: no token" in log and "refused GET /: no token" in log
    assert log.count(token) == 1  # in the printed URL only, never in the access log


def test_no_token_is_for_loopback_only(tmp_path: Path, capsys) -> None:
    assert main(["serve", "--host", "0.0.0.0", "--allow-remote", "--no-token", "--port", str(_free_port())]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--no-token is for a loopback --host only" in err
    s = _start_serve(tmp_path, "--no-token")
    try:
        assert s.token is None and "token" not in s.log_text()
        assert _status(s.base + "/") == 200
        assert asyncio.run(_handshake(s.ws_url(), s.base)) == 101
    finally:
        _stop(s)


# -- every app process ends with its tab and with serve (issue 33) --------------------------------

def _children(pid: int) -> list[int]:
    """Processes whose parent is `pid`, from /proc (psutil is not a dependency)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _descendants(pid: int) -> list[int]:
    return [d for child in _children(pid) for d in (child, *_descendants(child))]


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie has ended; only its exit status waits to be collected)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_gone(pids: list[int], what: str) -> None:
    guard = time.monotonic() + 120  # a hang guard: the app has seconds to quit, then is ended
    while [p for p in pids if _running(p)]:
        assert time.monotonic() < guard, f"{what}: still running after 120 s: " + ", ".join(
            f"{p} {Path(f'/proc/{p}/cmdline').read_text().replace(chr(0), ' ')}" for p in pids if _running(p))
        time.sleep(0.2)


async def _open_tab(served: _Served, session) -> tuple[object, list[int]]:
    """A tab: the app's WebSocket, once its first frame arrived; and the app's processes then."""
    ws = await session.ws_connect(served.ws_url(), headers={"Origin": served.base})
    first = await ws.receive()
    assert first.type.name in ("BINARY", "TEXT"), first
    return ws, _descendants(served.proc.pid)


def test_a_tab_closed_right_after_its_first_frame_ends_its_app(served: _Served) -> None:
    import aiohttp

    async def tab() -> list[int]:
        async with aiohttp.ClientSession() as session:
            ws, apps = await _open_tab(served, session)
            await ws.close()
            return apps

    apps = asyncio.run(tab())
    assert apps and any(Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[1:3] == [b"-m", b"proactive_tui"]
                        for p in apps if _running(p)), apps
    _wait_gone(apps, "the closed tab's app")
    assert served.proc.poll() is None and _descendants(served.proc.pid) == []


def test_sigterm_to_serve_ends_every_app(tmp_path: Path) -> None:
    """One tab still open, one just closed (its app may still be quitting): SIGTERM ends both apps."""
    import aiohttp

    s = _start_serve(tmp_path)

    async def two_tabs_then_sigterm() -> list[int]:
        async with aiohttp.ClientSession() as session:
            kept, _ = await _open_tab(s, session)
            closed, _ = await _open_tab(s, session)
            await closed.close()
            apps = _descendants(s.proc.pid)  # both apps, and whatever they started
            s.proc.send_signal(signal.SIGTERM)
            await asyncio.to_thread(s.proc.wait, 120)
            await kept.close()
            return apps

    try:
        apps = asyncio.run(two_tabs_then_sigterm())
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
    assert len(apps) >= 2 and s.proc.returncode == 0
    assert [p for p in apps if _running(p)] == []  # none outlived serve: nothing orphaned


# -- the browser ---------------------------------------------------------------------------------


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


class _Browser:
    """A headless Chromium page on a served playground, reading what it is sent (see the docstring)."""

    def __init__(self, served: _Served, page) -> None:
        self.served, self.page = served, page
        self.frames: list[bytes] = []
        page.on("websocket", lambda ws: ws.on(
            "framereceived", lambda f: self.frames.append(f if isinstance(f, bytes) else f.encode())))

    def screen_text(self, since: int = 0) -> str:
        return _ESCAPES.sub(b"", b"".join(self.frames[since:])).decode("utf-8", "replace")

    def mark(self) -> int:
        return len(self.frames)

    def wait_for(self, text: str, since: int = 0) -> None:
        """Until `text` is drawn in the frames from number `since` on (after the key that shows it)."""
        guard = time.monotonic() + HANG_GUARD_S
        while text not in self.screen_text(since):
            assert self.served.proc.poll() is None, f"serve exited:\n{self.served.log_text()[-3000:]}"
            assert time.monotonic() < guard, f"{text!r} not shown within {HANG_GUARD_S}s; last screen bytes:\n" \
                f"{self.screen_text()[-2000:]}\nserve log:\n{self.served.log_text()[-2000:]}"
            self.page.wait_for_timeout(250)

    def press(self, key: str) -> int:
        """Press `key` in the terminal; the frame mark from before it."""
        mark = self.mark()
        self.page.keyboard.press(key)
        return mark


def _in_chromium(served: _Served, tmp_path: Path, script: Callable[[_Browser], None]) -> tuple[int, int]:
    """Open the served page in headless Chromium, run `script`, save a PNG; the PNG's size."""
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (it comes with the test extra: ./dev test)")
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("Debian's chromium is not installed: `./dev test` installs it with apt-get when run as root "
                    "(see .venv/chromium-install.log); or `apt-get install chromium`")
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        except PlaywrightError as exc:
            pytest.skip(f"{chromium} cannot start here: {str(exc).splitlines()[0]}")
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            tab = _Browser(served, page)
            page.goto(served.url)
            tab.wait_for("proactive-tui")  # the app's first screen has been drawn
            page.locator(".xterm-helper-textarea").focus()  # keys go to the terminal, not a page element
            script(tab)
            shot = tmp_path / "serve.png"
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    print(f"browser screenshot: {shot}")
    assert "Traceback" not in served.log_text()
    return _png_size(shot.read_bytes())


def test_a_session_on_the_embedded_model_in_headless_chromium(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model (the local extra) is not installed")
    s = _start_serve(tmp_path, env={"PROACTIVE_TUI_AGENT_MAX_TOKENS": "48", "PROACTIVE_TUI_USER_MAX_TOKENS": "24"})

    def session(tab: _Browser) -> None:
        tab.wait_for("Environments (")  # the picker
        tab.wait_for("Setup", tab.press("Enter"))  # the highlighted environment's setup screen
        started = tab.press("Control+s")
        tab.wait_for("agent · turn 1", started)
        tab.wait_for("user · turn 1", started)  # so the agent's first reply is complete

    try:
        assert _in_chromium(s, tmp_path, session) == (1280, 800)
    finally:
        _stop(s)


def test_serve_demo_opens_every_tab_on_a_recorded_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from family_runs import RUNS
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")
    run = RUNS["proactiveeval"]
    out = tmp_path / "recorded.json"
    with FakeOpenAIServer(responder=run.responder) as server:
        assert main(["run", run.env_id, *run.args, "--api-base", server.base_url, "--out", str(out), "--quiet"]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    first_reply = next(m["content"] for m in record["messages"] if m["role"] == "agent")
    words = first_reply.split()[0]
    assert words == "[bold]Hi[/bold]"  # the fake agent's reply opens with markup, shown literally or not at all
    assert main(["serve", "--demo", "no-such-session", "--port", str(_free_port())]) == 2
    s = _start_serve(tmp_path, "--demo", record["id"][:8], "--speed", "20")

    def demo(tab: _Browser) -> None:
        tab.wait_for("demo of session")
        tab.wait_for("agent · turn 1")
        tab.wait_for(words)  # the recorded reply, as it was recorded

    try:
        assert _in_chromium(s, tmp_path, demo) == (1280, 800)
    finally:
        _stop(s)
