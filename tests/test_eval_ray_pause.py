"""A 429 pause reaches a Ray task that is already running (evalrun/ray_run.py): another task's 429
on a model with no limit is told to the cluster's one limiter actor, and a running task asks the
actor for the pauses as it goes, not only when it starts.

Its own local Ray with 1 CPU for the module (tests/test_eval_ray.py has the batch tests); the job
runs in a Ray worker process and says, through a file, that it has started, so the pause is
given only after the task began. Waits are for a condition, bounded only as hang guards.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (`pip install 'proactive-tui[ray]'`; it is in the test lock)")

from batch_helpers import local_ray, wait_for  # noqa: E402


cluster = local_ray(num_cpus=1)


def pause_watcher(started: str):
    """A unit's `make_job` for the next test: its job makes the gate of `openai/x` (a model with no
    limit), says it has started, then waits for a 429 pause to reach that gate (True), or gives up
    after a hang guard (False)."""
    def make(worker):
        async def job(index: int) -> bool:
            import asyncio

            from proactive_tui.llm.settings import ModelSettings

            gate = worker.gateway.limiter(ModelSettings(model="openai/x"))
            Path(started).write_text("started")
            loop = asyncio.get_running_loop()
            guard = loop.time() + 60.0
            while loop.time() < guard:
                if gate._local._paused_until > loop.time():  # the pause this task's calls would wait for
                    return True
                await asyncio.sleep(0.05)
            return False
        return job
    return make


def test_a_429_pause_reaches_a_ray_task_already_running(tmp_path) -> None:
    """Another task's 429 on a model with no limit is told to the actor; a task that started
    before it learns it while it runs, not only the tasks that start after."""
    from proactive_tui.evalrun.ray_run import LimiterActor, run_unit

    limiter = ray.remote(LimiterActor).options(max_concurrency=100).remote({})
    started = tmp_path / "started"
    task = ray.remote(run_unit).options(num_cpus=0.5).remote(pause_watcher(str(started)), [0], 1, {}, limiter, "unit-0")
    wait_for(started.exists, "the task started")
    ray.get(limiter.pause.remote("openai/x", 30.0))  # as a task's 429 tells it
    results, _, _ = ray.get(task, timeout=120)
    assert results == [(0, True)]
