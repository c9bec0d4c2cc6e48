"""The option checks every `eval` command shares (the batch command, `cli/eval_batch.py`, and the
families' checks such as `eval reward-judge`) and `synth` (its setup, which the studio runs
too), made before anything runs. Beside the batch runner, below the CLI and the UI, so the studio
never imports the CLI for it (it was `cli/batch.py`).
"""

from __future__ import annotations

from typing import Any


def shared_option_problem(args: Any) -> str | None:
    """What is wrong with the options every eval command shares, found before anything runs: a
    `--concurrency` or `--workers` below 1 (a semaphore of 0 would wait for ever) or an `--out` that cannot be
    written (found only after the whole batch otherwise), an `--api-base` that is not an http(s)
    URL (every session of the batch would otherwise retry it as a 500)."""
    if getattr(args, "concurrency", 1) < 1:
        return "--concurrency must be at least 1"
    if (getattr(args, "workers", None) or 1) < 1 or getattr(args, "workers", None) == 0:
        return "--workers must be at least 1"
    from proactive_tui.llm.keys import api_base_problem

    bad_base = api_base_problem(getattr(args, "api_base", None))
    if bad_base:
        return f"--api-base: {bad_base}"
    from proactive_tui.evalrun.outpath import unwritable_reason

    problem = unwritable_reason(getattr(args, "out", None))
    return f"--out: {problem}" if problem else None
