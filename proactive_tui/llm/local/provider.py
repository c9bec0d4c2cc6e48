"""The litellm custom provider `local`: litellm's parameters in, the worker's replies out.

`register()` makes `litellm.acompletion(model="local/smollm2", ...)` (streaming included) answer
through the embedded model. Light import: litellm (~4 s) is imported only when the handler class is
built by `local_llm_class()` / `make_handler()` on first use; `LocalLLM` is still importable by name
through a lazy module attribute.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from proactive_tui.llm.local.grammar import _response_schema
from proactive_tui.llm.local.loader import LOCAL_MODEL, LOCAL_PROVIDER, N_CTX
from proactive_tui.llm.local.worker import _Request, acomplete, astream, complete, stream

# Short by default: the model rambles, and ~50 tok/s on 2 cores means 160 tokens is ~3 s.
DEFAULT_MAX_TOKENS = 160
# Structured replies need room to close every string, bracket and brace.
DEFAULT_STRUCTURED_MAX_TOKENS = 384
MAX_TOKENS_CAP = 512
# Without a repeat penalty the 135M model loops on a phrase. Under a JSON grammar 1.3 also punishes
# the quotes, commas and keys the grammar requires and the text inside the strings turns to noise
# (measured: `"reasoning": "]["`), so structured calls use a milder penalty for their prose (1.0
# loops: "The user's goal is ... The user's goal is ..."). Scores are not decided under it: the
# worker chooses each bounded integer field afterwards, on its own and with no penalty.
REPEAT_PENALTY = 1.3
STRUCTURED_REPEAT_PENALTY = 1.1

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------
# Requests: litellm's optional_params -> llama.cpp arguments
# --------------------------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    """OpenAI content may be a list of parts; the chat template wants one string."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                    parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return str(content)


def _normalise_messages(messages: list[Any]) -> list[dict[str, str]]:
    out = []
    for message in messages:
        if not isinstance(message, dict):  # pydantic message objects
            message = message.model_dump() if hasattr(message, "model_dump") else dict(message)
        out.append({"role": str(message.get("role") or "user"), "content": _text_of(message.get("content"))})
    return out


def build_request(messages: list[Any], optional_params: dict[str, Any] | None) -> _Request:
    """Map what litellm hands a custom provider onto llama.cpp's `create_chat_completion`.

    litellm passes the OpenAI parameters it was given (temperature, top_p, stop, seed, max_tokens,
    response_format, stream...) unchanged in `optional_params`; unknown ones are ignored here.
    """
    params = dict(optional_params or {})
    schema, json_object = _response_schema(params.get("response_format"))
    structured = schema is not None or json_object

    max_tokens = params.get("max_tokens") or params.get("max_completion_tokens")
    if not max_tokens:
        max_tokens = DEFAULT_STRUCTURED_MAX_TOKENS if structured else DEFAULT_MAX_TOKENS
    max_tokens = max(1, min(int(max_tokens), MAX_TOKENS_CAP))

    temperature = params.get("temperature")
    kwargs: dict[str, Any] = {
        "temperature": 0.0 if temperature is None else float(temperature),
        "max_tokens": max_tokens,
        "repeat_penalty": float(
            params.get("repeat_penalty") or (STRUCTURED_REPEAT_PENALTY if structured else REPEAT_PENALTY)
        ),
    }
    if params.get("top_p") is not None:
        kwargs["top_p"] = float(params["top_p"])
    for name in ("top_k", "min_p", "presence_penalty", "frequency_penalty"):
        if params.get(name) is not None:
            kwargs[name] = params[name]
    stop = params.get("stop")
    if stop:
        kwargs["stop"] = [stop] if isinstance(stop, str) else list(stop)
    if params.get("seed") is not None:
        kwargs["seed"] = int(params["seed"])
    return _Request(_normalise_messages(messages), kwargs, schema=schema, json_object=json_object)


# --------------------------------------------------------------------------------------------
# litellm integration
# --------------------------------------------------------------------------------------------

_HANDLER_CLASS: type | None = None


def _model_response(model_response: Any, text: str, finish_reason: str, usage: dict[str, Any]) -> Any:
    import litellm

    model_response.choices[0].message.content = text
    model_response.choices[0].finish_reason = finish_reason
    model_response.created = int(time.time())
    model_response.model = LOCAL_MODEL
    model_response.usage = litellm.Usage(**usage)
    return model_response


