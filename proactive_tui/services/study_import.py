"""What importing a family's published human study into the store did: the part every study's
summary shares (`ImportSummary`), so the rating study (`labels.StudyImport`) and the pairwise one
(`compare.PairImport`) say where they read, how many files, and which rows could not be read in
the same way; each adds its own new / already-here counts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from pydantic import BaseModel, Field


class ImportSummary(BaseModel):
    """The shared shape of a study import's summary: an import run twice adds nothing (each
    subclass counts what was new and what was already in the store), and a bad row or file is one
    problem line while the rest still imports."""

    source: str
    """The folder read."""
    files: int = 0
    """The study files read (rating files, vote files)."""
    problems: list[str] = Field(default_factory=list)
    """One line per row or file that could not be read (file, line, field); the rest imported."""


class _Study(Protocol):
    family: str


S = TypeVar("S", bound=_Study)


def study_of(studies: Iterable[S], family_name: str, what: str, error: type[Exception]) -> S:
    """The study of `family_name` among `studies`; `error` naming the families that have `what`
    (a rating or a pairwise study), so either import refuses an unknown family the same way."""
    by_family = {s.family: s for s in studies}
    if family_name not in by_family:
        have = ", ".join(sorted(by_family)) or "none"
        raise error(f"{family_name!r} has no {what} to import (families with one: {have})")
    return by_family[family_name]
