"""The family contract: what every installed family (the three built-ins, and the test-only
`countdown` plug-in installed through the entry-point group) must do, checked the same way for
each: samples load, describe, a scripted session runs to its end, every event round-trips, every
report view shows the family's sections, every export format that takes the record writes it, the
family's dataset export reads back, and version-1 run records and event logs still read.
"""

from __future__ import annotations

import asyncio
import html
import io
import json
from pathlib import Path
from typing import Any, Callable

import pytest
from conftest import ROOT
from plugin_helpers import BUILTINS, countdown_plugin  # noqa: F401  (a fixture)
from proactive_tui import envs
from proactive_tui.core import registry
from proactive_tui.core.events import COMMON_EVENTS, SessionEnded, SessionStarted, parse_event
from proactive_tui.core.family import Family
from proactive_tui.core.participants import ScriptedParticipant
from proactive_tui.core.report import ReportSection
from proactive_tui.core.run_record import RunRecord, fold, read_record
from proactive_tui.core.spec import SessionSpec
from proactive_tui.envs.describe import describe
from proactive_tui.textsafe import plain

FAMILIES = [*BUILTINS, "countdown"]
LEGACY = ROOT / "tests" / "fixtures" / "legacy"
COMMON_TYPES = {cls.model_fields["type"].default for cls in COMMON_EVENTS}


# -- scripted seats and bounded settings, per family --------------------------------------------

def _proactiveeval_seats(env: Any) -> dict[str, Any]:
    from engine_helpers import scripted_agent, scripted_judge, scripted_user

    return {"agent": scripted_agent(), "user": scripted_user(), "judge": scripted_judge()}


def _proactivebench_seats(env: Any) -> dict[str, Any]:
    from proactive_tui.families.proactivebench.judges import JudgeVerdict

    def propose(request, schema):  # a task on the first event, nothing after (as agent_proposing_on({1}))
        n = request.turn
        return {"Purpose": f"purpose {n}", "Thoughts": f"thoughts {n}", "Proactive Task": "task 1" if n == 1 else "null",
                "Response": "offer 1" if n == 1 else None}

    def accept(request, schema):  # as judge_accepting(lambda i, t: True)
        return JudgeVerdict(thought="judged", judgement="accepted")

    return {"agent": ScriptedParticipant([], structured=propose, label="scripted-agent"),
            "user": ScriptedParticipant([], structured=accept, label="scripted-judge")}


def _chronos_seats(env: Any) -> dict[str, Any]:
    from proactive_tui.families.chronos.testing import OracleAgent, ScriptedPersona

    return {"agent": OracleAgent(), "user": ScriptedPersona()}


def _proactbench_seats(env: Any) -> dict[str, Any]:
    from proactive_tui.families.proactbench.judges import JudgeVerdict

    def judge(request, schema):  # quotes the reply it scores
        return JudgeVerdict(rationale="acts on the anchor", score="PARTIAL", evidence="check the drive")

    return {"agent": ScriptedParticipant(["First check the drive's SMART data, then verify your photo copies."],
                                         label="scripted-agent"),
            "user": ScriptedParticipant([], label="scripted-user"),
            "judge": ScriptedParticipant([], structured=judge, label="scripted-judge")}


def _countdown_seats(env: Any) -> dict[str, Any]:
    from plugin_family.countdown.protocol import counting_agent, replying_user

    return {"agent": counting_agent(env.countdown.start, wrong_at=(2,)), "user": replying_user()}


SEATERS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "proactiveeval": _proactiveeval_seats, "proactivebench": _proactivebench_seats,
    "chronos": _chronos_seats, "proactbench": _proactbench_seats, "countdown": _countdown_seats,
}
BOUNDS: dict[str, dict[str, Any]] = {
    "proactiveeval": {"max_turns": 2}, "proactivebench": {"max_events": 3},
    "chronos": {"max_turns": 2}, "proactbench": {"max_triggers": 2}, "countdown": {"max_turns": 3},
}


def family_envs(name: str) -> list[Any]:
    loaded = envs.load_default()
    assert not loaded.problems, [p.render() for p in loaded.problems]
    return sorted(loaded.filtered(family=name), key=lambda e: e.id)


