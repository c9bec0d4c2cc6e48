"""What the three families' `synth` tests share: a run folder's files, and a run cancelled in
process (as Ctrl-C cancels it) then resumed, counted against the fake server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest


def files(folder: Path) -> dict[str, bytes]:
    """Every file of a run folder but command.json (it names the folder and the working dir)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "command.json"}


def cancel_then_resume(family: str, options: dict[str, Any], given_roles: list[str], server: Any,
                       cut: Path, whole: Path, cancel_after: int) -> set[Path]:
    """Run `family`'s pipeline into `cut`, cancel it once `cancel_after` calls have ended (the
    calls in flight are lost, nothing else), resume it, then run it uninterrupted into `whole`.
    Checks that the resume sent exactly the calls of the steps that were missing and that both
    folders end byte-identical; returns the step files the cancelled run had kept, for the
    family's own bounds."""
    from proactive_tui.cli.synth_cmd import resolve_roles
    from proactive_tui.core import registry
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.synth import engine

    pipeline = registry.get(family).generate.pipeline(options)

    def start(folder: Path, on_event: Any = None) -> tuple[engine.Manifest, engine.Run]:
        roles = resolve_roles([r.name for r in pipeline.roles], given_roles, server.base_url, None)
        manifest = engine.make_manifest(pipeline, options, roles, 3, None)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / engine.MANIFEST).write_text(engine.file_text(manifest))
        return manifest, engine.Run(folder, roles, Gateway(stream_replies=False), 3, 4, on_event=on_event)

    ended = 0

    async def first() -> None:
        task = asyncio.current_task()

        def on_event(event: engine.Event) -> None:
            nonlocal ended
            ended += event.kind == "call_end"
            if ended == cancel_after:
                task.cancel()  # like Ctrl-C

        manifest, run = start(cut, on_event)
        await engine.run_pipeline(pipeline, manifest, run)

    async def again(folder: Path) -> None:
        manifest, run = start(folder)
        await engine.run_pipeline(pipeline, manifest, run)
        engine.finish(folder, pipeline, manifest)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(first())
    before = set((cut / "items").rglob("*.json"))
    assert not list((cut / "items").rglob("*.tmp"))  # nothing half-written
    server.settle()
    sent = len(server.requests)
    asyncio.run(again(cut))
    resumed = len(server.requests) - sent
    asyncio.run(again(whole))
    new_steps = [p for p in (cut / "items").rglob("*.json") if p not in before and p.name != "result.json"]
    assert resumed == sum(json.loads(p.read_text())["calls"] for p in new_steps)  # only the missing steps
    assert files(cut) == files(whole)  # and the outcome is the uninterrupted run's
    return before


def run_and_kill(argv: list[str], cwd: Path, folder: Path, steps: int, server: Any, guard_s: float) -> None:
    """Start `proactive-tui ARGV` in a process, kill -9 it once `folder` holds `steps` step files
    (well into the run), and wait until the fake server has recorded all it had sent (`settle`), so
    what a resume sends next is counted apart. `guard_s` only keeps a stuck run from hanging."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import ROOT

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "proactive_tui", *argv], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        guard = time.monotonic() + guard_s
        while len(list((folder / "items").rglob("*.json"))) < steps:
            assert proc.poll() is None and time.monotonic() < guard, "the run ended before it could be killed"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    server.settle()
