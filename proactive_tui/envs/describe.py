"""Plain-text sections describing an environment, shared by `envs show` and the picker preview.

Returned as (heading, body) pairs of plain strings so each front end styles them its own way and
file content is never interpreted as markup. `reveal_reference=False` hides what a person playing
the user should not see (reference targets, which states satisfy the needs, annotations).
"""

from __future__ import annotations

from datetime import datetime, timezone

from proactive_tui.envs.chronos import ChronosEnv
from proactive_tui.envs.proactivebench import ProactiveBenchEnv
from proactive_tui.envs.proactiveeval import DOMAINS, ProactiveEvalEnv

Section = tuple[str, str]


def describe(env, reveal_reference: bool = True) -> list[Section]:
    header = f"{env.id}\n{env.title}\nfamily: {env.family}   domain: {env.domain}   tier: {env.tier or '-'}\nsource: {env.source}"
    sections: list[Section] = [("", header)]
    if isinstance(env, ProactiveEvalEnv):
        sections += _proactiveeval(env, reveal_reference)
    elif isinstance(env, ProactiveBenchEnv):
        sections += _proactivebench(env, reveal_reference)
    elif isinstance(env, ChronosEnv):
        sections += _chronos(env, reveal_reference)
    return sections


def _proactiveeval(env: ProactiveEvalEnv, reveal: bool) -> list[Section]:
    item = env.item
    out = [
        ("Domain", DOMAINS.get(env.domain, env.domain)),
        ("User information", item.environment.user_information),
        ("Trigger", item.environment.trigger_factor),
    ]
    if item.topic_text():
        out.append(("Topic", item.topic_text()))
    if reveal:
        steps = "\n".join(f"{i}. {s}" for i, s in enumerate(item.sub_target, 1))
        out.append(("Reference target", item.target))
        out.append(("Reference sub-targets", steps))
    else:
        out.append(("Reference target", "(hidden)"))
    return out


def _event_time(raw: str) -> str:
    try:
        return datetime.fromtimestamp(float(raw), tz=timezone.utc).strftime("%H:%M:%S")
    except (ValueError, OverflowError, OSError):
        return raw


def _proactivebench(env: ProactiveBenchEnv, reveal: bool) -> list[Section]:
    lines = []
    for i, event in enumerate(env.events):
        mark = ""
        if reveal:
            status = (event.model_extra or {}).get("task_status")
            mark = "  [help welcome]" if status is True else ""
        lines.append(f"{i:>3}  {_event_time(event.observation.time)}  {event.observation.event}{mark}")
    out = [("Theme", env.theme or "-")]
    if env.splits:
        out.append(("Splits", ", ".join(env.splits)))
    out.append((f"Events ({len(env.events)})", "\n".join(lines)))
    return out


def _chronos(env: ChronosEnv, reveal: bool) -> list[Section]:
    sc = env.scenario
    out = [
        ("Scenario", f"{sc.scenario}, {sc.branch} branch, {sc.tier} tier, turn limit {sc.turn_limit}"),
        ("Persona", sc.persona),
        ("Initial need", sc.initial_need),
        ("Intention", sc.intention),
        ("Constraints", "\n".join(f"- {c.key}: {c.value} (revealed at user turn {c.reveal_turn})" for c in sc.constraints) or "-"),
        ("Timeline", _states(sc.start_time, sc.timeline, reveal)),
    ]
    if sc.intention_shift:
        shift = sc.intention_shift
        body = f'"{shift.utterance}"\nnew intention: {shift.intention}\n' + "\n".join(
            f"- {k}: {v}" for k, v in shift.constraints.items()
        )
        out.append(("Intention shift", body))
        out.append(("Timeline after the shift", _states(None, shift.timeline, reveal)))
    return out


def _states(start: str | None, states, reveal: bool) -> str:
    lines = [f"start {start}"] if start else []
    for state in states:
        verdict = (" ✓ meets needs" if state.meets_needs else " ✗ does not meet needs") if reveal else ""
        lines.append(f"{state.time}{verdict}")
        lines.extend(f"    {listing}" for listing in state.listings)
        if state.note:
            lines.append(f"    ({state.note})")
    return "\n".join(lines)