def local_llm_class() -> type:
    """The `litellm.CustomLLM` subclass, built on first call so importing this module stays light."""
    global _HANDLER_CLASS
    if _HANDLER_CLASS is not None:
        return _HANDLER_CLASS
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from litellm.llms.custom_llm import CustomLLM  # what `litellm.CustomLLM` names

    class LocalLLM(CustomLLM):
        """litellm handler for `local/<anything>`: the embedded SmolLM2 via llama.cpp.

        Signatures match litellm 1.110's `CustomLLM`; litellm calls these with keywords only. Left
        unannotated (one `type: ignore` each): their parameters are litellm's, as loose as its own.
        """

        def completion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,  # type: ignore[no-untyped-def]
                       encoding, api_key, logging_obj, optional_params, acompletion=None, litellm_params=None,
                       logger_fn=None, headers={}, timeout=None, client=None):  # noqa: B006 - litellm's signature
            text, finish_reason, usage = complete(build_request(messages, optional_params))
            return _model_response(model_response, text, finish_reason, usage)

        def streaming(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,  # type: ignore[no-untyped-def]
                      encoding, api_key, logging_obj, optional_params, acompletion=None, litellm_params=None,
                      logger_fn=None, headers={}, timeout=None, client=None):  # noqa: B006
            return stream(build_request(messages, optional_params))

        async def acompletion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,  # type: ignore[no-untyped-def]
                              encoding, api_key, logging_obj, optional_params, acompletion=None,
                              litellm_params=None, logger_fn=None, headers={}, timeout=None,  # noqa: B006 (litellm's signature)
                              client=None):
            text, finish_reason, usage = await acomplete(build_request(messages, optional_params))
            return _model_response(model_response, text, finish_reason, usage)

        async def astreaming(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,  # type: ignore[no-untyped-def]
                             encoding, api_key, logging_obj, optional_params, acompletion=None,
                             litellm_params=None, logger_fn=None, headers={}, timeout=None,  # noqa: B006 (litellm's signature)
                             client=None):
            # An async generator, not a coroutine: litellm wraps the returned object in a
            # CustomStreamWrapper and iterates it on the event loop; aclose() reaches our finally.
            async for chunk in astream(build_request(messages, optional_params)):
                yield chunk

    _HANDLER_CLASS = LocalLLM
    return LocalLLM


def make_handler() -> Any:
    """A new `LocalLLM` instance (imports litellm)."""
    return local_llm_class()()


def register(litellm_module: Any = None) -> Any:
    """Make `model="local/smollm2"` answer through the embedded model; returns the handler.

    Idempotent and keeps other providers' entries. Safe before the first `litellm.acompletion`:
    litellm runs `custom_llm_setup()` on every call, we run it too so `provider_list` already knows
    `local`. The model is also registered at zero cost so litellm's cost tracking stays quiet.
    Loading the weights is left to `preload()` or the first call.
    """
    if litellm_module is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm as litellm_module

    handler_class = local_llm_class()
    entries = list(getattr(litellm_module, "custom_provider_map", None) or [])
    handler = next(
        (
            e["custom_handler"]
            for e in entries
            if e.get("provider") == LOCAL_PROVIDER and isinstance(e.get("custom_handler"), handler_class)
        ),
        None,
    )
    if handler is None:
        handler = handler_class()
        entries = [e for e in entries if e.get("provider") != LOCAL_PROVIDER]
        entries.append({"provider": LOCAL_PROVIDER, "custom_handler": handler})
        litellm_module.custom_provider_map = entries

    setup = getattr(getattr(litellm_module, "utils", None), "custom_llm_setup", None)
    if callable(setup):
        setup()
    register_model = getattr(litellm_module, "register_model", None)
    if callable(register_model):
        try:
            register_model(
                {
                    LOCAL_MODEL: {
                        "max_tokens": MAX_TOKENS_CAP,
                        "max_input_tokens": N_CTX,
                        "max_output_tokens": MAX_TOKENS_CAP,
                        "input_cost_per_token": 0.0,
                        "output_cost_per_token": 0.0,
                        # Named explicitly, or litellm warns on stderr that they default to 0.
                        "cache_creation_input_token_cost": 0.0,
                        "cache_read_input_token_cost": 0.0,
                        "litellm_provider": LOCAL_PROVIDER,
                        "mode": "chat",
                        "supports_response_schema": True,
                    }
                }
            )
        except Exception as exc:  # noqa: BLE001 - cost info is a nicety, the provider works without it
            log.debug("could not register %s model info: %s", LOCAL_MODEL, exc)
    return handler


def __getattr__(name: str) -> Any:
    """`from proactive_tui.llm.local.provider import LocalLLM` works, importing litellm only then."""
    if name == "LocalLLM":
        return local_llm_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
