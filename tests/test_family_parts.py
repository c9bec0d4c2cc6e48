"""A family is a declaration plus parts loaded by dotted path (core/family.py, issue 36 point 1).

- A part is imported at first use, once, and bound to its family; a path to the wrong kind of
  object fails naming the family, the part and the path.
- An absent optional part is None, and what needs it refuses in the family's own words
  (fork, resume, re-run, re-grade) rather than probing a flag.
- Every built-in declaration names parts of the right classes, and importing a declaration
  imports none of its parts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import ROOT
from plugin_helpers import BUILTINS, countdown_plugin  # noqa: F401  (a fixture)
from proactive_tui.core import registry
from proactive_tui.core.family import (
    BatchPart, EnginePart, EnvironmentsPart, Family, ForkPart, GeneratePart, Parts, RecordPart, RegradePart, ReportPart,
    RerunPart, ResumePart,
)


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A throwaway package `name` whose `parts` module holds one part of each required kind and
    a fork part, and counts how often it was imported."""
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "parts.py").write_text(textwrap.dedent("""
        import builtins
        from proactive_tui.core.family import EnginePart, EnvironmentsPart, ForkPart, RecordPart, ReportPart

        builtins.PARTS_IMPORTS = getattr(builtins, "PARTS_IMPORTS", 0) + 1
        ENVIRONMENTS, ENGINE, RECORD, REPORT, FORK = EnvironmentsPart(), EnginePart(), RecordPart(), ReportPart(), ForkPart()
        NOT_A_PART = object()
    """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))


def _declared(name: str, **optional: str) -> Family:
    return Family(name=name, title=name, package=name, settings_model_path="pydantic:BaseModel",
                  parts=Parts(environments=".parts:ENVIRONMENTS", engine=".parts:ENGINE", record=".parts:RECORD",
                              report=".parts:REPORT", **optional))


def test_a_part_is_imported_at_first_use_once_and_knows_its_family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    _package(tmp_path, monkeypatch, "lazyfam")
    monkeypatch.setattr(builtins, "PARTS_IMPORTS", 0, raising=False)
    family = _declared("lazyfam", fork=".parts:FORK")
    assert "lazyfam.parts" not in sys.modules  # declaring names paths only
    fork = family.fork
    assert isinstance(fork, ForkPart) and fork is family.fork and fork.family is family
    assert family.environments.family is family and family.record is family.record
    assert builtins.PARTS_IMPORTS == 1  # type: ignore[attr-defined]
    assert family.resume is None and family.regrade is None and family.generate is None and family.batch is None
    assert family.screen("session_screen") is None and family.printer_class() is None and family.exporters() == []


def test_a_path_to_something_else_fails_naming_family_part_and_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch, "wrongfam")
    family = _declared("wrongfam", regrade=".parts:NOT_A_PART", fork=".parts:ENGINE")
    with pytest.raises(TypeError, match=r"family wrongfam: its regrade part \.parts:NOT_A_PART is a object, not a RegradePart"):
        _ = family.regrade
    with pytest.raises(TypeError, match=r"its fork part \.parts:ENGINE is a EnginePart, not a ForkPart"):
        _ = family.fork


@pytest.mark.parametrize("name", BUILTINS)
def test_every_builtin_declaration_names_parts_of_their_kinds(name: str) -> None:
    family = registry.get(name)
    kinds = {"environments": EnvironmentsPart, "engine": EnginePart, "record": RecordPart, "report": ReportPart,
             "batch": BatchPart, "resume": ResumePart, "fork": ForkPart, "regrade": RegradePart, "rerun": RerunPart,
             "generate": GeneratePart}
    for part, kind in kinds.items():
        declared = getattr(family.parts, part)
        loaded = getattr(family, part)
        assert (loaded is None) == (declared is None), part
        assert loaded is None or (isinstance(loaded, kind) and loaded.family is family), part
    for path in family.parts.exporters:
        assert family.load(path).name.startswith(name)
    assert family.screen("session_screen") is not None and family.screen("setup_screen") is not None


