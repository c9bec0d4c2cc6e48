"""`proactive-tui keys set|list|delete`: manage provider keys without ever printing one."""

from __future__ import annotations

import argparse
import getpass
import sys

from proactive_tui.llm import keys
from proactive_tui.textsafe import say


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("keys", help="store, list or delete provider API keys (OS keyring)")
    sub = p.add_subparsers(title="keys commands", metavar="ACTION", required=True)
    s = sub.add_parser("set", help="store a key in the OS keyring (prompted, not echoed)")
    s.add_argument("provider", help="litellm provider prefix, e.g. openai, anthropic")
    s.set_defaults(func=run_set)
    l = sub.add_parser("list", help="where each provider's key comes from (never the key)")
    l.set_defaults(func=run_list)
    d = sub.add_parser("delete", help="remove a key from the OS keyring")
    d.add_argument("provider")
    d.set_defaults(func=run_delete)


def _no_keyring(provider: str, exc: keys.KeyringUnavailable) -> int:
    say(
        f"{exc}.\nNothing was stored. Set the key in your environment instead: "
        f"export {keys.env_var_for(provider)}=...",
        file=sys.stderr,
    )
    return 1


def run_set(args: argparse.Namespace) -> int:
    provider = args.provider.strip().lower()
    try:
        keys._keyring()
    except keys.KeyringUnavailable as exc:
        return _no_keyring(provider, exc)
    value = getpass.getpass(f"API key for {provider} (input hidden): ").strip()
    if not value:
        say("empty key: nothing stored", file=sys.stderr)
        return 1
    try:
        keys.set_key(provider, value)
    except keys.KeyringUnavailable as exc:
        return _no_keyring(provider, exc)
    except Exception as exc:
        say(f"the keyring refused the key: {type(exc).__name__}", file=sys.stderr)
        return 1
    say(f"stored the key for {provider} in the OS keyring")
    return 0


def run_list(args: argparse.Namespace) -> int:
    if not keys.keyring_available():
        say("note: no OS keyring backend here; keys come from environment variables only", file=sys.stderr)
    say(f"{'provider':<14} {'source':<10} variable")
    for provider, var in sorted(keys.PROVIDER_ENV_VARS.items()):
        say(f"{provider:<14} {keys.key_source(provider):<10} {var}")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    provider = args.provider.strip().lower()
    try:
        removed = keys.delete_key(provider)
    except keys.KeyringUnavailable as exc:
        say(f"{exc}; nothing to delete", file=sys.stderr)
        return 1
    say(f"deleted the key for {provider}" if removed else f"no stored key for {provider}")
    return 0 if removed else 1
