"""What a headless `run` checks before its session starts: each model seat's api base, model string
and key.

Why: without it a run starts, the agent and the user spend calls and tokens, and the session dies
at the first call to a seat that could never work (often the judge, minutes in, or a CI job after
its budget is gone). Every problem is known before the first call: a model string litellm cannot
route (a typo'd provider, a URL typed where the model goes), the embedded model asked for under
a name it does not have or without its weights, a provider key that is nowhere, an api base that
is not an http(s) URL (`notaurl`, `localhost:8000`: otherwise retried five times as a 500). So all seats are
checked up front and every problem is reported at once, each naming its seat.

Only the seats the family's sessions use (`family.seats`) and that a model fills are checked: a
person's seat needs no model, and a family without a judge seat never calls one. The provider is
checked before the key, so `foo/bar` is reported as an unknown provider, not as a missing key.

In the model layer (it asks only the gateway, the keys and the embedded model) so the TUI's setup
and the CLI share it without the UI importing the CLI.
"""

from __future__ import annotations

from typing import Any, Iterable

from pydantic import BaseModel

PROVIDERS_HELP = "use provider/model, e.g. openai/gpt-4.1 or anthropic/claude-sonnet-4-5 (https://docs.litellm.ai/docs/providers)"


class SeatProblem(BaseModel):
    """One seat that cannot work as set up, and why."""

    seat: str
    model: str
    problem: str

    def render(self) -> str:
        """One line; a URL typed as the model (`http://user:pass@host`) is named without its credentials."""
        from proactive_tui.redact import redact

        return redact(f"seat {self.seat} ({self.model or 'no model'}): {self.problem}")


def check_seats(spec: Any, seats: Iterable[str]) -> list[SeatProblem]:
    """Problems of the model seats among `seats` in `spec` (a SessionSpec), in seat order."""
    problems = []
    for seat in seats:
        if spec.seats.get(seat, "model") != "model":
            continue
        settings = spec.roles.for_role(seat)
        problem = model_problem(settings.model, settings.api_base)
        if problem is not None:
            problems.append(SeatProblem(seat=seat, model=settings.model, problem=problem))
    return problems


def model_problem(model: str, api_base: str | None) -> str | None:
    """Why calls to `model` (at `api_base`) cannot work, or None when nothing is known against them."""
    from proactive_tui.llm import keys

    model = model.strip()
    from proactive_tui.llm.acp import is_acp_seat

    if is_acp_seat(model):  # an agent program, not a litellm model: started, not routed (llm/acp)
        from proactive_tui.llm.acp.agents import configured_agents, problem as acp_problem

        return acp_problem(model, configured_agents())
    problem = keys.model_problem(model)  # one wording for these, as the gateway and setup give it
    if problem is not None:
        return problem
    if any(ch.isspace() for ch in model):
        return "a model string has no spaces"
    if model.startswith("local/"):  # in-process: an api base is not used
        return _local_problem(model)
    problem = keys.seat_base_problem(model, api_base)  # the seat's base, else OPENAI_API_BASE & co.
    if problem is not None:
        return problem
    from proactive_tui.llm.gateway import litellm_module

    try:
        provider = litellm_module().get_llm_provider(model=model, api_base=api_base)[1]
    except Exception:
        prefix = model.split("/", 1)[0] if "/" in model else ""
        known = f"litellm knows no provider {prefix!r}" if prefix else "litellm cannot tell which provider serves it"
        return f"{known}; {PROVIDERS_HELP}"
    if keys.key_source(provider, api_base) == "none":
        return keys.missing_key_message(provider)
    return None


def _local_problem(model: str) -> str | None:
    from proactive_tui.llm.local import loader
    from proactive_tui.llm.local.loader import LocalModelUnavailable, model_path

    names = tuple(getattr(loader, "LOCAL_MODELS", (loader.LOCAL_MODEL,)))
    if model not in names:
        return f"the embedded model is {', '.join(names)}; there is no {model}"
    try:
        model_path()
    except LocalModelUnavailable as exc:
        return str(exc)
    return None
