"""API keys: the OS keyring or the provider's environment variable, never a plain file.

The UI and `keys list` only ever show where a key comes from (`env`, `keyring` or `none`), never
the key. An environment variable wins over the keyring because it is the more explicit, per-shell
choice. On machines with no working keyring backend (headless Linux) `keys set` says so and points
at the environment variable instead of silently writing a file.
"""

from __future__ import annotations

import contextlib
import os
import time
from types import ModuleType
from typing import Literal

from proactive_tui.redact import PROVIDER_ENV_VARS

SERVICE = "proactive-tui"

# PROVIDER_ENV_VARS (imported above): provider prefix of a litellm model string -> the environment
# variable litellm reads; it lives in `redact`, which masks every one of them.
# Providers that run without any key.
KEYLESS_PROVIDERS = {"local", "ollama", "ollama_chat", "lm_studio", "llamafile", "hosted_vllm", "vllm"}

KeySource = Literal["env", "keyring", "none", "not needed"]


class KeyringUnavailable(RuntimeError):
    """No usable OS keyring backend on this machine."""


_URL_PREFIXES = ("http://", "https://", "http:", "https:", "localhost:", "127.0.0.1:")


def looks_like_url(model: str) -> bool:
    """`http://localhost:8080` typed where a model string belongs (the URL goes in --api-base)."""
    return model.strip().lower().startswith(_URL_PREFIXES)


def url_in_model_message(model: str) -> str:
    """The URL is named as `redact.public_api_base` shows it: one typed with `user:pass@` or a
    `?api_key=` in the model field is still a credential."""
    from proactive_tui.redact import public_api_base

    url = (public_api_base(model.strip()) or model).rstrip("/")
    return (
        f"{url!r} is a URL, not a model string: a server's URL belongs in --api-base (or "
        f"PROACTIVE_TUI_API_BASE / api_base in the config), with the model as e.g. openai/<name>: "
        f"--api-base {url}{'' if url.endswith('/v1') else '/v1'} --agent openai/<name>"
    )


def api_base_problem(api_base: str | None) -> str | None:
    """Why `api_base` cannot be a server's address, or None.

    - Not an http(s) URL with a host (`notaurl`, `ftp://x`, `localhost:8000` without a scheme):
      it used to fail only at the first call, retried as "provider failed (500)".
    - Credentials in the URL (`http://user:secret@host/v1`): the OpenAI-compatible client always
      sends its key (or the placeholder for keyless servers) in the Authorization header, and httpx
      refuses to add URL credentials on top ("Cannot combine AUTHORIZATION header with ...
      credentials encoded in URL"); that surfaced as a server error retried five times.

    Said once, before any call. The value is shown through `public_api_base`, so user info or a
    query holding a key never is."""
    if api_base is None or not api_base.strip():
        return None
    from urllib.parse import urlsplit

    from proactive_tui.redact import public_api_base

    value = api_base.strip()
    shown = public_api_base(value) or ""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return f"api base {shown!r} is not a URL (its port is not a number); e.g. http://localhost:8000/v1"
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        if not parts.hostname:
            return f"api base {shown!r} names no host; e.g. http://localhost:8000/v1"
        if parts.username is None and parts.password is None:
            return None
        return (f"the API base {shown} has credentials in it (user:password@ before the host), "
                "which cannot be sent: the client sends the key in the Authorization header, and URL credentials "
                f"cannot be combined with it. Remove them from the URL and give the key as {env_var_for('openai')} "
                "or `proactive-tui keys set openai`")
    if "://" in value:
        return f"api base {shown!r} is not an http(s) URL ({scheme}://); e.g. http://localhost:8000/v1"
    host_like = "." in value or ":" in value or value.lower().startswith("localhost")
    hint = f"; did you mean http://{shown.rstrip('/')}?" if host_like else "; e.g. http://localhost:8000/v1"
    return f"api base {shown!r} is not a URL: it needs http:// or https:// and a host{hint}"


API_BASE_ENV_VARS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "anthropic": ("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"),
}
"""The variables litellm reads a provider's api base from when none is given, in its order
(litellm/main.py: `api_base or ... get_secret("OPENAI_BASE_URL") or get_secret("OPENAI_API_BASE")`);
any other provider reads `<PROVIDER>_API_BASE`."""


def env_api_base(provider: str) -> tuple[str, str] | None:
    """(variable, value) of the api base litellm will use for `provider` when the seat sets
    none, or None."""
    for name in API_BASE_ENV_VARS.get(provider, (f"{provider.upper()}_API_BASE",)):
        value = os.environ.get(name, "")
        if value.strip():
            return name, value
    return None


def seat_base_problem(model: str, api_base: str | None) -> str | None:
    """`api_base_problem` of the base a call to `model` will really go to: the seat's own, else
    the one litellm reads from the provider's environment variable (`OPENAI_API_BASE` with
    `user:pass@` used to go unchecked and come back as a 500 retried five times). A problem of
    a variable's value names the variable."""
    if api_base is not None and api_base.strip():
        return api_base_problem(api_base)
    provider = provider_of(model)
    if provider in KEYLESS_PROVIDERS:
        return None
    found = env_api_base(provider)
    if found is None:
        return None
    name, value = found
    problem = api_base_problem(value)
    return f"{name}: {problem}" if problem else None


def known_providers() -> set[str]:
    """Every provider prefix litellm routes (and our own `local`). Imports litellm (the gateway has
    it loaded by the time a call is built)."""
    from proactive_tui.llm.gateway import litellm_module

    litellm = litellm_module()
    names = {getattr(p, "value", p) for p in getattr(litellm, "provider_list", [])}
    names.update(item.get("provider") for item in (getattr(litellm, "custom_provider_map", None) or [])
                 if isinstance(item, dict))
    names.update(KEYLESS_PROVIDERS)
    return {str(n) for n in names if n}


