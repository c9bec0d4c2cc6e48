"""ProactBench's agent writes up to upstream's 8,192 new tokens unless someone chose a cap; the
other seats and the embedded model keep theirs (core.spec applies EnginePart.default_max_tokens)."""

from __future__ import annotations

from proactive_tui.core import registry
from proactive_tui.core.spec import SessionSpec, with_family_seat_settings
from proactive_tui.llm.settings import ModelSettings, RoleSettings


def _spec(agent: ModelSettings, family: str = "proactbench") -> SessionSpec:
    roles = RoleSettings(agent=agent, user=ModelSettings(model="openai/u"), judge=ModelSettings(model="openai/j"))
    return SessionSpec(env_id=f"{family}/x", roles=roles)


def test_the_agent_gets_upstreams_cap_and_nothing_else_changes() -> None:
    decided = with_family_seat_settings(_spec(ModelSettings(model="openai/gpt-4.1")), registry.get("proactbench"))
    assert decided.roles.agent.token_cap() == 8192
    assert decided.roles.judge.max_tokens is None and decided.roles.user.max_tokens is None


def test_a_chosen_cap_and_the_embedded_model_keep_theirs() -> None:
    family = registry.get("proactbench")
    chosen = with_family_seat_settings(_spec(ModelSettings(model="openai/gpt-4.1", max_tokens=300)), family)
    assert chosen.roles.agent.token_cap() == 300
    local = with_family_seat_settings(_spec(ModelSettings(model="local/smollm2")), family)
    assert local.roles.agent.max_tokens is None


def test_other_families_keep_the_project_default() -> None:
    decided = with_family_seat_settings(_spec(ModelSettings(model="openai/gpt-4.1"), family="chronos"), registry.get("chronos"))
    assert decided.roles.agent.max_tokens is None


def test_the_stored_spec_keeps_the_decided_cap_and_temperature(tmp_path) -> None:
    """What resume and fork read back (`SessionRecorder._stored_spec`) carries both decisions of
    `with_family_seat_settings`: the agent's cap as well as its temperature."""
    from proactive_tui.store import open_store
    from proactive_tui.store.recorder import SessionRecorder

    with open_store(tmp_path / "store.db") as store:
        stored = SessionRecorder(store, spec=_spec(ModelSettings(model="openai/gpt-4.1")))._stored_spec("proactbench")
    agent = stored["roles"]["agent"]
    assert agent["max_tokens"] == 8192 and agent["temperature"] is not None
