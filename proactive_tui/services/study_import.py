"""What importing a family's published human study into the store did: the part every study's
summary shares (`ImportSummary`), so the rating study (`labels.StudyImport`) and the pairwise one
(`compare.PairImport`) say where they read, how many files, and which rows could not be read in
the same way; each adds its own new / already-here counts."""

from __future__ import annotations

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
