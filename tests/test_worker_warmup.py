"""What a batch's parent does once before forking its workers, so that each worker does not do it
again on its own: litellm's first-call set-up (`gateway.warm_up_for_fork`) and the imports of the
job every worker runs (`workers.eval_job`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from proactive_tui.evalrun import workers

ROOT = Path(__file__).resolve().parent.parent

FIRST_CALL = """
import asyncio, json, sys, threading
from proactive_tui.llm.gateway import Gateway, litellm_module, warm_up_for_fork
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer

litellm_module()
with FakeOpenAIServer() as server:
    seat = ModelSettings(model="openai/fake", api_base=server.base_url)
    threads = threading.active_count()
    if sys.argv[1] == "warm":
        # a seat litellm cannot place fails its warm-up and must cost nothing else
        warm_up_for_fork([seat, seat.model_copy(), ModelSettings(model="nonsense-provider/x", api_base=server.base_url)])
    threads_after = threading.active_count()
    from openai.types.chat import ChatCompletion, ChatCompletionChunk
    # the SDK builds its reply models' validators on first use (deferred): a worker's first reply did
    built = [ChatCompletion.__pydantic_complete__, ChatCompletionChunk.__pydantic_complete__]
    before = set(sys.modules)
    reply = asyncio.run(Gateway().complete(seat, [{"role": "user", "content": "hi"}]))
    print(json.dumps({"imported": sorted(m for m in set(sys.modules) - before if m.split(".")[0] == "litellm"),
                      "keyring": sorted(m for m in set(sys.modules) - before if m.split(".")[0] == "keyring"),
                      "sdk_built": built,
                      "threads": [threads, threads_after], "posts": len(server.chat_requests()),
                      "text": reply.text}))
"""


def _first_call(mode: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, "-c", FIRST_CALL, mode], capture_output=True, text=True, env=env,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_after_the_warm_up_a_first_call_has_little_left_to_set_up_and_no_server_saw_it() -> None:
    cold, warm = _first_call("cold"), _first_call("warm")
    # without it, the first real call imports litellm's call path (40 modules here)
    assert len(cold["imported"]) >= 20, cold["imported"]
    assert len(warm["imported"]) <= len(cold["imported"]) // 4, warm["imported"]
    # the OpenAI SDK's reply models were built by the warm-up's in-process calls, not the first reply
    assert cold["sdk_built"] == [False, False] and warm["sdk_built"] == [True, True]
    # and the keyring's modules were imported (the first key read imported them, cold)
    assert cold["keyring"] and not [m for m in warm["keyring"] if m.startswith("keyring.backends.")], warm["keyring"]
    # the warm-up's calls are mocked: the server saw only the real call, which got its reply
    assert warm["posts"] == cold["posts"] == 1
    assert warm["text"] == cold["text"] and warm["text"]
    # and it left no thread behind for a fork to copy
    assert warm["threads"][0] == warm["threads"][1]


def test_warm_up_skips_local_seats_and_pairs_it_already_did(monkeypatch) -> None:
    from proactive_tui.llm import gateway
    from proactive_tui.llm.settings import ModelSettings

    asked: list[str] = []

    async def fake_acompletion(**request):
        asked.append(request["model"])
        assert request["mock_response"] == gateway.WARM_UP_TEXT  # never a real request
        if request.get("stream"):
            async def chunks():
                yield "x"
            return chunks()
        return "x"

    monkeypatch.setattr(gateway, "_warmed_up", set())
    monkeypatch.setattr(gateway, "litellm_module", lambda: SimpleNamespace(acompletion=fake_acompletion))
    remote = ModelSettings(model="openai/a", api_base="http://127.0.0.1:9/v1")
    gateway.warm_up_for_fork([ModelSettings(model="local/default"), remote, remote.model_copy(update={"model": "openai/b"})])
    assert asked == ["openai/a", "openai/a"]  # one provider at one base: once whole, once streamed
    gateway.warm_up_for_fork([remote])
    assert asked == ["openai/a", "openai/a"]  # a second pool in this process: nothing to do


def test_the_eval_job_loads_each_familys_engine_in_the_parent(monkeypatch) -> None:
    from proactive_tui.core import registry

    loaded: list[str] = []

    class Family:
        def __init__(self, name: str) -> None:
            self.name = name

        @property
        def engine(self):
            loaded.append(self.name)
            if self.name == "broken":
                raise ImportError("its engine module is missing")
            return object()

    monkeypatch.setattr(registry, "find", lambda name: Family(name) if name != "unknown" else None)
    planned = [SimpleNamespace(key=SimpleNamespace(family=name)) for name in ("a", "a", "broken", "unknown")]
    make = workers.eval_job(planned, build=None, shares=None, store=False)
    # loaded once a family, before any worker exists; a family that cannot load fails in its
    # sessions, as in one process, not in the pool's making
    assert sorted(loaded) == ["a", "broken"]
    assert callable(make)


@pytest.mark.parametrize("build", [None, "scripted"])
def test_a_pool_warms_up_the_seats_its_sessions_call(build) -> None:
    from proactive_tui.llm.settings import ModelSettings, RoleSettings

    roles = RoleSettings(agent=ModelSettings(model="openai/a"), user=ModelSettings(model="openai/u"),
                         judge=ModelSettings(model="anthropic/j"))
    planned = [SimpleNamespace(key=SimpleNamespace(family="proactiveeval", group=f"g{i}"), spec=SimpleNamespace(roles=roles))
               for i in range(2)]
    pool = workers.WorkerPool.for_sessions(2, 2, planned, None if build is None else (lambda *a: None), None, {}, store=False)
    if build is None:
        assert {seat.model for seat in pool.warm_up} == {"openai/a", "openai/u", "anthropic/j"}
    else:  # scripted seats call no model
        assert pool.warm_up == []
