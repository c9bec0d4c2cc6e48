"""The embedded model's prompt cache, with its saved contexts in files instead of process memory.

Why a cache: one llama.cpp context serves every seat in turn (agent, user, judge), so llama.cpp's
own prefix reuse (the previous call's tokens) almost never hits: the agent's turn-3 prompt shares
its system prompt and first turns with the agent's turn-2 prompt, not with the judge call that ran
in between. After each call the context is saved; before a call the saved one sharing the longest
prefix with the prompt is restored, when it shares more than the live context does.

Why files: llama-cpp-python's `LlamaRAMCache` keeps each saved context as Python bytes, made by
`Llama.save_state` through three full copies (a buffer of the state's size, a compacted copy, then
`bytes`) and a fourth on restore, and it saves before it evicts. A session's states are ~23 KB of
KV per token (a 1,400-token judge prompt is ~30 MB), so the cache plus those transient copies were
~180 MB of a one-turn embedded session's peak RSS, and more in longer sessions, the cache filling
toward its budget (issue 35, point 5). Here llama.cpp writes the context
straight to a file (`llama_state_save_file`, one layer's rows at a time through a small buffer)
and reads it straight back (`llama_state_load_file`): the process holds no copy. The files live in
a private temporary folder removed when the cache is collected or the process exits; the kernel
keeps recently written ones in its page cache (reclaimable, not this process's memory), so a
restore costs about a memory copy. The budget is kept by evicting the least recently used states
*before* a new one is written, so the folder never holds more than `capacity_bytes`, even while
a state is being written (but for a single state larger than the whole budget, kept alone).

The Python side of a state (its tokens, the last logits row, the seed) is small and stays in memory,
as `LlamaState`'s does.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import shutil
import tempfile
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_FOLDER_PREFIX = "proactive-tui-kv-"
_FILE_HEADER_BYTES = 64
"""More than llama.cpp's session-file header (magic, version, token count)."""


def _remove(folder: str, owner: int) -> None:
    """Delete a cache's folder, in the process that made it only: a forked child that inherits the
    cache (a worker process) must not delete its parent's states when it exits."""
    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class FileState:
    """One saved context: where llama.cpp wrote it and what Python needs to resume from it.

    Answers the attributes llama-cpp-python reads on a cache hit (`input_ids`, `n_tokens`)."""

    path: Path
    input_ids: Any
    """The context's tokens (a numpy copy of `Llama.input_ids[:n_tokens]`)."""
    n_tokens: int
    scores: Any
    """The last logits row (the only one kept without `logits_all`; see `loader._drop_unused_logits`)."""
    seed: int
    llama_state_size: int
    """Bytes on disk; what the cache's budget counts."""


