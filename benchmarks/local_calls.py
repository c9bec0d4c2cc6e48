"""What the embedded-model benchmarks share (`local_session.py`, `local_memory.py`): the project on
the import path, the recorder of every generation the embedded model's worker runs, and the bare
llama-cpp-python replay of the recorded calls they compare the project with.

Imports nothing from the project at module level: `local_memory.py`'s bare child uses the replay
with llama-cpp-python alone, and its peak memory must not include the project's.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

Call = tuple[list[int], int]
"""One generation: the prompt tokens llama.cpp evaluated, and how many tokens it produced."""


def project_on_path() -> None:
    """The checkout's package first on the import path (the benchmarks run as plain scripts)."""
    if str(ROOT) not in sys.path:
        sys.path[:0] = [str(ROOT)]


class CallLog:
    """Every generation the worker runs (`Call`s, in order). Wraps `worker._generate`, the one
    place every call of the embedded model goes through, so what is recorded is what llama.cpp
    was given, whichever seat or prompt cache asked."""

    def __init__(self) -> None:
        self.calls: list[Call] = []

    def install(self) -> None:
        from proactive_tui.llm.local import worker

        original = worker._generate
        log = self

        def logged(request: Any, emit: Any) -> None:
            final: dict = {}

            def capture(chunk: dict) -> None:
                if chunk.get("is_finished"):
                    final.update(chunk.get("usage") or {})
                emit(chunk)

            original(request, capture)
            if final:
                llama = worker.get_llama()
                prompt = [int(t) for t in llama.input_ids[: final["prompt_tokens"]]]
                log.calls.append((prompt, int(final["completion_tokens"])))

        worker._generate = logged

    def totals(self, since: int = 0) -> tuple[int, int]:
        """(prompt tokens, completion tokens) over the calls from `since` on."""
        calls = self.calls[since:]
        return sum(len(p) for p, _ in calls), sum(n for _, n in calls)

    def to_json(self) -> list[dict[str, Any]]:
        return [{"prompt": prompt, "completion_tokens": n} for prompt, n in self.calls]


def calls_from_json(rows: list[dict[str, Any]]) -> list[Call]:
    return [(row["prompt"], int(row["completion_tokens"])) for row in rows]


def generate_like(llama: Any, calls: list[Call]) -> None:
    """The calls through llama-cpp-python's own `Llama.generate`, greedy, each taking as many
    tokens as the recorded call produced (a call that produced nothing still evaluated its prompt:
    one token here). No grammar, no prompt cache; llama.cpp reuses the previous call's prefix, as
    it does for anyone."""
    for prompt, n in calls:
        produced = 0
        for _ in llama.generate(prompt, temp=0.0, top_k=1, repeat_penalty=1.0):
            produced += 1
            if produced >= max(1, n):
                break
