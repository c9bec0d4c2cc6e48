"""A whole ProactiveEval session on the embedded model, against bare llama-cpp-python on the same tokens.

Run: .venv/bin/python benchmarks/local_session.py [--env ENV_ID] [--threads N] [--compare-cache]

1. Session: proactiveeval/persuasion/fair/0 by default, every seat `local/smollm2`, 6 turns, planning,
   live judging, seed 0 (with the embedded judge early stopping is off, so all 6 turns are played).
   Wall time from the first event to the last, prompt and completion tokens over every model call
   (counted where llama.cpp runs them), tokens/s, peak RSS.
2. Bare: the same model instance (same GGUF, same thread count) given each of the session's prompts,
   in the same order, through llama-cpp-python's own `Llama.generate`, greedy, taking exactly as
   many tokens as the session's call produced: no litellm, gateway, worker thread, grammar, events
   or prompt cache. llama.cpp still reuses the previous call's prefix, as it does for anyone.
3. The ratio session / bare. Target: <= 1.5.

With --compare-cache the session's calls are replayed through llama-cpp-python's create_completion
twice, with the prompt cache (its states in files, see `llm.local.state_cache`) and without, to show
what the cache saves on this call sequence.
Figures before issue 14: the default session took 28.7 s for 4,397 prompt and 448 completion tokens,
653 MB RSS (quiet machine).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import time
from typing import Any

from local_calls import Call, CallLog, generate_like, project_on_path

project_on_path()
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TURNS = 6


async def run_session(env_id: str) -> tuple[float, Any]:
    from proactive_tui.core import registry
    from proactive_tui.core.run_record import fold
    from proactive_tui.core.spec import SessionSpec, build_session
    from proactive_tui.envs import load_default
    from proactive_tui.llm.gateway import Gateway, litellm_module

    litellm_module()  # imported before timing: a person's app has it loaded by then
    env = load_default().get(env_id)
    assert env is not None, env_id
    registry.get(env.family)
    spec = SessionSpec(env_id=env_id, settings={"max_turns": TURNS, "live_judging": True, "seed": 0})
    session = build_session(spec, env, Gateway())
    start = time.perf_counter()
    events = [event async for event in session.events()]
    wall = time.perf_counter() - start
    return wall, fold(events)


def bare(calls: list[Call]) -> float:
    """llama-cpp-python alone on the session's prompts, producing the same number of tokens."""
    from proactive_tui.llm.local import get_llama

    llama = get_llama()
    saved = llama.cache
    llama.set_cache(None)
    llama.reset()
    start = time.perf_counter()
    generate_like(llama, calls)
    elapsed = time.perf_counter() - start
    llama.set_cache(saved)
    return elapsed


def replay(calls: list[Call], cached: bool) -> float:
    """The calls through `create_completion` (which is where llama-cpp-python consults the cache)."""
    from proactive_tui.llm.local import get_llama
    from proactive_tui.llm.local.loader import _prefix_cache

    llama = get_llama()
    saved = llama.cache
    llama.set_cache(_prefix_cache() if cached else None)
    llama.reset()
    start = time.perf_counter()
    for prompt, n in calls:
        llama.create_completion(prompt, max_tokens=max(1, n), temperature=0.0, repeat_penalty=1.0)
    elapsed = time.perf_counter() - start
    llama.set_cache(saved)
    return elapsed


def describe(label: str, wall: float, prompt: int, completion: int) -> str:
    return (f"{label}: {wall:.1f} s for {prompt:,} prompt + {completion:,} completion tokens "
            f"({completion / wall:.1f} completion tok/s, {(prompt + completion) / wall:.0f} tok/s all)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="proactiveeval/persuasion/fair/0")
    parser.add_argument("--threads", type=int, help="set PROACTIVE_TUI_LOCAL_THREADS for this run")
    parser.add_argument("--compare-cache", action="store_true", help="also replay the calls with and without the prompt cache")
    args = parser.parse_args()
    if args.threads:
        os.environ["PROACTIVE_TUI_LOCAL_THREADS"] = str(args.threads)

    from proactive_tui.llm.local import get_llama
    from proactive_tui.llm.local.loader import thread_choice

    load_start = time.perf_counter()
    get_llama()  # loaded once here, so the timed calls below do not include the load
    print(f"model loaded in {time.perf_counter() - load_start:.2f} s; {thread_choice().note()}; "
          f"load average now {os.getloadavg()[0]:.2f}")

    log = CallLog()
    log.install()
    wall, record = asyncio.run(run_session(args.env))
    prompt, completion = log.totals()
    turns = max((m.turn for m in record.messages), default=0)
    guidance = record.section.guidance
    print(f"session {args.env}: {record.termination.reason}, {turns} turns, {len(log.calls)} model calls, "
          f"{len(record.section.live_scores)} live scores, final overall "
          f"{guidance.overall if guidance else None}, plan score {record.section.planning.score}")
    print("  " + describe("session", wall, prompt, completion))
    print(f"  record totals: {record.totals.prompt_tokens:,} prompt + {record.totals.completion_tokens:,} completion tokens")

    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak RSS after the session: {rss_mb:.0f} MB")
    bare_s = bare(log.calls)
    print("  " + describe("bare llama-cpp-python, same prompts and token counts", bare_s, prompt, completion))
    print(f"  ratio session / bare: {wall / bare_s:.2f}   (target <= 1.5)")
    if args.compare_cache:
        # The same calls through llama-cpp-python's create_completion, with and without the cache.
        with_cache = replay(log.calls, cached=True)
        without = replay(log.calls, cached=False)
        print(f"  prompt cache, the session's calls replayed: {with_cache:.1f} s with it, {without:.1f} s without "
              f"({without / with_cache:.2f}x)")

if __name__ == "__main__":
    main()
