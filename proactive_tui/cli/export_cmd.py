"""`proactive-tui export ID... | --all --format F --out PATH`: recorded sessions to files.

The formats are the export registry's (`proactive_tui.export`), the same pure functions the
playground and batch evaluation call. With `--all`, sessions a format does not take (another
family's, or ones that never started) are skipped and counted rather than failing the export.
"""

from __future__ import annotations

import argparse
import sys

from proactive_tui.textsafe import say

BUILTIN = "proactiveeval, run-record, markdown, html, svg"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("export", help="write recorded sessions as dataset files, run records, markdown, html or svg")
    p.add_argument("session_ids", nargs="*", metavar="ID", help="sessions to export (unique id prefixes work)")
    p.add_argument("--all", action="store_true", help="every recorded session (with --env/--family to narrow it)")
    p.add_argument("--env", metavar="ENV_ID", help="with --all: only sessions of this environment or id prefix")
    p.add_argument("--family", help="with --all: only this family")
    p.add_argument("--format", "-f", required=True, metavar="F", help=f"one of: {BUILTIN} (and any a family adds)")
    p.add_argument("--out", "-o", required=True, metavar="PATH",
                   help="a file for one session (e.g. run.md), else a folder (one file per session; "
                        "proactiveeval writes <domain>/<tier>.json)")
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    say(f"error: {message}", file=sys.stderr)
    return 1


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from proactive_tui.services.labels import with_labels
    from proactive_tui.export import load_formats
    from proactive_tui.export.registry import ExportError, export
    from proactive_tui.store import StoreError, list_sessions, load_record, open_store, resolve_id

    formats = load_formats()
    exporter = formats.get(args.format)
    if exporter is None:
        return _fail(f"unknown export format {args.format!r}; choose one of: {', '.join(sorted(formats))}")
    if bool(args.session_ids) == bool(args.all):
        return _fail("name the sessions to export (IDs) or pass --all, not both")
    skipped: list[str] = []
    try:
        with open_store() as store:
            if args.all:
                ids = [row.id for row in list_sessions(store, env_id=args.env, family=args.family)]
            else:
                ids = [resolve_id(store, text) for text in args.session_ids]
            records = []
            for session_id in ids:
                try:
                    record = load_record(store, session_id)
                except StoreError:
                    if not args.all:
                        raise
                    skipped.append(f"{session_id} (never started)")
                    continue
                if args.all and not exporter.accepts(record):
                    skipped.append(f"{session_id} ({record.family})")
                    continue
                records.append(with_labels(store, record))  # a person's labels go out as human annotations
    except StoreError as exc:
        return _fail(str(exc))
    if not records:
        return _fail("no sessions to export" + (f"; skipped: {', '.join(skipped)}" if skipped else ""))
    try:
        written = export(records, args.format, Path(args.out))
    except ExportError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"could not write {args.out}: {exc.strerror or exc}")
    for path in written:
        say(path)
    note = f"{len(records)} session{'s' * (len(records) != 1)} exported as {args.format}"
    if skipped:
        note += f"; skipped {len(skipped)} the format does not take: {', '.join(skipped)}"
    say(note, file=sys.stderr)
    return 0
