"""One temperature per family and seat wherever a session starts (issue 30).

A Chronos agent ran at 0.0 when set up in the playground and at the family's 0.2 from `eval`: the
playground's form rebuilt the seat's settings, which made the model settings' default look chosen.
Every start path (the playground's setup, `run`, `eval`, `compare`, a fork) must run the agent at
the one temperature the family decides (`EnginePart.seat_temperature`), record it, and send it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.widgets import Input

from chronos_helpers import scripted_agent_responder
from family_runs import RUNS, session_id_of
from proactive_tui.cli.main import main
from proactive_tui.core import registry
from proactive_tui.core.run_record import RunRecord
from proactive_tui.llm.settings import RoleSettings
from proactive_tui.store import open_store
from proactive_tui.store.queries import list_sessions, load_record
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.app import ProactiveApp
from ui_helpers import wait_for

ENV_ID = RUNS["chronos"].env_id
SEATS = ("--user", "openai/user-m", "--judge", "openai/judge-m", "--max-turns", "3")


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def agent_temperatures_sent(server: FakeOpenAIServer, model: str) -> set[float]:
    """The temperatures the agent's calls of `model` carried (its replies are AgentReply JSON)."""
    return {r.body["temperature"] for r in server.requests
            if r.body["model"].endswith(model) and (r.body.get("response_format") or {}).get("json_schema", {}).get("name") == "AgentReply"}


def recorded_agent_temperature(session_id: str) -> float:
    with open_store() as store:
        return load_record(store, session_id).models["agent"]["temperature"]


def all_session_ids() -> set[str]:
    with open_store() as store:
        return {s.id for s in list_sessions(store)}


async def playground_session(app: ProactiveApp, pilot, server: FakeOpenAIServer, agent: str,
                             temperature: str | None = None) -> tuple[str | None, str]:
    """A Chronos session set up in the playground's form (the fake server in every seat); the
    temperature the form showed for the agent, and the session's id once it ended."""
    from proactive_tui.families.chronos.ui.session import ChronosSessionScreen
    from proactive_tui.families.chronos.ui.setup import ChronosSetupScreen

    app.open_setup(app.environments.get(ENV_ID))
    await wait_for(pilot, lambda: isinstance(app.screen, ChronosSetupScreen) and bool(app.screen.query("#api-base")))
    setup = app.screen
    shown = next((box.value for box in setup.query("#temperature-agent").results(Input)), None)
    for role, model in (("agent", agent), ("user", "openai/user-m"), ("judge", "openai/judge-m")):
        setup.query_one(f"#model-{role}", Input).value = model
    setup.query_one("#api-base", Input).value = server.base_url
    setup.query_one("#max-turns", Input).value = "3"
    setup.query_one("#monitor-delay", Input).value = "0"
    if temperature is not None:
        setup.query_one("#temperature-agent", Input).value = temperature
    await pilot.pause()
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: isinstance(app.screen, ChronosSessionScreen))
    screen = app.screen
    await wait_for(pilot, lambda: screen.ended is not None)
    await wait_for(pilot, lambda: screen.session_id is not None and
                   screen.session_id in all_session_ids())
    return shown, screen.session_id


