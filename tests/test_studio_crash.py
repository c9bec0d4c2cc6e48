"""A generation in the studio survives a crash of the app (issue 32), like a session does: the
playground running the studio in auto mode is killed with SIGKILL midway, and the folder it
leaves resumes (`synth resume DIR`, or reopened in the studio) to the same files, byte for byte,
as a run nobody interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT
from synth_helpers import files
from test_ui_studio import prepare, step_files, synth_argv
from synth_fake import responder as pe_responder
from proactive_tui.cli.main import main
from proactive_tui.synth import engine
from proactive_tui.testing.fake_openai import FakeOpenAIServer

STUDIO = """
import sys
from textual.app import App
from proactive_tui.synth import setup
from proactive_tui.ui.studio.screen import StudioScreen
from proactive_tui.ui.studio.setup import parse_argv

args = parse_argv(sys.argv[1:])
args.resume = True  # the folder was prepared by the test, as the studio's setup prepares it
screen = StudioScreen(setup.prepare(args), args.concurrency, mode="auto")

class Studio(App):
    def on_mount(self) -> None:
        self.push_screen(screen)

Studio().run(headless=True)
"""
GUARD_S = 300.0
"""Only keeps a stuck app from hanging the suite; the kill comes once enough steps are on disk."""


def slow(request):
    """The fake's reply after 0.3 s: an item takes seconds, so the kill lands inside it."""
    time.sleep(0.3)
    return pe_responder(request)


def test_the_studio_killed_midway_leaves_a_folder_that_resumes_to_the_uninterrupted_result(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=slow) as server:
        argv = synth_argv("proactiveeval", tmp_path / "cut", server.base_url, tmp_path)
        prepared, _args = prepare(argv)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PROACTIVE_TUI_NO_PRELOAD": "1"}
        proc = subprocess.Popen([sys.executable, "-c", STUDIO, *argv], cwd=tmp_path, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            guard = time.monotonic() + GUARD_S
            while len(step_files(prepared.folder)) < 4:
                assert proc.poll() is None, proc.stderr.read().decode(errors="replace")[-2000:]
                assert time.monotonic() < guard, "the studio made no progress"
                time.sleep(0.05)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=60)
        server.settle()
        item = engine.read_manifest(prepared.folder).planned[0]
        assert not engine.has_result(prepared.folder, item)  # killed before the item's verdict
        assert main(["synth", "resume", str(prepared.folder)]) == 0
        assert main(synth_argv("proactiveeval", tmp_path / "whole", server.base_url, tmp_path)) == 0
    assert files(prepared.folder) == files(tmp_path / "whole")
