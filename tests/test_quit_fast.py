"""Quitting the playground does not wait for the interpreter to free what it loaded.

`cli.main.leave_now` ends the process once the app has closed: exit handlers run and output is
flushed, but objects are not torn down one by one (with 100,000 environments that took seconds
after the screen was gone). A thread the interpreter would wait for keeps the usual exit.
Checked in a fresh interpreter, by what happens (which handlers ran, which finalizers did not),
never by how long it took.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT

PROBE = """
import atexit, sys, threading, time
from pathlib import Path
from proactive_tui.cli.main import leave_now

marks = Path(sys.argv[1])

class Loaded:
    def __del__(self, open=open, path=str(marks / "freed")):  # runs at teardown, which leave_now skips
        with open(path, "w") as f:
            f.write("freed")

kept = Loaded()
atexit.register(lambda: (marks / "atexit").write_text("ran"))
if sys.argv[2] == "thread":
    stop = threading.Event()
    worker = threading.Thread(target=lambda: stop.wait(0.5))  # not a daemon: the interpreter waits for it
    worker.start()
print("bye", end="")  # unflushed output must still arrive
leave_now(3)
print(" and on")
"""


def run(tmp_path: Path, mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROBE, str(tmp_path), mode], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_leaving_runs_exit_handlers_flushes_and_skips_teardown(tmp_path: Path) -> None:
    proc = run(tmp_path, "plain")
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == "bye"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert not (tmp_path / "freed").exists()


def test_a_running_thread_keeps_the_usual_exit(tmp_path: Path) -> None:
    proc = run(tmp_path, "thread")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "bye and on\n"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "freed").read_text() == "freed"
