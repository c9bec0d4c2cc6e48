"""What the embedded session's memory fixes rely on (issue 35, point 5), on the real 135M model.

- A session on the embedded model alone never imports litellm: the gateway answers `local/...`
  seats through the in-process client, and checking the seats does not ask litellm either.
- That client's replies are litellm's: the same request gives the same text and usage both ways.
- The prompt cache keeps its contexts in files: it evicts before it writes (the budget holds at
  every moment), a restored context generates exactly what the original did, the replies of a
  session-like call sequence are those of llama-cpp-python's own RAM cache, and its folder goes.
No memory or timing is asserted here: `benchmarks/local_memory.py` measures that.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT
from proactive_tui.llm import local as local_model
from proactive_tui.llm.local import loader, worker

pytestmark = pytest.mark.skipif(not local_model.is_available(), reason="the [local] extra is not installed")

LOCAL_ONLY_PROBE = """
import asyncio, json, sys
from pydantic import BaseModel, Field
from proactive_tui.llm.preflight import model_problem
from proactive_tui.llm.gateway import Gateway
from proactive_tui.llm.local import worker
from proactive_tui.llm.settings import ModelSettings

class Verdict(BaseModel):
    reasoning: str
    score: int = Field(ge=1, le=10)

async def main():
    settings = ModelSettings(model="local/smollm2", max_tokens=12, seed=0)
    gateway = Gateway()
    deltas = []
    streamed = await gateway.complete(settings, [{"role": "user", "content": "Say hello."}], on_delta=deltas.append)
    whole = await gateway.complete(settings, [{"role": "user", "content": "Say goodbye."}])
    judged = await gateway.complete_structured(ModelSettings(model="local/smollm2", seed=0),
                                               [{"role": "user", "content": "Score the reply 'hello'."}], Verdict)
    error = worker._error(400, "refused")
    return {
        "problem": model_problem("local/smollm2", None),
        "streamed": streamed.text, "deltas": "".join(deltas), "streamed_usage": streamed.usage.completion_tokens,
        "whole": whole.text, "score": judged.value.score,
        "error": [type(error).__name__, getattr(error, "status_code", None)],
        "loaded": sorted({n.split(".")[0] for n in sys.modules} & {"litellm", "openai", "httpx"}),
    }