def model_problem(model: str) -> str | None:
    """What is wrong with a model string before any key is looked up, or None: a URL in the model
    field, or a provider litellm does not know (`foo/bar` is "unknown provider foo", never "no API
    key for provider foo")."""
    if not model.strip():
        return "no model given: use a litellm model string, e.g. openai/gpt-4.1 or local/smollm2"
    if looks_like_url(model):
        return url_in_model_message(model)
    if "/" in model:
        provider = provider_of(model)
        # The keyless providers (the embedded `local` among them) are known without asking litellm:
        # checking a local-only session's seats must not import it (~200 MB, ~4 s; issue 35).
        if provider not in KEYLESS_PROVIDERS and provider not in known_providers():
            return (
                f"unknown provider {provider} in model {model!r}: use a litellm provider prefix, e.g. "
                "openai/gpt-4.1, anthropic/claude-sonnet-4-5, ollama/qwen2.5 or local/smollm2 "
                "(for a self-hosted OpenAI-compatible server: openai/<name> with --api-base)"
            )
    return None


def provider_of(model: str) -> str:
    """`anthropic/claude-x` -> `anthropic`; bare names like `gpt-4.1` are OpenAI's."""
    if "/" in model:
        return model.split("/", 1)[0]
    if model.startswith(("claude",)):
        return "anthropic"
    if model.startswith(("gemini",)):
        return "gemini"
    return "openai"


def env_var_for(provider: str) -> str:
    return PROVIDER_ENV_VARS.get(provider, f"{provider.upper()}_API_KEY")


def _keyring() -> ModuleType:
    """The keyring backend, or raise KeyringUnavailable when only the fail backend exists."""
    try:
        import keyring
        from keyring.backends import fail
    except Exception as exc:  # pragma: no cover - keyring is a hard dependency
        raise KeyringUnavailable(f"keyring cannot be imported: {exc}") from None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or type(backend).__name__ == "Keyring" and "fail" in type(backend).__module__:
        raise KeyringUnavailable(
            "no OS keyring backend is available on this machine (keyring found only its 'fail' backend)"
        )
    return keyring


def preload_for_fork() -> None:
    """Import the keyring and its backends' modules here, before worker processes are forked
    (`gateway.warm_up_for_fork`), so each worker's first key read does not import and scan them
    again on its own. No backend is chosen and no key read: choosing one asks each backend
    whether it works, and a backend may open a connection (D-Bus) that a fork must not share.
    A plugin's own set-up function is left to the keyring, in the worker, as ever."""
    try:
        import keyring  # noqa: F401
        from keyring.compat.py312 import metadata  # the entry points the keyring itself reads

        for entry in metadata.entry_points(group="keyring.backends"):
            with contextlib.suppress(Exception):
                entry.load()
    except Exception:  # pragma: no cover - keyring is a hard dependency; the workers read it themselves
        return


def keyring_available() -> bool:
    try:
        _keyring()
        return True
    except KeyringUnavailable:
        return False


KEY_REUSE_S = 30.0
"""How long `get_key` reuses what the keyring said for a provider (its key, or that it has none)
before asking it again."""
_read: dict[str, tuple[float, str | None]] = {}
"""provider -> (when it was read, monotonic; what the keyring said), this process's reads."""


def _from_keyring(provider: str, fresh: bool = False) -> str | None:
    """The keyring's key for `provider`. Each key read is handed to the redactor at once: a
    provider may echo it in an error, and only an exact-value match can mask a key of any shape.

    Why reused: `get_key` runs on every model call, and on a desktop each keyring read is a
    D-Bus round trip to the Secret Service or KWallet, made on the event loop every session of
    the process shares. So what the keyring said (a key, none, or an error) is reused for
    `KEY_REUSE_S`; `keys set` and `keys delete` in this process take effect at once, and one
    made in another terminal within that time. `fresh` asks the keyring now (`key_source`,
    which the setup screen shows)."""
    now = time.monotonic()
    if not fresh and (seen := _read.get(provider)) is not None and now - seen[0] < KEY_REUSE_S:
        return seen[1]
    value: str | None
    try:
        value = _keyring().get_password(SERVICE, provider)
    except Exception:
        value = None
    _read[provider] = (now, value)
    if value:
        from proactive_tui.redact import remember_secret

        remember_secret(value)
    return value


def key_source(provider: str, api_base: str | None = None) -> KeySource:
    if provider in KEYLESS_PROVIDERS:
        return "not needed"
    if os.environ.get(env_var_for(provider)):
        return "env"
    if _from_keyring(provider, fresh=True):
        return "keyring"
    return "not needed" if api_base else "none"


def get_key(provider: str) -> str | None:
    """The key to hand to litellm for this provider, or None."""
    if provider in KEYLESS_PROVIDERS:
        return None
    return os.environ.get(env_var_for(provider)) or _from_keyring(provider)


def set_key(provider: str, value: str) -> None:
    from proactive_tui.redact import remember_secret

    remember_secret(value)  # known to the redactor from the moment this process holds it
    _read.pop(provider, None)
    _keyring().set_password(SERVICE, provider, value)


def delete_key(provider: str) -> bool:
    """Remove a stored key; False when there was none."""
    kr = _keyring()
    _read.pop(provider, None)
    try:
        kr.delete_password(SERVICE, provider)
        return True
    except Exception:
        return False


def missing_key_message(provider: str) -> str:
    return (
        f"no API key for provider {provider}: set {env_var_for(provider)} or run "
        f"`proactive-tui keys set {provider}`"
    )
