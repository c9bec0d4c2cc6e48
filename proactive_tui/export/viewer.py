"""The static HTML viewer: one self-contained file showing a session, or a report folder with every
session of it, for demos to someone who has nothing installed.

Why one file and no server: it is mailed, attached to an issue or opened from a USB stick. The
CSS, the JavaScript and the page template are package files (`viewer_assets/`), inlined; the page
loads nothing (its Content-Security-Policy forbids any fetch), so it works offline and leaks
nothing when opened.

The data is built from the run record itself, nothing invented: each session carries its scrubbed
run record (as the `run-record` format writes it, each message's text whole; other strings past
`folding.VIEW_CHARS` folded, see `session_data`) and a `view` derived from it by the
same functions every other readable format uses (`header_facts`, the family's report sections,
`verdicts_of`, `failures_of`), with every display string passed through `textsafe.plain` (escape
sequences removed, bidi controls shown as `<U+202E>` tags). The report view carries report.json
as written, with its tables as the terminal and report.md print them (`table_cells`: a "protocol"
column when a row is not its protocol), a line per model that is not (`deviation_lines`) and what
the intervals are (`interval_note`).

The data is embedded as `<script type="application/json" id="data">`, with `<`, `>`, `&`,
U+2028 and U+2029 written as `\\uXXXX` escapes, so no text can close the script element or
open another; the JavaScript draws with `textContent`/`createElement` only, so model output and
environment text show as written, never as markup. Every string goes through the key redactor
(`export.formats.common.scrub_data`) before it is written. The output is deterministic: keys
sorted, no time of generation, paths relative to the folder, so the same folder gives the same
bytes.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from proactive_tui.textsafe import json_text, plain

ASSETS = "viewer_assets"
DATA_OPEN = '<script type="application/json" id="data">'
DATA_CLOSE = "</script>"

SOURCES = {"llm": "judge call", "human": "person", "rule": "rule", "scripted": "script"}
"""Who produced a score or verdict, as the page labels it (from `Score.by_kind`, a seat's kind):
a model's judging call, a person, a rule (the Chronos oracle, the confusion counts), or a script
(scripted seats in tests and demos). A kind not listed shows as written."""

_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SLOT = re.compile(r"@@(TITLE|CSS|JS|DATA)@@")


class ViewerError(ValueError):
    """A page that cannot be built or read (the message names the file and says why)."""


def _asset(name: str) -> str:
    return resources.files("proactive_tui.export").joinpath(ASSETS, name).read_text(encoding="utf-8")


def data_text(payload: Any) -> str:
    """The payload as JSON safe inside a script element: sorted keys, the invisible controls
    escaped (`json_text`), and `<`, `>`, `&`, U+2028, U+2029 as `\\uXXXX`. These characters only
    occur inside JSON strings, where the escape means the same character."""
    text = json_text(payload, sort_keys=True)
    return re.sub("[<>&\u2028\u2029]", lambda m: _SCRIPT_UNSAFE[m.group()], text)


def page(title: str, payload: dict[str, Any]) -> str:
    """The whole HTML file: the template with the title, the inline CSS and JS, and the data."""
    from proactive_tui.export.formats.common import scrub_data

    payload = scrub_data(payload)
    title = html.escape(plain(scrub_data(title)), quote=True)
    slots = {"TITLE": title, "CSS": _asset("viewer.css"), "JS": _asset("viewer.js"), "DATA": data_text(payload)}
    return _SLOT.sub(lambda m: slots[m.group(1)], _asset("viewer.html"))  # one pass: no slot text is read twice


def read_payload(text: str) -> dict[str, Any]:
    """The data a viewer page embeds (what its JavaScript draws), for tests and tools."""
    start = text.find(DATA_OPEN)
    end = text.find(DATA_CLOSE, start + len(DATA_OPEN)) if start >= 0 else -1
    if start < 0 or end < 0:
        raise ViewerError("not a proactive-tui viewer page: no data script element")
    return json.loads(text[start + len(DATA_OPEN):end])


# -- a session ------------------------------------------------------------------------------------


def source_of(kind: str) -> str:
    """A `by_kind` (or several, comma-separated, as ProactiveBench's mixed judges give) as labels."""
    kinds = [k.strip() for k in kind.split(",") if k.strip()]
    return ", ".join(SOURCES.get(k, k) for k in kinds) or "not recorded"


def _verdict_source(record: Any, judge: str) -> str:
    """Who gave a verdict: the oracle's rules, else the kind of the seat whose model it names."""
    from proactive_tui.core.verdicts import ORACLE

    if judge == ORACLE:
        return SOURCES["rule"]
    kinds = {info.kind for info in record.seats.values() if info.label == judge}
    return source_of(",".join(sorted(kinds))) if kinds else SOURCES["llm"]


def _comparison_text(record: Any, comparison: dict[str, Any]) -> str:
    verdict = {"won": "voted better", "lost": "the other side voted better", "tie": "voted a tie",
               None: "no vote yet"}.get(comparison.get("verdict"), str(comparison.get("verdict")))
    others = ", ".join(s for s in comparison.get("sessions", []) if s != record.id)
    reason = f": {comparison['reason']}" if comparison.get("reason") else ""
    blind = " (blind)" if comparison.get("blind") else ""
    return f"side {comparison.get('side')} against {others}{blind}; {verdict}{reason}"


def session_view(record: Any) -> dict[str, Any]:
    """What the page shows of a (scrubbed) run record, every string as `plain` shows it."""
    from proactive_tui.core import registry
    from proactive_tui.core.verdicts import value_text, verdicts_of
    from proactive_tui.core.run_record import failures_of
    from proactive_tui.export.formats.common import header_facts, map_strings

    family = registry.find(record.family)
    sections = family.report.sections(record) if family is not None else []  # as rich_view.family_sections, without Rich
    header = [["Family", family.title if family is not None else record.family]] + [list(f) for f in header_facts(record)]
    header += [[f"Comparison {c.get('id')}", _comparison_text(record, c)] for c in record.comparisons]
    labels = {str(row.get("verdict")): row for row in record.human_labels}
    verdicts = []
    for v in verdicts_of(record):
        entry = {"key": v.key, "kind": v.kind, "judge": v.judge, "value": value_text(v.value), "label": v.label,
                 "detail": v.detail, "source": _verdict_source(record, v.judge), "person": None}
        row = labels.get(v.key)
        if row is not None:  # a person's label on it (services.labels): shown beside the judge's, never instead
            entry["person"] = {"agree": bool(row.get("agree")), "value": value_text(row.get("value")),
                               "note": str(row.get("note") or ""), "source": SOURCES["human"]}
        verdicts.append(entry)
    scores = [{"name": s.name, "label": s.label, "display": s.display, "value": s.value, "by": s.by,
               "source": source_of(s.by_kind), "headline": s.headline} for s in record.scores]
    failures = [{"who": f.who, "kind": f.kind, "message": f.message} for f in failures_of(record)]
    view = {
        "id": record.id, "family": record.family, "env_id": record.env_id,
        "title": f"proactive-tui session {record.id}",
        "header": header,
        "sections": [s.model_dump(mode="json") for s in sections],
        "scores": scores, "verdicts": verdicts, "failures": failures,
    }
    from proactive_tui.folding import fold_view

    return map_strings(view, lambda text: fold_view(plain(text)))


def session_data(record: Any) -> dict[str, Any]:
    """One session as the page embeds it: its run record and its view. The record keeps each
    message's text whole, once; any other string of it longer than `folding.VIEW_CHARS` (the
    copies of earlier messages in each message's `visible_context`, which grow with the square of
    the dialogue) is folded, as the view's are: 1 MB replies made a 33 MB page. The run-record
    export keeps everything whole."""
    from proactive_tui.folding import fold_strings

    data = record.model_dump(mode="json")
    messages = data.pop("messages", [])
    data = fold_strings(data)
    data["messages"] = [{**fold_strings({k: v for k, v in m.items() if k != "content"}), "content": m.get("content")}
                        if isinstance(m, dict) else m for m in messages]
    return {"record": data, "view": session_view(record)}


def session_page(record: Any) -> str:
    """The viewer of one session (the `html` export format); `record` is already scrubbed."""
    return page(f"proactive-tui session {record.id}", {"kind": "session", "session": session_data(record)})


# -- a report folder ------------------------------------------------------------------------------


def report_data(folder: str | Path) -> dict[str, Any]:
    """A report folder as the page embeds it: report.json's report, its tables as printed, and
    every session with its record and view. `ViewerError` naming what cannot be read."""
    from proactive_tui.evalrun.opened import FolderProblem, open_folder
    from proactive_tui.evalrun.report import deviation_lines, interval_note, status_line, table_cells
    from proactive_tui.export.formats.common import map_strings, scrub

    folder = Path(folder)
    try:
        opened = open_folder(folder)
    except FolderProblem as exc:
        raise ViewerError(str(exc)) from None
    report = opened.report.model_dump(mode="json")
    if opened.source == "recomputed":  # recomputed now: its time would make every page differ
        report["timing"] = {"generated_at": ""}
    tables = []
    for family, table in opened.tables():
        header, rows = table_cells(table)
        align = ["left"] * (1 + bool(table.group_label)) + ["right"] * len(table.columns)  # model, group, values
        tables.append({"family": family, "id": table.id, "title": table.title, "header": header, "rows": rows,
                       "align": align + ["left"] * (len(header) - len(align)), "notes": table.notes})
    headlines = opened.headline_scores()
    sessions = []
    for entry in sorted(opened.sessions, key=lambda s: (s.key_id, s.status)):
        record = scrub(entry.record) if entry.record is not None else None
        headline = None
        if record is not None:
            score = record.score(headlines.get(record.family, ""))
            headline = None if score is None else {"name": score.name, "label": score.label,
                                                    "display": score.display, "value": score.value}
        path = Path(entry.path)
        sessions.append({
            "key_id": entry.key_id, "family": entry.key.family, "env_id": entry.key.env_id, "agent": entry.key.agent,
            "settings": dict(entry.key.settings), "repeat": entry.key.repeat, "status": entry.status,
            "reason": plain(entry.reason), "tags": entry.tags, "file": f"{path.parent.name}/{path.name}",
            "headline": headline, "session": session_data(record) if record is not None else None,
        })
    return {
        "kind": "report",
        "report": {"folder": folder.resolve().name, "source": opened.source, "status": status_line(opened.report),
                   "deviations": [plain(line) for line in deviation_lines(opened.report)],
                   "interval_note": plain(interval_note(opened.report)),
                   "data": report, "tables": map_strings(tables, plain), "problems": [plain(p) for p in opened.problems]},
        "sessions": sessions,
    }


def report_page(folder: str | Path) -> str:
    data = report_data(folder)
    return page(f"proactive-tui report {data['report']['folder']}", data)


def write_report_page(folder: str | Path, out: str | Path | None = None) -> Path:
    """Write the report viewer of `folder` to `out` (default `<folder>/report.html`)."""
    target = Path(out) if out is not None else Path(folder) / "report.html"
    text = report_page(folder)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ViewerError(f"could not write {target}: {exc.strerror or exc}") from None
    return target
