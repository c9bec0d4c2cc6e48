"""Gateway overhead vs a bare `litellm.acompletion`, both against the fake server at zero latency.

Run: .venv/bin/python benchmarks/gateway_overhead.py [--calls 300]
Compares like with like, one-shot and streamed, interleaved in rounds so drift hits both alike,
and prints the ratio gateway / bare for each. Target: <= 1.10.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from proactive_tui.llm.gateway import Gateway, litellm_module  # noqa: E402
from proactive_tui.llm.settings import ModelSettings  # noqa: E402
from proactive_tui.testing.fake_openai import FakeOpenAIServer  # noqa: E402

MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say something short."}]


async def main(calls: int, rounds: int) -> None:
    litellm = litellm_module()
    with FakeOpenAIServer() as server:
        settings = ModelSettings(model="openai/bench", api_base=server.base_url)
        gateway = Gateway()

        common = dict(model="openai/bench", api_base=server.base_url, api_key="no-key", messages=MESSAGES,
                      temperature=0.0, timeout=60.0, num_retries=0, max_retries=0)

        async def bare_once() -> None:
            await litellm.acompletion(**common)

        async def gateway_once() -> None:
            await gateway.complete(settings, MESSAGES)

        async def bare_stream() -> None:
            resp = await litellm.acompletion(**common, stream=True, stream_options={"include_usage": True})
            async for _ in resp:
                pass

        async def gateway_stream() -> None:
            async for _ in gateway.stream(settings, MESSAGES):
                pass

        pairs = {
            "one-shot": (("bare litellm.acompletion", bare_once), ("gateway.complete", gateway_once)),
            "streamed": (("bare litellm.acompletion(stream)", bare_stream), ("gateway.stream", gateway_stream)),
        }
        per_round = max(1, calls // rounds)
        times: dict[str, list[float]] = {}
        for (a, fa), (b, fb) in pairs.values():
            for fn in (fa, fb):  # warm both paths
                for _ in range(10):
                    await fn()
            times[a], times[b] = [], []
            for r in range(rounds):
                order = [(a, fa), (b, fb)] if r % 2 == 0 else [(b, fb), (a, fa)]
                for name, fn in order:
                    start = time.perf_counter()
                    for _ in range(per_round):
                        await fn()
                    times[name].append((time.perf_counter() - start) / per_round)
    print(f"calls per path: {per_round * rounds}, zero fake latency, {rounds} interleaved rounds (median of round means)")
    for mode, ((a, _), (b, _)) in pairs.items():
        bare_ms = statistics.median(times[a]) * 1000
        gw_ms = statistics.median(times[b]) * 1000
        print(f"{mode:9} {a:34}: {bare_ms:7.3f} ms/call")
        print(f"{mode:9} {b:34}: {gw_ms:7.3f} ms/call")
        print(f"{mode:9} ratio gateway / bare{'':15}: {gw_ms / bare_ms:.3f}   (target <= 1.10)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
