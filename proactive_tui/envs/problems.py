"""Load problems: one readable line per thing wrong, naming file, record and field.

Every loader reports problems instead of raising, so one bad file (or one bad record) never
stops the rest of a folder from loading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from proactive_tui.textsafe import field_path


class LoadProblem(BaseModel):
    """One thing wrong with an environment file."""

    file: str
    record: int | None = None
    field: str | None = None
    message: str
    line: int | None = None
    """For a JSON Lines file: the 1-based line of the row (said instead of a record number)."""

    def render(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(f"line {self.line}")
        elif self.record is not None:
            parts.append(f"record {self.record}")
        if self.field:
            parts.append(f"field {self.field}")
        return ": ".join(parts) + f": {self.message}"


def problems_from_validation(
    file: Path | str, record: int | None, error: Exception, prefix: tuple[Any, ...] = (), line: int | None = None
) -> list[LoadProblem]:
    """Convert a pydantic ValidationError into one LoadProblem per failing field."""
    from pydantic import ValidationError

    if not isinstance(error, ValidationError):
        return [LoadProblem(file=str(file), record=record, line=line, message=str(error))]
    problems = []
    for err in error.errors(include_url=False):
        loc = tuple(prefix) + tuple(err.get("loc", ()))
        # Model-level validators report an empty location; keep them record-level.
        msg = err.get("msg", "invalid").removeprefix("Value error, ")
        if err.get("type") == "missing":
            msg = "missing required field"
        elif "input" in err and err.get("type", "").endswith("_type"):
            msg = f"{msg} (got {type(err['input']).__name__})"
        problems.append(
            LoadProblem(file=str(file), record=record, line=line, field=field_path(loc) or None, message=msg)
        )
    return problems