async def run_to_end(family: Family, env: Any) -> tuple[SessionSpec, list[Any]]:
    assert family.name in SEATERS, f"no scripted seats for family {family.name}: add them to SEATERS"
    spec = SessionSpec(env_id=env.id, seats={seat: "model" for seat in family.seats},
                       settings=family.settings(BOUNDS[family.name]).model_dump())
    session = family.engine.build_session(spec, env, SEATERS[family.name](env))

    async def collect() -> list[Any]:
        return [event async for event in session.events()]

    return spec, await asyncio.wait_for(collect(), timeout=60)


def section_titles(sections: list[ReportSection]) -> list[str]:
    assert sections, "the family reports no sections"
    return [s.title for s in sections]


# -- the contract ---------------------------------------------------------------------------------

def test_registry_lists_builtins_first_then_the_plugin(countdown_plugin) -> None:
    assert registry.names() == FAMILIES
    assert registry.problems() == []
    assert registry.get("countdown") is countdown_plugin


@pytest.mark.parametrize("name", FAMILIES)
def test_family_declares_a_consistent_interface(name: str, countdown_plugin) -> None:
    from proactive_tui.cli.printer import EventPrinter
    from proactive_tui.ui.screens.session_base import SessionScreenBase
    from proactive_tui.ui.screens.setup_base import SetupScreenBase

    family = registry.get(name)
    assert family.name == name and family.title
    assert isinstance(family.settings(), family.settings_model)
    assert set(family.seats) <= {"agent", "user", "judge"} and "agent" in family.seats
    for flag in family.run_flags:
        assert flag.setting in family.settings_model.model_fields, flag
    for cls in family.record.events:
        kind = cls.model_fields["type"].default
        assert kind.startswith(f"{name}."), kind
    for old, new in family.record.legacy_types.items():
        assert new in {cls.model_fields["type"].default for cls in family.record.events}, (old, new)
    assert issubclass(family.printer_class(), EventPrinter)
    setup = family.screen("setup_screen")
    if setup is not None:
        assert issubclass(setup, SetupScreenBase) and setup.FAMILY == name
        assert issubclass(family.screen("session_screen"), SessionScreenBase)
    for exporter in family.exporters():
        assert exporter.families == (name,), exporter


@pytest.mark.parametrize("name", FAMILIES)
def test_samples_load_and_describe(name: str, countdown_plugin) -> None:
    family = registry.get(name)
    sources = [s for s in envs.sample_sources() if s.family == name]
    assert sources, f"{name} ships no samples"
    loaded = envs.load_paths(sources)
    assert not loaded.problems, [p.render() for p in loaded.problems]
    assert loaded.environments and all(e.family == name for e in loaded.environments)
    found = family_envs(name)
    assert found
    for env in found[:3]:
        assert isinstance(env, family.environments.env_model)
        assert family.environments.validate_env(env.model_dump(mode="json")) == env  # what a stored session reads back
        sections = describe(env)
        assert sections[0][0] == "" and env.id in sections[0][1]
        own = [s for s in sections[1:] if s[0] != "Benchmark"]
        assert own and all(body.strip() for _, body in own), sections
        assert describe(env, reveal_reference=False)


