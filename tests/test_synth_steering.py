"""What the studio does to a synth run, at the engine: hold each call at a gate, keep a person's
edit of a step and re-make what was made from it, keep a person's verdict beside the pipeline's.

A toy pipeline of three chained steps (draft -> polish -> verdict) on the fake server: each
step's prompt holds the step before's output, so a re-made step shows what it was made from.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

from proactive_tui.llm.gateway import Gateway
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.synth import engine
from proactive_tui.testing.fake_openai import FakeOpenAIServer


class Line(BaseModel):
    text: str


class Verdict(BaseModel):
    good: bool


class Chain:
    """draft -> polish -> verdict; an item whose verdict is bad is rejected carrying its record."""

    family, version, stages, tiers = "toy", "toy-1", ("draft", "polish", "verdict"), ("plain",)
    roles = (engine.RoleSpec(name="writer", purpose="writes"),)
    order = ("draft", "polish", "verdict")

    def config(self):
        return {}

    def item_ids(self):
        return ["a", "b"]

    def needs_shared_input(self):
        return None

    async def prepare(self, ctx):
        return None

    async def run_item(self, ctx, item_id, shared):
        draft = await ctx.ask("draft", "draft", "writer", [{"role": "user", "content": f"draft {item_id}"}], Line, 0.0)
        polish = await ctx.ask("polish", "polish", "writer", [{"role": "user", "content": f"polish {draft.text}"}],
                               Line, 0.0)
        verdict = await ctx.ask("verdict", "verdict", "writer", [{"role": "user", "content": f"judge {polish.text}"}],
                                Verdict, 0.0)
        record = {"text": polish.text}
        if not verdict.good:
            raise engine.Reject("bad", "the judge said no", record=record, group="g")
        return engine.Outcome(item=item_id, status="kept", tier="plain", group="g", record=record)

    def outputs(self, kept, run_name):
        return {"out.jsonl": "".join(json.dumps({**o.record, **engine.person_provenance(o)}) + "\n" for o in kept)}

    def installed_ids(self, run_name):
        return "toy/<item>"

    def installed_id(self, outcome, run_name):
        return f"toy/{outcome.item}"

    def schemas(self):
        return {"Line": Line, "Verdict": Verdict}

    def downstream(self, step, steps):
        return [s for s in steps if s in self.order and self.order.index(s) > self.order.index(step)]


def responder(request) -> str:
    """Echo the prompt's last word into a Line; judge "good" unless the text holds "meh"."""
    content = request["messages"][-1]["content"].split("\n")[0]  # the gateway adds a JSON instruction below
    if content.startswith("judge"):
        return json.dumps({"good": "meh" not in content})
    return json.dumps({"text": content.split(" ", 1)[1] + "!"})


@pytest.fixture
def chain_run(tmp_path):
    with FakeOpenAIServer(responder=responder) as server:
        roles = {"writer": ModelSettings(model="openai/w", api_base=server.base_url)}
        pipeline = Chain()
        manifest = engine.make_manifest(pipeline, {}, roles, 1, None)
        events: list[engine.Event] = []
        held: list[tuple[str, str, str]] = []

        async def gate(scope: str, stage: str, step: str) -> None:
            held.append((scope, stage, step))

        def run(items=None):
            async def go():
                r = engine.Run(tmp_path, roles, Gateway(stream_replies=False), 1, 1, on_event=events.append, gate=gate)
                return await engine.run_pipeline(pipeline, manifest, r, items=items)
            return asyncio.run(go())

        yield tmp_path, pipeline, manifest, run, events, held, server