class FilePromptCache:
    """A longest-prefix prompt cache over `FileState`s (llama-cpp-python's cache interface:
    `cache[tokens]` for the longest-prefix match, `tokens in cache`, `cache[tokens] = state`).

    `save(llama)` and `load(llama, state)` are what `loader.CachedLlama.save_state` and
    `load_state` call; they replace llama-cpp-python's copying ones.
    """

    def __init__(self, capacity_bytes: int, folder: str | os.PathLike[str] | None = None) -> None:
        self.capacity_bytes = capacity_bytes
        self.folder = Path(tempfile.mkdtemp(prefix=_FOLDER_PREFIX, dir=folder))
        self.cache_state: OrderedDict[tuple[int, ...], FileState] = OrderedDict()
        self._names = itertools.count()
        self.evictions = 0
        """How many states were dropped to stay within the budget (tests and benchmarks read it)."""
        self._cleanup = weakref.finalize(self, _remove, str(self.folder), os.getpid())

    # -- the budget ------------------------------------------------------------------------

    @property
    def cache_size(self) -> int:
        return sum(state.llama_state_size for state in self.cache_state.values())

    def _drop(self, key: tuple[int, ...]) -> None:
        state = self.cache_state.pop(key)
        try:
            state.path.unlink()
        except FileNotFoundError:
            pass

    def make_room(self, size: int) -> None:
        """Evict least recently used states until `size` more bytes fit the budget (before the
        new state is written, so the budget is never exceeded, even for a moment)."""
        while self.cache_state and self.cache_size + size > self.capacity_bytes:
            self._drop(next(iter(self.cache_state)))
            self.evictions += 1

    # -- llama-cpp-python's cache interface --------------------------------------------------

    def _find_longest_prefix_key(self, key: tuple[int, ...]) -> tuple[int, ...] | None:
        from llama_cpp import Llama

        best_len, best = 0, None
        for candidate in self.cache_state:
            common = Llama.longest_token_prefix(candidate, key)
            if common > best_len:
                best_len, best = common, candidate
        return best

    def __getitem__(self, key: Any) -> FileState:
        found = self._find_longest_prefix_key(tuple(key))
        if found is None:
            raise KeyError("Key not found")
        self.cache_state.move_to_end(found)
        return self.cache_state[found]

    def __contains__(self, key: Any) -> bool:
        return self._find_longest_prefix_key(tuple(key)) is not None

    def __setitem__(self, key: Any, value: FileState) -> None:
        key = tuple(key)
        if key in self.cache_state:
            old = self.cache_state.pop(key)
            if old.path != value.path:
                old.path.unlink(missing_ok=True)
        self.cache_state[key] = value
        # `save` made room for it already; a state made elsewhere (or larger than estimated)
        # still leaves the cache within budget, the newest state kept.
        while len(self.cache_state) > 1 and self.cache_size > self.capacity_bytes:
            self._drop(next(iter(self.cache_state)))
            self.evictions += 1

    def __len__(self) -> int:
        return len(self.cache_state)

    def __bool__(self) -> bool:
        # llama-cpp-python tests `if self.cache:`; an empty cache must still be consulted and filled.
        return True

    # -- saving and restoring a context ------------------------------------------------------

    def save(self, llama: Any) -> FileState:
        """Write `llama`'s context to a new file, after evicting what it would push over budget."""
        import llama_cpp

        ctx = llama._ctx.ctx
        n_tokens = int(llama.n_tokens)
        # The file is the state plus a small header and the tokens (4 bytes each).
        self.make_room(int(llama_cpp.llama_state_get_size(ctx)) + 4 * n_tokens + _FILE_HEADER_BYTES)
        tokens = (llama_cpp.llama_token * max(1, n_tokens))(*llama.input_ids[:n_tokens].tolist())
        path = self.folder / f"{next(self._names)}.state"
        if not llama_cpp.llama_state_save_file(ctx, str(path).encode(), tokens, n_tokens):
            path.unlink(missing_ok=True)
            raise RuntimeError(f"llama.cpp could not save its context to {path}")
        return FileState(
            path=path, input_ids=llama.input_ids[:n_tokens].copy(), n_tokens=n_tokens,
            scores=llama._scores[-1:, :].copy() if n_tokens else llama.scores[:0, :].copy(),
            seed=llama._seed, llama_state_size=path.stat().st_size,
        )

    @staticmethod
    def load(llama: Any, state: FileState) -> None:
        """Restore a saved context into `llama` as `Llama.load_state` would, read from its file."""
        import llama_cpp

        tokens = (llama_cpp.llama_token * llama.n_ctx())()
        count = ctypes.c_size_t(0)
        if not llama_cpp.llama_state_load_file(llama._ctx.ctx, str(state.path).encode(), tokens, llama.n_ctx(),
                                               ctypes.byref(count)):
            raise RuntimeError(f"llama.cpp could not restore its context from {state.path}")
        if count.value != state.n_tokens:
            raise RuntimeError(f"{state.path} holds {count.value} tokens, the cache expected {state.n_tokens}")
        if state.n_tokens:
            llama.scores[: state.n_tokens, :] = state.scores
        rest = llama.scores[state.n_tokens:, :]
        if rest.size:
            rest[rest > 0] = 0.0
        llama.input_ids[: state.n_tokens] = state.input_ids
        llama.n_tokens = state.n_tokens
        llama._requires_eval = True
        llama._seed = state.seed

    def close(self) -> None:
        """Delete every saved state and the folder (also done when the cache is collected)."""
        self.cache_state.clear()
        self._cleanup()
