"""Gateway overhead vs a bare `litellm.acompletion`, both against the fake server at zero latency.

Run: .venv/bin/python benchmarks/gateway_overhead.py [--calls 300]
Prints mean time per call for each path (interleaved in rounds so drift hits both alike) and the
ratio gateway / bare. Target: <= 1.10.
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

        async def bare_consumed() -> None:
            resp = await litellm.acompletion(
                model="openai/bench", api_base=server.base_url, api_key="no-key", messages=MESSAGES,
                temperature=0.0, timeout=60.0, num_retries=0, max_retries=0, stream=True,
                stream_options={"include_usage": True},
            )
            async for _ in resp:
                pass

        async def via_gateway() -> None:
            await gateway.complete(settings, MESSAGES)

        for fn in (bare_consumed, via_gateway):  # warm both paths
            for _ in range(10):
                await fn()
        per_round = max(1, calls // rounds)
        times: dict[str, list[float]] = {"bare litellm.acompletion": [], "gateway.complete": []}
        for r in range(rounds):
            order = [("bare litellm.acompletion", bare_consumed), ("gateway.complete", via_gateway)]
            if r % 2:
                order.reverse()
            for name, fn in order:
                start = time.perf_counter()
                for _ in range(per_round):
                    await fn()
                times[name].append((time.perf_counter() - start) / per_round)
    bare_ms = statistics.median(times["bare litellm.acompletion"]) * 1000
    gw_ms = statistics.median(times["gateway.complete"]) * 1000
    print(f"calls per path: {per_round * rounds} (streamed, zero fake latency), {rounds} interleaved rounds")
    print(f"bare litellm.acompletion : {bare_ms:7.3f} ms/call (median of round means)")
    print(f"gateway.complete         : {gw_ms:7.3f} ms/call")
    print(f"ratio gateway / bare     : {gw_ms / bare_ms:.3f}   (target <= 1.10)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