def test_the_gate_holds_every_live_call_and_no_cached_one(chain_run) -> None:
    folder, _p, _m, run, events, held, server = chain_run
    run(items=["a"])
    assert held == [("a", "draft", "draft"), ("a", "polish", "polish"), ("a", "verdict", "verdict")]
    assert [(e.kind, e.step) for e in events if e.kind in ("item_start", "call_start")] == [
        ("item_start", ""), ("call_start", "draft"), ("call_start", "polish"), ("call_start", "verdict")]
    (folder / "items" / "a" / "result.json").unlink()
    held.clear()
    run(items=["a"])
    assert held == []  # every step read from its file: nothing spent, nothing to hold
    assert len(server.requests) == 3


def test_a_persons_edit_is_checked_kept_beside_the_models_and_what_came_of_it_is_made_again(chain_run) -> None:
    folder, pipeline, _m, run, _e, _h, server = chain_run
    run(items=["a"])
    before = (folder / "items" / "a" / "draft.json").read_text()
    with pytest.raises(engine.EditError, match="text"):
        engine.edit_step(folder, pipeline, "a", "draft", {"txet": "typo"})
    assert (folder / "items" / "a" / "draft.json").read_text() == before  # a bad edit writes nothing

    removed = engine.edit_step(folder, pipeline, "a", "draft", {"text": "meh"})
    assert sorted(removed) == ["polish", "verdict"]
    state = engine.read_item(folder, "a")
    assert set(state.steps) == {"draft"} and state.outcome is None
    assert state.steps["draft"].edited.original == {"text": "a!"}

    run(items=["a"])
    state = engine.read_item(folder, "a")
    assert state.steps["polish"].input[-1]["content"] == "polish meh"  # made from the person's draft
    assert state.outcome.status == "rejected" and state.outcome.edited_steps == ["draft"]
    assert len(server.requests) == 5  # polish and verdict again; the draft was not asked again

    # a second edit keeps the model's first output as the original, not the person's first edit
    engine.edit_step(folder, pipeline, "a", "draft", {"text": "fine"})
    assert engine.read_item(folder, "a").steps["draft"].edited.original == {"text": "a!"}


def test_a_persons_verdict_is_kept_beside_the_pipelines_and_named_in_summary_and_provenance(chain_run) -> None:
    folder, pipeline, manifest, run, _e, _h, _s = chain_run
    run()
    engine.edit_step(folder, pipeline, "b", "draft", {"text": "meh"})
    run(items=["b"])
    assert engine.read_item(folder, "b").outcome.status == "rejected"

    kept = engine.decide(folder, "b", "kept", tier="plain")  # keep it against the pipeline's "bad"
    assert kept.status == "kept" and kept.decision.pipeline_status == "rejected"
    assert kept.decision.pipeline_reason == "bad"
    rejected = engine.decide(folder, "a", "rejected")
    assert rejected.status == "rejected" and rejected.reason == "person"
    assert rejected.decision.pipeline_status == "kept"

    summary = engine.finish(folder, pipeline, manifest)
    assert summary.decided_by_person == {"kept": 1, "rejected": 1}
    assert summary.edited_by_person == 1
    lines = [json.loads(x) for x in (folder / "out" / "out.jsonl").read_text().splitlines()]
    assert lines == [{"text": "meh!", "edited_by_person": ["draft"], "decided_by": "person",
                      "pipeline_verdict": {"pipeline_status": "rejected", "pipeline_tier": None,
                                           "pipeline_reason": "bad"}}]

    # deciding as the pipeline did takes the person's decision back
    back = engine.decide(folder, "a", "kept")
    assert back.decision is None and back.status == "kept" and back.reason is None


def test_an_item_rejected_before_it_was_an_environment_cannot_be_kept(chain_run, tmp_path) -> None:
    folder, *_ = chain_run
    outcome = engine.Outcome(item="a", status="rejected", reason="empty")
    engine.write_atomic(folder / "items" / "a" / "result.json", engine.file_text(outcome))
    with pytest.raises(engine.SynthError, match="nothing to keep"):
        engine.decide(folder, "a", "kept", tier="plain")
    with pytest.raises(engine.SynthError, match="no verdict yet"):
        engine.decide(folder, "b", "kept")
