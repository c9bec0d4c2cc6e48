"""The synth engine's contracts: headless and storeless, seeds stable across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT
from proactive_tui.synth.engine import stable_seed

PROBE = """
import importlib, json, sys
for name in ("proactive_tui.synth", "proactive_tui.synth.engine", "proactive_tui.families.proactiveeval.synth"):
    importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ("textual", "rich")
                        or m.startswith(("proactive_tui.store", "proactive_tui.cli", "proactive_tui.ui")))))
"""


def test_the_engine_imports_no_ui_store_or_cli() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_seeds_are_the_same_in_every_process() -> None:
    code = "from proactive_tui.synth.engine import stable_seed; print(stable_seed(7, 'persuasion-0001', 'candidate-2'))"
    seen = set()
    for hash_seed in ("1", "2"):  # Python's own str hash differs between these two processes
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": hash_seed})
        seen.add(int(proc.stdout))
    assert seen == {stable_seed(7, "persuasion-0001", "candidate-2")}
    assert stable_seed(7, "persuasion-0001") != stable_seed(8, "persuasion-0001")
    assert 0 <= stable_seed(7, "x") < 2 ** 31


def test_any_pipeline_runs_on_the_engine_and_a_rerun_calls_nothing(tmp_path) -> None:
    """A pipeline of another shape (one call per item, a JSONL output, a branch instead of a tier):
    the engine needs only the Pipeline protocol, as the Chronos and ProactiveBench pipelines will."""
    import asyncio

    from pydantic import BaseModel

    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.settings import ModelSettings
    from proactive_tui.synth import engine
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    class Line(BaseModel):
        text: str

    class Toy:
        family, version, stages = "toy", "toy-1", ("write",)
        roles = (engine.RoleSpec(name="writer", purpose="writes"),)

        def config(self):
            return {"n": 3}

        def item_ids(self):
            return ["a", "b", "c"]

        def needs_shared_input(self):
            return None

        async def prepare(self, ctx):
            return None

        async def run_item(self, ctx, item_id, shared):
            line = await ctx.ask("write", "line", "writer", [{"role": "user", "content": f"say {item_id}"}], Line, 0.0)
            if item_id == "b":
                raise engine.Reject("unwanted", "b is never kept")
            return engine.Outcome(item=item_id, status="kept", tier="positive", record={"text": line.text})

        def outputs(self, kept, run_name):
            return {"train.jsonl": "".join(json.dumps(o.record) + "\n" for o in kept)}

    toy = Toy()
    with FakeOpenAIServer(responder=lambda request: json.dumps({"text": "hi"})) as server:
        roles = {"writer": ModelSettings(model="openai/w", api_base=server.base_url)}
        manifest = engine.make_manifest(toy, {}, roles, 5, None)

        async def go() -> None:
            run = engine.Run(tmp_path, roles, Gateway(stream_replies=False), 5, 2)
            await engine.run_pipeline(toy, manifest, run)

        asyncio.run(go())
        sent = len(server.requests)
        # what a kill -9 between a step's write and its rename leaves behind (write_atomic's name)
        stale = next((tmp_path / "items").iterdir()) / ".line.json.k1ll3d.tmp"
        stale.write_text('{"half": ')
        asyncio.run(go())
        assert len(server.requests) == sent == 3  # every step on disk: the rerun asks nothing
        assert not stale.exists()  # and the resumed folder holds only whole files, as an uninterrupted one
    summary = engine.finish(tmp_path, toy, manifest)
    assert (summary.kept, summary.rejected, summary.calls) == ({"positive": 2}, {"unwanted": 1}, 3)
    assert (tmp_path / "out" / "train.jsonl").read_text() == '{"text": "hi"}\n{"text": "hi"}\n'
