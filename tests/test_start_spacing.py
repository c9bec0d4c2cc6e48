"""Sessions that start together start `START_SPACING_S` apart (evalrun.spacing); a session that
starts long after the last one does not wait. No wall-clock bound is asserted, and nothing that
depends on how busy the machine is: what is checked is the loop time `wait_turn` gave each session
to start at, which is spaced however late a task runs or wakes (a loaded machine can run one task
so late that it need not wait, so whether a given session waited is not asserted); "asked long
after" is a loop clock set ahead, not a pause."""

from __future__ import annotations

import asyncio

from proactive_tui.evalrun.spacing import START_SPACING_S, StartSpacing


def spaced(starts: list[float]) -> bool:
    return all(b - a >= START_SPACING_S * 0.999 for a, b in zip(starts, starts[1:]))


async def test_sessions_started_together_start_apart_and_a_later_one_does_not_wait(monkeypatch) -> None:
    spacing = StartSpacing()
    starts = await asyncio.gather(*(spacing.wait_turn() for _ in range(5)))
    assert spaced(sorted(starts))
    loop = asyncio.get_running_loop()
    later = max(starts) + 10.0
    monkeypatch.setattr(loop, "time", lambda: later)  # asked long after the last start
    assert await spacing.wait_turn() == later  # given "now": no wait


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
        start = await real(self)
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()} {start!r}\n")
        return start

    monkeypatch.setattr(StartSpacing, "wait_turn", logged)

    def starts() -> list[tuple[int, float]]:
        lines = log.read_text(encoding="utf-8").split()
        log.unlink()
        return [(int(pid), float(start)) for pid, start in zip(lines[::2], lines[1::2])]

    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        assert main(one_process_argv(server, tmp_path / "one")) == 0
        one = starts()
        assert main(eval_argv(server, tmp_path / "two", "--repeats", "2", "--concurrency", "4", "--workers", "2")) == 0
        two = starts()
    assert {pid for pid, _ in one} == {os.getpid()} and len(one) == 8 and spaced(sorted(t for _, t in one))
    workers = {pid for pid, _ in two}
    assert len(two) == 8 and len(workers) == 2 and os.getpid() not in workers
    assert all(spaced(sorted(t for pid, t in two if pid == worker)) for worker in workers)
