"""Per-model call limits, the gateway's per-model counters, and the batch's progress numbers.

The concurrency bound is measured where it matters, at the server: the fake server counts the
requests it is answering at once per model.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from proactive_tui.cli.main import main
from proactive_tui.cli.progress import BatchProgress
from proactive_tui.config import AppConfig, ConfigError, dump_config, load_config
from proactive_tui.llm.gateway import Gateway
from proactive_tui.llm.limits import GatewayStats, ModelLimits
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply, proactiveeval_responder

MESSAGES = [{"role": "user", "content": "hi"}]


def write_config(text: str) -> Path:
    path = Path(os.environ["PROACTIVE_TUI_CONFIG"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_model_limits_come_from_the_config_file_and_are_validated() -> None:
    path = write_config('[models."openai/gpt-4.1-mini"]\nmax_parallel_requests = 2\nrpm = 500\ntpm = 200000\n')
    config = load_config()
    assert config.models["openai/gpt-4.1-mini"] == ModelLimits(max_parallel_requests=2, rpm=500, tpm=200000)
    assert load_config(path) == AppConfig.model_validate(__import__("tomllib").loads(dump_config(config)))
    write_config('[models."openai/x"]\nmax_parallel_requests = 0\nburst = 3\n')
    with pytest.raises(ConfigError) as err:
        load_config()
    message = str(err.value)
    assert "max_parallel_requests" in message and "burst: unknown setting" in message


def test_a_batch_at_concurrency_8_keeps_a_limited_model_to_its_bound_and_not_the_others(tmp_path) -> None:
    write_config('[models."openai/a"]\nmax_parallel_requests = 2\n')
    with FakeOpenAIServer(responder=proactiveeval_responder(), latency=0.05) as server:
        code = main(["eval", "proactiveeval/persuasion/fair/0", "--agent", "openai/a", "--agent", "openai/b",
                     "--user", "openai/u", "--judge", "openai/j", "--api-base", server.base_url,
                     "--agreeableness", "low", "--max-turns", "1", "--repeats", "6", "--concurrency", "8",
                     "--workers", "1", "--no-store", "--out", str(tmp_path / "out")])  # across workers: test_eval_workers
        peaks = dict(server.max_in_flight)
    assert code == 0
    assert peaks["a"] == 2  # the bound holds and is used
    assert peaks["b"] > 2 and peaks["j"] > 2  # models with no limit run as wide as the batch


def test_the_embedded_model_gets_one_call_at_a_time_whatever_the_config() -> None:
    gateway = Gateway(limits={"local/smollm2": ModelLimits(max_parallel_requests=8)})
    limiter = gateway.limiter(ModelSettings(model="local/smollm2"))

    async def go() -> int:
        inside, peak = 0, 0

        async def call() -> None:
            nonlocal inside, peak
            async with limiter.slot(0):
                inside += 1
                peak = max(peak, inside)
                await asyncio.sleep(0.001)
                inside -= 1

        await asyncio.gather(*(call() for _ in range(6)))
        return peak

    assert asyncio.run(go()) == 1


def test_a_429_pauses_that_model_and_no_other() -> None:
    gateway = Gateway()
    slow, other = ModelSettings(model="openai/slow"), ModelSettings(model="openai/other")

    async def go() -> tuple[bool, bool]:
        gateway.limiter(slow).pause(30)
        blocked = asyncio.create_task(_enter(gateway, slow))
        free = asyncio.create_task(_enter(gateway, other))
        await asyncio.sleep(0.05)
        result = blocked.done(), free.done()
        blocked.cancel()
        return result

    assert asyncio.run(go()) == (False, True)


async def _enter(gateway: Gateway, settings: ModelSettings) -> None:
    async with gateway.limiter(settings).slot(0):
        pass


def test_the_gateway_counts_requests_retries_and_tokens_per_model() -> None:
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    stats = GatewayStats()
    with FakeOpenAIServer() as server:
        server.script(Reply.error(429, "slow down", retry_after=0), Reply.text("hello there"), Reply.text("again"))
        gateway = Gateway(sleep=sleep, jitter=lambda: 0.0, stats=stats)
        a = ModelSettings(model="openai/a", api_base=server.base_url)
        b = ModelSettings(model="openai/b", api_base=server.base_url)

        async def go() -> None:
            await gateway.complete(a, MESSAGES)
            async for _ in gateway.stream(b, MESSAGES):
                pass

        asyncio.run(go())
    ca, cb = stats.models["openai/a"], stats.models["openai/b"]
    assert (ca.requests, ca.calls, ca.retries, ca.rate_limited, ca.failures) == (2, 1, 1, 1, 0)
    assert (cb.requests, cb.calls, cb.retries) == (1, 1, 0)
    assert ca.prompt_tokens > 0 and ca.completion_tokens > 0 and cb.tokens > 0
    assert ca.cost is None and ca.in_flight == 0 and cb.max_in_flight == 1


def test_progress_rows_count_sessions_per_agent_and_calls_per_model() -> None:
    from types import SimpleNamespace as NS

    planned = [NS(key=NS(agent=m)) for m in ("m1", "m1", "m1", "m2")]
    stats = GatewayStats()
    stats.of("m1").requests, stats.of("m1").retries, stats.of("m1").prompt_tokens = 5, 2, 100
    stats.of("judge").requests, stats.of("judge").cost = 3, 0.5
    now = [0.0]
    progress = BatchProgress(planned, stats, clock=lambda: now[0])
    progress.record("m1", ok=True)
    now[0] = 10.0
    progress.record("m1", ok=False)
    rows = {r.model: r for r in progress.rows()}
    assert list(rows) == ["all", "m1", "m2", "judge"]
    assert (rows["m1"].done, rows["m1"].total, rows["m1"].failed, rows["m1"].retries, rows["m1"].tokens) == (2, 3, 1, 2, 100)
    assert rows["m1"].eta_s == pytest.approx(5.0) and rows["m2"].eta_s is None
    assert (rows["all"].done, rows["all"].total, rows["all"].requests, rows["all"].cost) == (2, 4, 8, 0.5)
    assert rows["m2"].cells()[6] == "-" and rows["judge"].cells()[1] == "-"


def test_eval_without_a_terminal_ends_with_a_summary_line_per_model(tmp_path, capsys) -> None:
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        code = main(["eval", "proactiveeval/persuasion/fair/0", "--agent", "openai/a", "--agent", "openai/b",
                     "--user", "openai/u", "--judge", "openai/j", "--api-base", server.base_url,
                     "--agreeableness", "low", "--max-turns", "1", "--repeats", "2", "--no-store",
                     "--out", str(tmp_path / "out")])
    assert code == 0
    lines = capsys.readouterr().err.splitlines()
    summary = [line for line in lines if line.startswith("summary ")]
    assert summary[0].startswith("summary all: done 4/4, failed 0")
    assert any(line.startswith("summary openai/a: done 2/2, failed 0, calls ") for line in summary)
    assert any(line.startswith("summary openai/b: done 2/2, failed 0, calls ") for line in summary)
    assert any(line.startswith("summary openai/j: done -") for line in summary)
    assert json.loads((tmp_path / "out" / "report.json").read_text())["partial"] is False


def test_litellm_price_and_schema_lookups_run_once_per_model(monkeypatch) -> None:
    from proactive_tui.llm.gateway import Usage, litellm_module

    litellm = litellm_module()
    asked: list[str] = []

    def cost_per_token(model, prompt_tokens, completion_tokens):
        asked.append(model)
        if model == "openai/unpriced":
            raise Exception("This model isn't mapped yet")
        return 0.001 * prompt_tokens, 0.002 * completion_tokens

    def supports_response_schema(model):
        asked.append("schema:" + model)
        return True

    monkeypatch.setattr(litellm, "cost_per_token", cost_per_token)
    monkeypatch.setattr(litellm, "supports_response_schema", supports_response_schema)
    gateway = Gateway()
    usage = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
    unpriced, priced = ModelSettings(model="openai/unpriced"), ModelSettings(model="openai/priced")
    assert [gateway._cost(unpriced, usage) for _ in range(3)] == [None, None, None]
    assert gateway._cost(priced, usage) == pytest.approx(0.02) and gateway._cost(priced, usage) == pytest.approx(0.02)
    assert all(gateway._schema_supported(priced) for _ in range(3))
    # an unpriced model is asked once; a priced one every call (tiered prices depend on the tokens)
    assert asked == ["openai/unpriced", "openai/priced", "openai/priced", "schema:openai/priced"]


def test_the_token_bucket_charges_the_estimate_then_settles_the_usage() -> None:
    from proactive_tui.llm.limits import ModelLimiter, TokenBucket

    bucket = TokenBucket(per_minute=6000)  # 100 a second, a 10-second burst of 1,000
    assert bucket.capacity == 1000

    async def go() -> tuple[float, float, float]:
        limiter = ModelLimiter(ModelLimits(tpm=6000, rpm=60))
        tpm = limiter._tpm
        async with limiter.slot(300) as charge:
            during = tpm.level
            charge.settle(500)  # the reply said 500 tokens: 200 more than estimated
            charge.settle(500)  # settled once
        after = tpm.level
        await bucket.take(1500)  # more than a full bucket: taken, leaving a debt
        return during, after, bucket.level

    during, after, debt = asyncio.run(go())
    assert 700 <= during <= 701 and 500 <= after <= 501.5 and debt < 0