print(json.dumps(asyncio.run(main())))
"""


def test_a_local_only_session_never_imports_litellm() -> None:
    proc = subprocess.run([sys.executable, "-c", LOCAL_ONLY_PROBE], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["loaded"] == [], seen
    assert seen["problem"] is None
    assert seen["streamed"].strip() and seen["streamed"] == seen["deltas"]
    assert seen["streamed_usage"] > 0
    assert seen["whole"].strip()
    assert 1 <= seen["score"] <= 10
    # A refusal without litellm loaded keeps its status, which `errors.classify` maps.
    assert seen["error"] == ["LocalCallError", 400]


async def test_closing_a_direct_stream_cancels_the_generation(monkeypatch) -> None:
    """The gateway closes a stream it stops reading (a cancelled turn); on the direct path that
    must reach the worker's cancel event, as litellm's stream wrapper did, or the model would go
    on generating behind the next call."""
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.local import client
    from proactive_tui.llm.settings import ModelSettings

    made = []
    original = client.build_request
    monkeypatch.setattr(client, "build_request", lambda *a: made.append(original(*a)) or made[-1])
    settings = ModelSettings(model="local/smollm2", max_tokens=200, seed=0)
    stream = Gateway().stream(settings, [{"role": "user", "content": "Tell me a long story about a ship."}])
    reader = stream.__aiter__()
    await reader.__anext__()  # one delta, then the reader goes away
    assert len(made) == 1 and not made[0].cancel.is_set()
    await reader.aclose()
    assert made[0].cancel.is_set()
    assert 0 < len(stream.text) and stream.done is False
    after = await Gateway().complete(ModelSettings(model="local/smollm2", max_tokens=4, seed=0),
                                     [{"role": "user", "content": "Hi"}])
    assert after.text.strip()


def _fresh(llama, cache) -> None:
    """Every call below starts from an empty context and an empty cache, so the two paths
    evaluate the same tokens in the same batches."""
    llama.reset()
    llama.set_cache(cache)


@pytest.mark.parametrize("stream", [True, False])
async def test_the_direct_client_answers_as_litellm_does(stream: bool) -> None:
    import litellm

    from proactive_tui.llm.local import client

    local_model.register(litellm)
    llama = local_model.get_llama()
    saved = llama.cache
    request = {"model": "local/smollm2", "messages": [{"role": "user", "content": "Name a colour."}],
               "temperature": 0.0, "max_tokens": 16, "seed": 0, "num_retries": 0, "max_retries": 0,
               "timeout": 300.0, "response_format": {"type": "json_object", "schema": {
                   "type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}}}
    if stream:
        request = {**request, "stream": True, "stream_options": {"include_usage": True}}
        del request["response_format"]

    async def read(response) -> tuple[str, int]:
        if not stream:
            return response.choices[0].message.content, response.usage.completion_tokens
        text, tokens = "", 0
        async for chunk in response:
            if chunk.choices:
                text += getattr(chunk.choices[0].delta, "content", None) or ""
            if getattr(chunk, "usage", None):
                tokens = chunk.usage.completion_tokens
        return text, tokens

    try:
        _fresh(llama, loader._prefix_cache())
        via_litellm = await read(await litellm.acompletion(**request))
        _fresh(llama, loader._prefix_cache())
        direct = await read(await client.acompletion(**request))
    finally:
        _fresh(llama, saved)
    assert via_litellm[0].strip()
    assert direct == via_litellm


def _count(llama, tokens: list[int], n: int) -> list[int]:
    out = []
    for token in llama.generate(tokens, temp=0.0, top_k=1, repeat_penalty=1.0):
        out.append(int(token))
        if len(out) >= n:
            break
    return out


def test_the_cache_evicts_before_it_writes_and_restores_exactly(tmp_path, monkeypatch) -> None:
    import llama_cpp

    from proactive_tui.llm.local.state_cache import FilePromptCache

    llama = local_model.get_llama()
    saved = llama.cache
    first = llama.tokenize(b"The quick brown fox jumps over the lazy dog. " * 6)
    second = llama.tokenize(b"A completely different prompt about sailing boats on the sea. " * 6)
    try:
        llama.reset()
        llama.set_cache(None)
        llama.eval(first)
        expected = _count(llama, first, 8)  # what the first prompt continues with, never saved or restored

        llama.reset()
        llama.eval(first)
        probe = FilePromptCache(capacity_bytes=1 << 40, folder=tmp_path)
        one_state = probe.save(llama).llama_state_size
        probe.close()
        assert not probe.folder.exists()

        # Room for one state and a half: the second save must evict the first, before writing.
        cache = FilePromptCache(capacity_bytes=int(one_state * 1.5), folder=tmp_path)
        on_disk_at_write: list[int] = []
        original = llama_cpp.llama_state_save_file

        def watched(ctx, path, tokens, n):  # type: ignore[no-untyped-def]
            on_disk_at_write.append(sum(f.stat().st_size for f in cache.folder.iterdir()))
            return original(ctx, path, tokens, n)

        monkeypatch.setattr(llama_cpp, "llama_state_save_file", watched)
        llama.set_cache(cache)
        state_a = llama.save_state()
        cache[llama.input_ids[: llama.n_tokens].tolist()] = state_a
        llama.reset()
        llama.eval(second)
        state_b = llama.save_state()
        cache[llama.input_ids[: llama.n_tokens].tolist()] = state_b
        assert on_disk_at_write[0] == 0
        assert on_disk_at_write[1] == 0, "the first state was still on disk when the second was written"
        assert cache.evictions == 1 and not state_a.path.exists() and state_b.path.exists()
        assert len(cache) == 1 and cache.cache_size <= cache.capacity_bytes

        # Restore a context saved while another one is live: it continues exactly as from scratch.
        cache2 = FilePromptCache(capacity_bytes=1 << 40, folder=tmp_path)
        llama.set_cache(cache2)
        llama.reset()
        llama.eval(first)
        kept = llama.save_state()
        llama.reset()
        llama.eval(second)
        llama.load_state(kept)
        assert llama.n_tokens == len(first)
        assert _count(llama, first, 8) == expected
        folder = cache2.folder
        del cache2, kept
        llama.set_cache(None)
        import gc

        gc.collect()
        assert not folder.exists(), "a collected cache leaves its folder behind"
    finally:
        llama.reset()
        llama.set_cache(saved)


def test_replies_with_the_file_cache_are_those_of_the_ram_cache(monkeypatch) -> None:
    """Calls shaped like a session's (agent and judge in turn, each growing its own history): the
    file cache must hit (restore a saved context) and change no reply."""
    from llama_cpp.llama_cache import LlamaRAMCache

    from proactive_tui.llm.local.state_cache import FilePromptCache

    agent = [{"role": "system", "content": "You are a helpful assistant who plans trips."}]
    judge = [{"role": "system", "content": "You judge dialogues. Reply with one short sentence."}]
    calls = []
    for turn, question in enumerate(["Where should I go in May?", "What should I pack?", "How long should I stay?"]):
        agent = agent + [{"role": "user", "content": question}]
        calls.append(("agent", list(agent)))
        judge = judge + [{"role": "user", "content": f"Turn {turn + 1}: the user asked {question!r}. Judge it."}]
        calls.append(("judge", list(judge)))

    def run(cache) -> list[str]:
        llama = local_model.get_llama()
        llama.reset()
        llama.set_cache(cache)
        return [worker.complete(local_model.build_request(messages, {"max_tokens": 12, "temperature": 0.0}))[0]
                for _, messages in calls]

    loads = []
    original = FilePromptCache.load
    monkeypatch.setattr(FilePromptCache, "load", staticmethod(lambda llama, state: (loads.append(state.n_tokens),
                                                                                     original(llama, state))))
    llama = local_model.get_llama()
    saved = llama.cache
    try:
        with_files = run(loader._prefix_cache())
        with_ram = run(LlamaRAMCache(capacity_bytes=loader.PROMPT_CACHE_BYTES))
    finally:
        llama.reset()
        llama.set_cache(saved)
    assert loads, "the file cache never restored a context on a session-shaped sequence"
    assert all(reply.strip() for reply in with_files)
    assert with_files == with_ram
