"""Sessions that start together start `START_SPACING_S` apart (evalrun.spacing); a session that
starts long after the last one does not wait. No wall-clock bound is asserted: a sleep never ends
early, and what is checked is the loop time each start was given."""

from __future__ import annotations

import asyncio

from proactive_tui.evalrun.spacing import START_SPACING_S, StartSpacing


async def test_sessions_started_together_start_apart_and_a_later_one_does_not_wait() -> None:
    spacing = StartSpacing()
    loop = asyncio.get_running_loop()
    started: list[float] = []

    async def session() -> float:
        waited = await spacing.wait_turn()
        started.append(loop.time())
        return waited

    waits = await asyncio.gather(*(session() for _ in range(5)))
    assert waits[0] == 0.0 and all(w > 0 for w in waits[1:])
    assert all(b - a >= START_SPACING_S * 0.999 for a, b in zip(started, started[1:]))
    await asyncio.sleep(START_SPACING_S * 2)
    assert await spacing.wait_turn() == 0.0  # the last start was long enough ago


def test_the_one_process_batch_and_each_worker_space_their_starts(tmp_path, monkeypatch) -> None:
    """Both ways `eval` runs sessions go through the spacing: this process's own loop, and each
    worker process's (forked: the patch below is theirs too; each start is logged to a file)."""
    import os

    from batch_helpers import eval_argv, one_process_argv
    from proactive_tui.cli.main import main
    from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder

    log = tmp_path / "starts.log"
    real = StartSpacing.wait_turn

    async def logged(self: StartSpacing) -> float:
        waited = await real(self)
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()} {waited}\n")
        return waited

    monkeypatch.setattr(StartSpacing, "wait_turn", logged)

    def starts() -> list[tuple[int, float]]:
        lines = log.read_text(encoding="utf-8").split()
        log.unlink()
        return [(int(pid), float(waited)) for pid, waited in zip(lines[::2], lines[1::2])]

    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        assert main(one_process_argv(server, tmp_path / "one")) == 0
        one = starts()
        assert main(eval_argv(server, tmp_path / "two", "--repeats", "2", "--concurrency", "4", "--workers", "2")) == 0
        two = starts()
    assert {pid for pid, _ in one} == {os.getpid()} and len(one) == 8 and any(w > 0 for _, w in one)
    workers = {pid for pid, _ in two}
    assert len(two) == 8 and len(workers) == 2 and os.getpid() not in workers
    assert all(any(w > 0 for pid, w in two if pid == worker) for worker in workers)
