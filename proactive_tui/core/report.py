"""Report sections: what a family says about a finished (or interrupted) session, as plain data.

Every readable view of a session (the headless summary, `sessions show`, the History detail, the
markdown, html and svg exports) renders the same sections, so they agree. A family builds them
from its run record (`ReportPart.sections`) without Rich or Textual; `export.report_rich` and the
markdown format turn them into styled text. All text in a block is data: renderers never read it
as markup.

Styles are semantic (`judge`, `good`, `bad`, ...) so each renderer and theme maps them its own way.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, Field

Style = Literal["", "dim", "judge", "good", "bad", "warn", "info", "bold"]


class Line(BaseModel):
    """A paragraph, optionally led by a bold label (`Trigger. what happened`)."""

    kind: Literal["line"] = "line"
    text: str
    label: str = ""
    style: Style = ""
    indent: int = 0


class Speech(BaseModel):
    """One message of the dialogue (or an observation injected in place of one)."""

    kind: Literal["speech"] = "speech"
    speaker: str
    """agent | user | observation | system: renderers colour by it."""
    who: str = ""
    """The model string, "person", or the observation's source."""
    turn: int | None = None
    text: str
    partial: bool = False
    muted: bool = False
    """Text that did not reach the user (a Chronos KEEP_SILENT)."""


class Facts(BaseModel):
    """Key-value rows (a header, a plan's scores)."""

    kind: Literal["facts"] = "facts"
    rows: list[tuple[str, str]]


class Table(BaseModel):
    kind: Literal["table"] = "table"
    title: str = ""
    columns: list[str]
    rows: list[list[str]]
    align: list[Literal["left", "right"]] = Field(default_factory=list)


Block = Annotated[Union[Line, Speech, Facts, Table], Field(discriminator="kind")]


class ReportSection(BaseModel):
    title: str
    blocks: list[Block] = Field(default_factory=list)
    summary: bool = False
    """Part of the closing summary a headless `run` prints (scores, metrics, the verdict)."""
    id: str = ""
    """A stable name tests and renderers can find the section by (`proactivebench.metrics`)."""


def pct(value: float | None, digits: int = 2) -> str:
    """A ratio as a percentage; undefined (a zero denominator) shows as n/a, never 0%."""
    return "n/a" if value is None else f"{100 * value:.{digits}f}%"
