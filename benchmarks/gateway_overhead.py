"""Gateway CPU per call vs a bare `litellm.acompletion`, both against the fake server at zero latency.

Run: PYTHONPATH=. .venv/bin/python benchmarks/gateway_overhead.py [--calls 400] [--rounds 10]

What is measured is this process's CPU time per call (`time.process_time`), not wall time: the
fake server runs in a child process, so its CPU is not counted, and what is left is litellm's own
work plus ours. The same call is made bare and through the gateway, one-shot and streamed, in two
shapes:

- `self-hosted`: `openai/bench` with an api base (the cost path is skipped: no price for a server);
- `hosted`: `openai/bench-unpriced` with no api base, litellm pointed at the fake server by
  `OPENAI_API_BASE`, so the gateway's cost lookup runs for a model litellm has no price for (the
  case that used to call litellm's cost calculator and model-info lookups on every call).

Paths are interleaved in rounds so machine load hits both alike; the median of the round means is
printed per path, then the difference gateway - bare, with the target: <= 2 ms of our own per call
on top of litellm's minimum (the bare call).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
TARGET_MS = 2.0
MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say something short."}]
SERVER = ("import sys; from proactive_tui.testing.fake_openai import FakeOpenAIServer\n"
          "with FakeOpenAIServer() as s:\n    print(s.base_url, flush=True); sys.stdin.read()\n")


def start_server() -> tuple[subprocess.Popen, str]:
    """The fake server in its own process, so its CPU is not this process's."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


async def main(calls: int, rounds: int) -> None:
    proc, base_url = start_server()
    os.environ["OPENAI_API_BASE"] = base_url  # the `hosted` shape: no api base in the settings
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    from proactive_tui.llm.gateway import Gateway, litellm_module
    from proactive_tui.llm.settings import ModelSettings

    litellm = litellm_module()
    gateway = Gateway()
    shapes = {
        "self-hosted": (ModelSettings(model="openai/bench", api_base=base_url),
                        dict(model="openai/bench", api_base=base_url, api_key="no-key")),
        "hosted": (ModelSettings(model="openai/bench-unpriced"),
                   dict(model="openai/bench-unpriced", api_key=os.environ["OPENAI_API_KEY"])),
    }
    paths = {}
    for shape, (settings, target) in shapes.items():
        common = dict(**target, messages=MESSAGES, temperature=0.0, timeout=60.0, num_retries=0, max_retries=0,
                      max_tokens=settings.token_cap())

        async def bare_once(common=common) -> None:
            await litellm.acompletion(**common)

        async def gateway_once(settings=settings) -> None:
            await gateway.complete(settings, MESSAGES)

        async def bare_stream(common=common) -> None:
            resp = await litellm.acompletion(**common, stream=True, stream_options={"include_usage": True})
            async for _ in resp:
                pass

        async def gateway_stream(settings=settings) -> None:
            async for _ in gateway.stream(settings, MESSAGES):
                pass

        paths[f"{shape} one-shot"] = (bare_once, gateway_once)
        paths[f"{shape} streamed"] = (bare_stream, gateway_stream)
    try:
        per_round = max(1, calls // rounds)
        cpu: dict[tuple[str, int], list[float]] = {}
        for name, fns in paths.items():
            for fn in fns:  # warm both paths
                for _ in range(10):
                    await fn()
            for r in range(rounds):
                order = [0, 1] if r % 2 == 0 else [1, 0]
                for i in order:
                    start = time.process_time()
                    for _ in range(per_round):
                        await fns[i]()
                    cpu.setdefault((name, i), []).append((time.process_time() - start) / per_round * 1000)
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=10)
    print(f"CPU per call of this process (the fake server is another process), {per_round * rounds} calls per path, "
          f"{rounds} interleaved rounds, median of round means")
    print(f"{'path':<22}{'bare litellm (ms)':>18}{'gateway (ms)':>14}{'difference (ms)':>17}")
    worst = 0.0
    for name in paths:
        bare, ours = statistics.median(cpu[(name, 0)]), statistics.median(cpu[(name, 1)])
        worst = max(worst, ours - bare)
        print(f"{name:<22}{bare:>18.3f}{ours:>14.3f}{ours - bare:>17.3f}")
    verdict = "OK" if worst <= TARGET_MS else "OVER"
    print(f"difference gateway - bare, worst path: {worst:.3f} ms  (target <= {TARGET_MS:g} ms: {verdict})")
    with open("/proc/loadavg") as f:
        print(f"load average at the end: {f.read().split()[0]} (on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
