"""Builds the session behind the session screen, off the UI thread where it is slow.

The model layer (litellm) is imported in a thread if the start-up preload has not finished, so
the screen never freezes for the ~4 s import.
"""

from __future__ import annotations

import asyncio
from typing import Any

from proactive_tui.core.spec import SessionSpec, build_seats, build_session


async def start_session(spec: SessionSpec, env: Any, resume_from: Any = None, fork: Any = None,
                        branch: Any = None, rerun: Any = None) -> tuple[Any, dict[str, Any]]:
    """`resume_from`: a RunRecord whose complete turns the session continues (history screen),
    `branch` when it is a branch; `fork`: a `core.fork.ForkPlan`, a new branch of a stored session;
    `rerun`: a `core.rerun.RerunPlan`, a stored session again against a new agent."""
    from proactive_tui.llm import gateway as gateway_module
    from proactive_tui.ui import preload

    preload.hurry()  # a preload still giving way to keys now runs at full speed
    await asyncio.to_thread(gateway_module.litellm_module)
    gateway = gateway_module.Gateway()
    seats = build_seats(spec, gateway)
    if fork is not None:
        from proactive_tui.core.fork import build_fork

        return build_fork(fork, gateway, seats=seats), seats
    if rerun is not None:
        from proactive_tui.core.rerun import build_rerun

        return build_rerun(rerun, gateway, seats=seats), seats
    return build_session(spec, env, gateway, seats=seats, resume_from=resume_from, branch=branch), seats
