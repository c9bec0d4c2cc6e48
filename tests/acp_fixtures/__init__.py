"""What the ACP tests share: the test agent program (`agent.py`, run as a subprocess) and the
config-file entry that seats it as `acp:NAME`, written one way for every test that needs one."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

AGENT = Path(__file__).resolve().parent / "agent.py"


def agent_env() -> dict[str, str]:
    """The SDK must be importable by the agent: the agent gets a trimmed environment (PATH, HOME...)."""
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}


def write_agent_config(home: Path, mode: str = "echo", *flags: str, name: str = "tester",
                       env: dict[str, str] | None = None, **fields: str) -> None:
    """`home/config.toml` with one `[acp_agents.NAME]` entry starting the test agent in `mode`
    (with `flags`); `env` is added to what the agent needs to import the SDK, `fields` are further
    keys of the entry (version, permission...)."""
    env_line = ", ".join(f"{k} = {json.dumps(v)}" for k, v in {**agent_env(), **(env or {})}.items())
    args = ", ".join(json.dumps(a) for a in (str(AGENT), mode, *flags))
    extra = "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items())
    (home / "config.toml").write_text(
        f"[acp_agents.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = [{args}]\n{extra}env = {{ {env_line} }}\n",
        encoding="utf-8")
