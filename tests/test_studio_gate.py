"""The studio's step / auto / pause gate (`synth.gate.StepGate`), on its own and in front of the
engine: a press lets exactly one call go, auto lets everything go, a pause holds everything."""

from __future__ import annotations

import asyncio

import pytest

from proactive_tui.synth.gate import StepGate


async def _spin(times: int = 5) -> None:
    for _ in range(times):
        await asyncio.sleep(0)


async def _calls(gate: StepGate, n: int) -> tuple[list[str], list[asyncio.Task]]:
    passed: list[str] = []

    async def one(k: int) -> None:
        await gate("item", "stage", f"step-{k}")
        passed.append(f"step-{k}")

    tasks = [asyncio.create_task(one(k)) for k in range(n)]
    await _spin()
    return passed, tasks


async def test_step_mode_lets_one_waiting_call_go_per_press() -> None:
    gate = StepGate("step")
    passed, tasks = await _calls(gate, 3)
    assert passed == [] and [w[2] for w in gate.waiting] == ["step-0", "step-1", "step-2"]
    gate.press()
    await _spin()
    assert passed == ["step-0"] and len(gate.waiting) == 2
    gate.press()
    await _spin()
    assert passed == ["step-0", "step-1"]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert gate.waiting == []  # a cancelled (stopped) call leaves the queue


async def test_a_press_with_nothing_waiting_is_kept_for_the_next_call() -> None:
    gate = StepGate("step")
    gate.press()
    assert gate.credits == 1
    passed, _ = await _calls(gate, 2)
    assert passed == ["step-0"] and gate.credits == 0 and [w[2] for w in gate.waiting] == ["step-1"]
    gate.set_mode("auto")
    await _spin()
    assert passed == ["step-0", "step-1"]


async def test_auto_opens_and_pause_holds_until_a_press_or_auto() -> None:
    changes: list[str] = []
    gate = StepGate("auto")
    gate.on_change = lambda: changes.append(gate.mode)
    passed, _ = await _calls(gate, 2)
    assert passed == ["step-0", "step-1"]
    gate.set_mode("paused")
    passed, tasks = await _calls(gate, 2)
    await _spin()
    assert passed == [] and len(gate.waiting) == 2
    gate.press()  # a press while paused is "one call": it switches to step
    await _spin()
    assert gate.mode == "step" and passed == ["step-0"]
    gate.set_mode("auto")
    await _spin()
    assert passed == ["step-0", "step-1"] and gate.waiting == []
    assert "paused" in changes and "auto" in changes
    await asyncio.gather(*tasks)


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="one of step, auto, paused"):
        StepGate("fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        StepGate().set_mode("off")  # type: ignore[arg-type]


async def test_the_engine_sends_one_call_per_press(tmp_path) -> None:
    """In front of a real pipeline (ProactiveBench's, on the fake server): every live call waits
    at the gate, each press makes exactly one step file more."""
    from synth_pb_fake import make_responder, role_args
    from proactive_tui.cli.main import build_parser
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.synth import engine, setup
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(responder=make_responder()) as server:
        args = build_parser().parse_args(["synth", "proactivebench", "--n", "1", "--scene", "coding", "--out",
                                          str(tmp_path / "run"), *role_args(server.base_url)])
        prepared = setup.prepare(args)
        gate = StepGate("step")
        run = engine.Run(prepared.folder, prepared.roles, Gateway(stream_replies=False), 0, 4, gate=gate)
        task = asyncio.create_task(engine.run_pipeline(prepared.pipeline, prepared.manifest, run))

        def steps() -> int:
            return sum(1 for p in (prepared.folder / "items").rglob("*.json") if p.name != "result.json")

        async def until(predicate) -> None:
            for _ in range(20000):
                if predicate():
                    return
                await asyncio.sleep(0.01)
            raise AssertionError("hang guard")

        await until(lambda: len(gate.waiting) == 1)
        assert steps() == 0
        for k in range(1, 3):
            gate.press()
            await until(lambda k=k: steps() == k and (len(gate.waiting) == 1 or task.done()))
            assert steps() == k
        gate.set_mode("auto")
        await task
        assert len(list((prepared.folder / "items").glob("*/result.json"))) == 1
