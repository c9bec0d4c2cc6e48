"""Drive a Textual app in a real pseudo-terminal, as a person at a terminal would.

Shared by `startup.py` and `responsiveness.py`. Why a pty rather than Textual's headless driver or
the pilot: the question is what a person waits for, which includes the whole interpreter start,
the real terminal driver (input thread, writer thread) and any background thread competing for
the interpreter lock. The pilot runs inside the app's own event loop and would hide exactly that.

The two apps compared both answer the same key the same way: `r` toggles a text between
"reference hidden" and "reference shown" (the picker's preview title; a label in the bare app),
so "the key was answered" means those bytes reached the terminal.

- proactive-tui: `python -m proactive_tui`, exactly the console script's path (CLI parser, the
  app, the picker, and the model preload as a person gets it by default).
- bare: a plain Textual `App` with a `DataTable` of the same environments and one label answering
  `r`. It imports nothing of the project: the rows are read here, by the benchmark, and written
  into its source as a literal (`bare_command`), so it pays for Textual and the table alone.
- bare + preview: the same plus a scrollable preview of the first environment's description
  (the picker's text, from `envs.describe`, also written in as a literal), re-rendered on `r`.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
import tty
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HIDDEN = b"reference hidden"
SHOWN = b"reference shown"
CSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]")  # styles and cursor moves, so a marker split by them still matches

BARE = """
from textual.app import App
from textual.widgets import DataTable, Label

ROWS = __ROWS__

class Bare(App):
    BINDINGS = [("r", "toggle", "toggle"), ("ctrl+q", "quit", "quit")]
    CSS = "DataTable { height: 1fr; }"
    shown = True

    def compose(self):
        yield DataTable()
        yield Label("Preview · reference shown", id="label")

    def on_mount(self):
        table = self.query_one(DataTable)
        table.add_columns("id", "family", "domain", "tier", "title")
        for row in ROWS:
            table.add_row(*row)
        table.focus()

    def action_toggle(self):
        self.shown = not self.shown
        state = "reference shown" if self.shown else "reference hidden"
        self.query_one("#label", Label).update(f"Preview · {state}")

Bare().run()
"""

BARE_PREVIEW = """
from textual.app import App
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Static

ROWS = __ROWS__
TEXTS = __TEXTS__

class BarePreview(App):
    BINDINGS = [("r", "toggle", "toggle"), ("ctrl+q", "quit", "quit")]
    CSS = "DataTable { width: 1fr; } #preview { width: 1fr; border: round white; }"
    shown = True

    def compose(self):
        with Horizontal():
            yield DataTable()
            with VerticalScroll(id="preview"):
                yield Static(self.text(), markup=False)

    def text(self):
        return TEXTS[self.shown]

    def on_mount(self):
        table = self.query_one(DataTable)
        table.add_columns("id", "family", "domain", "tier", "title")
        for row in ROWS:
            table.add_row(*row)
        table.focus()
        self.title_preview()

    def title_preview(self):
        state = "reference shown" if self.shown else "reference hidden"
        self.query_one("#preview").border_title = f"Preview · {state}"

    def action_toggle(self):
        self.shown = not self.shown
        self.query_one(Static).update(self.text())
        self.title_preview()