def test_what_each_builtin_supports_is_which_parts_it_declares() -> None:
    """The capabilities the flags used to state, now read from the declarations."""
    def has(name: str, part: str) -> bool:
        return getattr(registry.get(name).parts, part) is not None

    assert [n for n in BUILTINS if has(n, "resume")] == ["proactiveeval", "proactivebench", "chronos"]
    assert [n for n in BUILTINS if has(n, "fork")] == BUILTINS
    assert [n for n in BUILTINS if has(n, "regrade")] == ["proactiveeval", "proactivebench", "proactbench"]
    assert [n for n in BUILTINS if has(n, "rerun")] == ["proactiveeval", "chronos"]
    assert [n for n in BUILTINS if has(n, "generate")] == ["proactiveeval", "proactivebench", "chronos"]
    assert registry.get("proactivebench").regrade.seat == "user" and registry.get("proactbench").regrade.seat == "judge"


PROBE = """
import importlib, json, sys
importlib.import_module({module!r})
print(json.dumps(sorted(m for m in sys.modules if m.startswith({module!r} + "."))))
"""


@pytest.mark.parametrize("name", BUILTINS)
def test_importing_a_declaration_imports_none_of_its_parts(name: str) -> None:
    module = f"proactive_tui.families.{name}"
    proc = subprocess.run([sys.executable, "-c", PROBE.format(module=module)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    family = registry.get(name)
    parts = {f"{module}{path.split(':')[0]}" for path in vars(family.parts).values()
             if isinstance(path, str) and path.startswith(".")}
    assert parts and not parts & set(loaded), sorted(parts & set(loaded))


def test_the_toy_family_is_the_minimum_and_refuses_what_it_lacks(countdown_plugin) -> None:  # noqa: F811
    from proactive_tui.core.fork import ForkChange, ForkError, ForkPlan, ForkPoint, check_fork
    from proactive_tui.core.rerun import RerunError, RerunPlan, check_rerun
    from proactive_tui import envs
    from proactive_tui.core.spec import SessionSpec, build_session

    family = countdown_plugin
    optional = ("batch", "resume", "fork", "regrade", "rerun", "generate")
    assert all(getattr(family.parts, part) is None and getattr(family, part) is None for part in optional)
    record = SimpleNamespace(id="s1", family="countdown")  # what the checks read before refusing
    spec = SessionSpec(env_id="countdown/three")
    with pytest.raises(ForkError, match="countdown sessions cannot be forked"):
        check_fork(ForkPlan(parent_id="s1", parent=record, parent_events=[], point=ForkPoint(turn=1, seat="agent"),
                            change=ForkChange(), spec=spec, env=None))
    with pytest.raises(RerunError, match="countdown sessions have no user turns to freeze"):
        check_rerun(RerunPlan(original_id="s1", original=record, spec=spec, env=None))
    env = next(e for e in envs.load_default().environments if e.family == "countdown")
    with pytest.raises(ValueError, match="countdown sessions cannot be resumed yet"):
        build_session(spec, env, gateway=None, seats={"agent": None, "user": None}, resume_from=record)


def test_the_guide_names_every_declaration_field_and_every_part() -> None:
    """docs/adding-a-family.md is what the next engineer reads: a field or part added to
    core/family.py without a line there fails here."""
    import dataclasses

    guide = (ROOT / "docs" / "adding-a-family.md").read_text(encoding="utf-8")
    declared = [f.name for f in dataclasses.fields(Family) if f.init and f.name not in ("parts", "package")]
    parts = [f.name for f in dataclasses.fields(Parts)]
    missing = [name for name in declared + parts if f"`{name}`" not in guide]
    assert not missing, missing
    for kind in (EnvironmentsPart, EnginePart, RecordPart, ReportPart, BatchPart, ResumePart, ForkPart, RegradePart,
                 RerunPart, GeneratePart):
        assert f"`{kind.__name__}`" in guide, kind.__name__