async def test_a_chronos_agent_runs_at_one_temperature_from_every_start(tmp_path: Path) -> None:
    from proactive_tui.families.chronos.protocol import AGENT_TEMPERATURE as decided  # the family's own value

    recorded: dict[str, set[float]] = {}
    sent: dict[str, set[float]] = {}
    with FakeOpenAIServer(responder=scripted_agent_responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            shown, played = await playground_session(app, pilot, server, "openai/agent-playground")
        recorded["playground"] = {recorded_agent_temperature(played)}
        sent["playground"] = agent_temperatures_sent(server, "agent-playground")

        def commands() -> None:
            out = tmp_path / "run.json"
            assert main(["run", ENV_ID, "--agent", "openai/agent-run", *SEATS, "--api-base", server.base_url,
                         "--out", str(out), "--quiet"]) == 0
            run_id = session_id_of(out)
            recorded["run"] = {recorded_agent_temperature(run_id)}
            sent["run"] = agent_temperatures_sent(server, "agent-run")

            assert main(["eval", ENV_ID, "--agent", "openai/agent-eval", *SEATS, "--api-base", server.base_url,
                         "--out", str(tmp_path / "batch")]) == 0
            results = [json.loads(p.read_text(encoding="utf-8")) for p in (tmp_path / "batch" / "sessions").glob("*.json")]
            assert results
            recorded["eval"] = {RunRecord.model_validate(r["record"]).models["agent"]["temperature"] for r in results}
            sent["eval"] = agent_temperatures_sent(server, "agent-eval")

            assert main(["compare", ENV_ID, "--agent", "openai/agent-cmp-a", "--agent", "openai/agent-cmp-b", *SEATS,
                         "--api-base", server.base_url, "--out", str(tmp_path / "compare")]) == 0
            comparison = json.loads((tmp_path / "compare" / "comparison.json").read_text(encoding="utf-8"))
            ids = [side["session_id"] for side in comparison["sides"]]
            recorded["compare"] = {recorded_agent_temperature(i) for i in ids}
            sent["compare"] = agent_temperatures_sent(server, "agent-cmp-a") | agent_temperatures_sent(server, "agent-cmp-b")

            # a fork of the playground's session and of the `run`'s: their agents after the fork point
            for parent, label in ((played, "fork of playground"), (run_id, "fork of run")):
                before = len(server.requests)
                out = tmp_path / f"{label}.json"
                assert main(["sessions", "fork", parent, "--turn", "2", "--edit",
                             "INFO_RETRIEVAL: EDITED which colour would you like the car in?",
                             "--api-base", server.base_url, "--out", str(out), "--quiet"]) == 0
                branch = session_id_of(out)
                recorded[label] = {recorded_agent_temperature(branch)}
                sent[label] = {r.body["temperature"] for r in server.requests[before:]
                               if (r.body.get("response_format") or {}).get("json_schema", {}).get("name") == "AgentReply"}

        await asyncio.to_thread(commands)
    assert recorded == {path: {decided} for path in recorded}, recorded
    assert shown == f"{decided:g}"  # the form showed the temperature the session then ran at
    assert all(sent[path] for path in sent if not path.startswith("fork")), sent  # every start made agent calls
    assert all(temperatures <= {decided} for temperatures in sent.values()), sent


async def test_the_setup_screen_shows_each_seats_temperature_and_a_changed_one_is_recorded(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=scripted_agent_responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            from proactive_tui.families.chronos.ui.setup import ChronosSetupScreen

            app.open_setup(app.environments.get(ENV_ID))
            await wait_for(pilot, lambda: isinstance(app.screen, ChronosSetupScreen) and bool(app.screen.query("#api-base")))
            setup = app.screen
            chronos = registry.get("chronos")
            for role in ("agent", "user", "judge"):  # beside its model, titled as what it is
                box = setup.query_one(f"#temperature-{role}", Input)
                assert box.value == f"{chronos.engine.seat_temperature(role, RoleSettings(), {}):g}"
                assert box.border_title == "temperature" and box.region.y == setup.query_one(f"#model-{role}", Input).region.y
            box = setup.query_one("#temperature-agent", Input)
            box.value = "2.5"  # out of 0..2: refused at Start, naming the field
            await pilot.pause()
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, ChronosSetupScreen)
            assert "temperature agent: not a valid value" in str(setup.query_one("#setup-warning").render())
            app.screen.dismiss(None)
            await wait_for(pilot, lambda: not isinstance(app.screen, ChronosSetupScreen))
            shown, played = await playground_session(app, pilot, server, "openai/agent-warm", temperature="0.9")
    assert recorded_agent_temperature(played) == 0.9
    assert agent_temperatures_sent(server, "agent-warm") == {0.9}
    with open_store() as store:
        assert store.session(played).spec["roles"]["agent"]["temperature"] == 0.9
