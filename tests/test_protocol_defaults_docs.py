"""docs/protocols.md lists every default of every family with its source (issue 30).

Each family's section has a "Defaults and their sources" table. Every field of the family's
settings model must be a row there, with the model's default value as it is today and a source:
the paper (a section or table), upstream's code (a file), or "our choice". A default changed in
code without the table, or a setting added without saying where its default comes from, fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import proactive_tui
from proactive_tui.core import registry

DOCS = Path(proactive_tui.__file__).resolve().parent.parent / "docs" / "protocols.md"
"""The docs of the checkout whose package is imported (the code they describe)."""
SECTIONS = {"proactiveeval": "ProactiveEval", "proactivebench": "ProactiveBench", "chronos": "Chronos", "proactbench": "ProactBench"}


def defaults_table(family_title: str) -> dict[str, tuple[str, str]]:
    """setting (first cell, backticks removed) -> (default cell, source cell)."""
    text = DOCS.read_text(encoding="utf-8")
    section = re.split(r"^## ", text, flags=re.MULTILINE)
    body = next(part for part in section if part.startswith(family_title + "\n"))
    match = re.search(r"^### Defaults and their sources\n(.*?)(?=^### |\Z)", body, flags=re.MULTILINE | re.DOTALL)
    assert match, f"{family_title}: no 'Defaults and their sources' table"
    rows: dict[str, tuple[str, str]] = {}
    for line in match.group(1).splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "setting":
            continue
        rows[cells[0].strip("`")] = (cells[1], cells[2])
    return rows


@pytest.mark.parametrize("name", list(SECTIONS))
def test_every_default_is_listed_with_its_value_and_its_source(name: str) -> None:
    family = registry.get(name)
    rows = defaults_table(SECTIONS[name])
    for field, info in family.settings_model.model_fields.items():
        assert field in rows, f"{name}: setting {field} missing from the defaults table"
        value, source = rows[field]
        assert json.dumps(info.default) in value, f"{name}.{field}: the table says {value}, the code {info.default!r}"
        assert re.search(r"\b(the paper|upstream|our choice)\b", source), f"{name}.{field}: no source ({source!r})"


def test_chronos_agent_temperature_is_not_called_the_papers() -> None:
    """The paper states no temperature: 0.2 is ours, and the docs say so."""
    from proactive_tui.families.chronos.protocol import AGENT_TEMPERATURE

    value, source = defaults_table("Chronos")["the agent's temperature"]
    assert str(AGENT_TEMPERATURE) in value and source.startswith("our choice")
    text = DOCS.read_text(encoding="utf-8")
    assert "temperature 0.2 for the model under test: **follows**" not in text
    readme = (DOCS.parent.parent / "README.md").read_text(encoding="utf-8")
    assert "0.2 (the paper's)" not in readme