@pytest.mark.parametrize("name", FAMILIES)
async def test_session_runs_folds_renders_and_exports(name: str, countdown_plugin, tmp_path: Path) -> None:
    from rich.console import Console

    from proactive_tui.export import load_formats
    from proactive_tui.export import registry as exports
    from proactive_tui.export.formats import markdown
    from proactive_tui.export.rich_view import recording_console, transcript

    family = registry.get(name)
    env = family_envs(name)[0]
    spec, events = await run_to_end(family, env)

    # the event stream: one start, one end (last), every event round-trips through parse_event
    assert isinstance(events[0], SessionStarted) and events[0].family == name
    assert isinstance(events[-1], SessionEnded) and sum(isinstance(e, SessionEnded) for e in events) == 1
    assert events[-1].reason != "error", events[-1].detail
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    own_types = {cls.model_fields["type"].default for cls in family.record.events}
    for event in events:
        assert event.type in COMMON_TYPES or event.type in own_types, event.type
        again = parse_event(event.model_dump_json())
        assert type(again) is type(event) and again == event
    assert any(e.type in own_types for e in events), "the session emitted none of the family's own events"

    # the run record
    record = fold(events)
    assert record.family == name and record.termination is not None
    assert isinstance(record.section, family.record.section_model)
    assert record.scores, "a finished session has scores"
    assert family.record.complete_turns(record) >= 1
    again = read_record(record.model_dump_json())
    assert again.section.model_dump() == record.section.model_dump() and again.scores == record.scores

    # every readable view shows the family's sections
    sections = family.report.sections(record)
    titles = section_titles(sections)
    assert any(s.summary for s in sections), "no summary section for the headless summary"
    assert all(s.id.startswith(f"{name}.") for s in sections), [s.id for s in sections]
    console = recording_console()
    console.print(transcript(record))
    text = console.export_text()
    for title in titles:
        assert title in text, title
    md = markdown.render(record)
    for title in titles:
        assert f"## {title}" in md, title
    out = recording_console()
    printer = family.printer_class()(out, Console(file=io.StringIO()), spec, env)
    for event in events:
        printer.show(event)
    printer.summary(record)
    shown = out.export_text()
    for section in sections:
        if section.summary:
            assert section.title in shown, section.title
    assert "termination:" in shown

    # every format that takes the record writes it
    formats = load_formats()
    assert {e.name for e in family.exporters()} <= set(formats)
    written: dict[str, list[Path]] = {}
    targets: dict[str, Path] = {}
    for fmt, exporter in formats.items():
        if not exporter.accepts(record):
            continue
        target = tmp_path / fmt if exporter.out_is_dir or not exporter.suffix else tmp_path / f"{fmt}{exporter.suffix}"
        files = exports.export([record], fmt, target)
        assert files and all(p.exists() and p.stat().st_size > 0 for p in files), fmt
        written[fmt], targets[fmt] = files, target
    assert {"run-record", "markdown", "html", "svg"} <= set(written)
    from proactive_tui.export.viewer import read_payload

    page = written["html"][0].read_text(encoding="utf-8")
    drawn = [s["title"] for s in read_payload(page)["session"]["view"]["sections"]]  # the page's h2 headings
    for title in titles:
        assert plain(title) in drawn, title
    assert f"<title>{html.escape(f'proactive-tui session {record.id}')}</title>" in page
    assert read_record(written["run-record"][0].read_text(encoding="utf-8")).section == record.section
    assert name in written, f"{name} has no dataset export of its own"
    READ_BACK[name](record, targets[name], written[name])


# -- reading each family's dataset export back ----------------------------------------------------

def _proactiveeval_back(record: RunRecord, out: Path, files: list[Path]) -> None:
    loaded = envs.load_paths([out])
    assert not loaded.problems, [p.render() for p in loaded.problems]
    assert [e.id for e in loaded.environments] == [f"{record.env_id}@{record.id}"]  # its own id, not the sample's
    item = loaded.environments[0].model_dump()
    assert json.dumps(item, default=str).count("dialogue") >= 1  # the produced keys were kept


def _proactivebench_back(record: RunRecord, out: Path, files: list[Path]) -> None:
    loaded = envs.load_paths([out])
    assert not loaded.problems, [p.render() for p in loaded.problems]
    assert len(loaded.environments) == 1
    env = loaded.environments[0]
    assert env.family == "proactivebench" and len(env.events) == len(record.section.events)
    assert [e.observation.event for e in env.events] == [ev.event for ev in record.section.events]


