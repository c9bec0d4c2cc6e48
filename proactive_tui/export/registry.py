"""The export registry: a format name -> an Exporter that writes run records to a path.

An exporter is a pure function of the records (no store, no UI), so the same code serves
`proactive-tui export`, the playground's palette and batch evaluation. Families that have a
dataset format of their own register it here from their module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

WriteFn = Callable[[list[Any], Path], list[Path]]


@dataclass(frozen=True)
class Exporter:
    name: str
    description: str
    write: WriteFn
    """write(records, out) -> the files written. `out` is a file or a folder, as the format says."""
    families: tuple[str, ...] | None = None
    """Families this format accepts; None means every family."""
    out_is_dir: bool = False
    suffix: str | None = None
    """The file name ending of a one-file export (`.md`); None for folder formats."""

    def accepts(self, record: Any) -> bool:
        return self.families is None or record.family in self.families


EXPORTERS: dict[str, Exporter] = {}


class ExportError(Exception):
    pass


def register(exporter: Exporter) -> Exporter:
    EXPORTERS[exporter.name] = exporter
    return exporter


def export(records: list[Any], fmt: str, out: Path) -> list[Path]:
    exporter = EXPORTERS.get(fmt)
    if exporter is None:
        raise ExportError(f"unknown export format {fmt!r}; choose one of: {', '.join(sorted(EXPORTERS))}")
    wrong = [r.id for r in records if not exporter.accepts(r)]
    if wrong:
        raise ExportError(
            f"format {fmt} takes {', '.join(exporter.families or ())} sessions; not: {', '.join(wrong)}"
        )
    return exporter.write(records, out)