BarePreview().run()
"""

APP_COMMAND = [sys.executable, "-m", "proactive_tui"]
"""proactive-tui exactly as the console script starts it."""


def reference_data() -> tuple[list[tuple[str, ...]], dict[bool, str]]:
    """The rows the picker lists (id, family, domain, tier, title) and the first environment's
    description with the reference shown and hidden, read here, in the benchmark's own process,
    with the project's loader. The bare apps get them as literals in their source, so they show
    the same data while importing nothing but Textual (the issue 35 reference: a bare app that
    imported the project's loader was itself 1.21x a truly bare one)."""
    from proactive_tui.envs import load_paths
    from proactive_tui.envs.describe import describe
    from proactive_tui.envs import sample_sources

    envs = load_paths(sample_sources()).environments  # what the app lists with an empty data folder (PtyApp's home)
    rows = [(env.id, env.family, env.domain, env.tier or "-", env.title) for env in envs]
    texts = {reveal: "\n\n".join(f"{heading}\n{body}" for heading, body in describe(envs[0], reveal_reference=reveal))
             for reveal in (True, False)}
    return rows, texts


def bare_command(preview: bool = False) -> list[str]:
    """A bare Textual app with a `DataTable` of the same environments and a label answering `r`
    (with `preview`: a preview pane of the first environment's description, re-rendered on `r`,
    the same per-key rendering work as the picker, done by Textual alone). No project import."""
    rows, texts = reference_data()
    code = (BARE_PREVIEW if preview else BARE).replace("__ROWS__", repr(rows)).replace("__TEXTS__", repr(texts))
    return [sys.executable, "-c", code]


def other_tree_command(tree: Path) -> list[str]:
    """proactive-tui from another source tree (a checkout of main, say): before/after in one run."""
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tree.resolve())!r}); "
            "from proactive_tui.cli.main import main; raise SystemExit(main())"]


class PtyApp:
    """One app process on a fresh pty of `size` (columns, rows); `started` is just before spawn."""

    def __init__(self, command: list[str], home: Path, size: tuple[int, int] = (120, 40), env: dict[str, str] | None = None):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        tty.setraw(slave)  # keys typed before the app switches the terminal are not echoed or line-buffered
        child_env = dict(
            os.environ,
            TERM="xterm-256color",
            COLORTERM="truecolor",
            PROACTIVE_TUI_CONFIG=str(home / "config.toml"),
            PROACTIVE_TUI_DATA=str(home / "data"),
            # Byte code cached as an installed or once-run copy has it (a warm-up run writes it),
            # kept out of the source tree.
            PYTHONPYCACHEPREFIX=str(home / "pycache"),
            **(env or {}),
        )
        child_env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.master = master
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(command, cwd=ROOT, env=child_env, stdin=slave, stdout=slave, stderr=slave,
                                     start_new_session=True)
        os.close(slave)
        self.buffer = bytearray()

    def _read(self, timeout: float) -> int:
        """Bytes read (0 when nothing arrived within `timeout`)."""
        ready, _, _ = select.select([self.master], [], [], max(0.0, timeout))
        if not ready:
            return 0
        try:
            data = os.read(self.master, 65536)
        except OSError:
            data = b""
        if not data:
            raise RuntimeError(f"app exited early: {bytes(self.buffer[-2000:]).decode(errors='replace')}")
        self.buffer += data
        return len(data)

    def press(self, key: bytes) -> None:
        os.write(self.master, key)

    def wait_for(self, marker: bytes, deadline: float, resend: bytes | None = None, every: float = 0.03) -> float | None:
        """perf_counter time at which `marker` appeared in output written since this call, or None
        at `deadline`. With `resend`, that key is pressed again every `every` seconds until then
        (used at start-up, when the app may not be reading keys yet)."""
        self.buffer.clear()
        next_send = time.perf_counter()
        while True:
            now = time.perf_counter()
            if now >= deadline:
                return None
            if resend is not None and now >= next_send:
                self.press(resend)
                next_send = now + every
            wait = min(deadline, next_send if resend is not None else deadline) - now
            got = self._read(wait)
            # Only the new bytes (and a margin for a marker split across reads) are searched.
            if got and marker in CSI.sub(b"", bytes(self.buffer[-(got + 512):])):
                return time.perf_counter()

    def cpu_seconds(self) -> float:
        """User + system CPU the app has used so far (all its threads), from /proc. On a busy
        machine wall times stretch with the load; CPU time says what the app itself spent."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def drain(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            self._read(end - time.perf_counter())

    def close(self) -> None:
        """Quit with ctrl+q; kill the process group if it does not exit promptly."""
        try:
            self.press(b"\x11")
            end = time.perf_counter() + 5
            while self.proc.poll() is None and time.perf_counter() < end:
                try:
                    self._read(0.05)
                except RuntimeError:
                    break
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            os.close(self.master)