def _chronos_back(record: RunRecord, out: Path, files: list[Path]) -> None:
    lines = [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(lines) == 1
    for line in lines:
        assert line["messages"] and line["messages"][0]["role"] == "system"
        assert "outcome" in line and line["id"] == record.id


def _proactbench_back(record: RunRecord, out: Path, files: list[Path]) -> None:
    loaded = envs.load_paths([out])  # the results rows load; the metrics file beside them is skipped
    assert not loaded.problems, [p.render() for p in loaded.problems]
    assert [e.id for e in loaded.environments] == [f"{record.env_id}@{record.id}"]
    dialogue = loaded.environments[0].dialogue
    judged = [t for t in record.section.triggers if t.judged]
    assert [t.turn for t in dialogue.trigger_points][:len(judged)] == [t.turn for t in judged]
    for point, trigger in zip(dialogue.trigger_points, judged):
        assert (point.evaluation_result is None) == (trigger.result is None)


def _countdown_back(record: RunRecord, out: Path, files: list[Path]) -> None:
    loaded = envs.load_paths([out])
    assert not loaded.problems, [p.render() for p in loaded.problems]
    assert [e.id for e in loaded.environments] == [f"{record.env_id}@{record.id}"]
    env = loaded.environments[0]
    assert env.family == "countdown" and env.countdown.model_dump() == record.environment["countdown"]
    assert env.result["said"] == [c.said for c in record.section.checks]


READ_BACK: dict[str, Callable[[RunRecord, Path, list[Path]], None]] = {
    "proactiveeval": _proactiveeval_back, "proactivebench": _proactivebench_back,
    "chronos": _chronos_back, "countdown": _countdown_back, "proactbench": _proactbench_back,
}


# -- version 1 records and event logs --------------------------------------------------------------

V1_RECORDS = sorted(LEGACY.glob("*-run-record-v1.json"))
NO_V1 = {"proactbench"}
"""Families added after run-record format 2: no version-1 record of theirs exists."""
V1_EVENTS = sorted(LEGACY.glob("*-events-v1.jsonl"))


def _family_of(path: Path) -> str:
    return path.name.split("-", 1)[0]


def _had_scores(data: dict[str, Any]) -> bool:
    """Whether the version-1 record held anything scored (ProactiveEval's guidance or plan score,
    ProactiveBench's metrics, the Chronos verdict)."""
    return bool(data.get("guidance") or (data.get("planning") or {}).get("score") is not None
                or (data.get("proposals") or {}).get("metrics") or (data.get("timeline") or {}).get("outcome"))


def test_legacy_fixtures_are_there() -> None:
    assert {_family_of(p) for p in V1_RECORDS} == set(BUILTINS) - NO_V1

    assert V1_EVENTS


@pytest.mark.parametrize("path", V1_RECORDS, ids=lambda p: p.name)
def test_version_1_run_record_reads(path: Path, countdown_plugin) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert "format_version" not in data
    family = registry.get(_family_of(path))
    record = read_record(path.read_text(encoding="utf-8"))
    assert record.format_version == 2 and record.family == family.name
    assert isinstance(record.section, family.record.section_model)
    if _had_scores(data):
        assert record.scores
    sections = family.report.sections(record)
    assert section_titles(sections)


@pytest.mark.parametrize("path", V1_EVENTS, ids=lambda p: p.name)
def test_version_1_event_log_folds_to_the_v1_record(path: Path, countdown_plugin) -> None:
    name = _family_of(path)
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert any(json.loads(line)["type"] in registry.get(name).record.legacy_types for line in lines), \
        "the fixture should hold pre-prefix event names"
    events = [parse_event(line) for line in lines]
    folded = fold(events)
    v1 = read_record((LEGACY / f"{name}-run-record-v1.json").read_text(encoding="utf-8"))
    assert folded.section.model_dump() == v1.section.model_dump()


def test_a_plugin_family_maps_its_own_legacy_event_names(countdown_plugin) -> None:
    from plugin_family.countdown.events import NumberChecked

    event = parse_event({"type": "countdown_checked", "turn": 1, "said": 3, "expected": 3, "correct": True})
    assert isinstance(event, NumberChecked) and event.type == "countdown.checked"


def test_without_the_plugin_its_events_and_records_do_not_resolve() -> None:
    """After the fixture is gone the registry is the built-ins again (nothing leaks between tests)."""
    assert registry.names() == BUILTINS
    with pytest.raises(Exception):
        parse_event({"type": "countdown.checked", "turn": 1, "said": 3, "expected": 3, "correct": True})


# -- screens that replay ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", FAMILIES)
async def test_replayable_family_screen_takes_replay_events(name: str, countdown_plugin) -> None:
    """History replays with `screen_class(env, spec, replay_events=events)` (ui/screens/history.py)
    for a family that says it is `replayable`; the others' sessions show as their report text."""
    family = registry.get(name)
    if not family.replayable:
        pytest.skip(f"{name} is not replayable: History shows its report as text")
    assert family.screen("session_screen") is not None
    env = family_envs(name)[0]
    spec, events = await run_to_end(family, env)
    screen = family.screen("session_screen")(env, spec, replay_events=events)
    assert screen.replaying
