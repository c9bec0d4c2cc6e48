"""`proactive-tui report show DIR`, `report merge DIR... [--out DIR]` and `report html DIR [--out FILE]`:
a batch folder's report, recomputed from its run records (`evalrun.report`); shard folders combined
into the report one unsharded run gives (a job array's last step); and the folder as one
self-contained web page (`export.viewer`) for someone with nothing installed."""

from __future__ import annotations

import argparse
from pathlib import Path

from proactive_tui.textsafe import plain, say


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    rp = subparsers.add_parser("report", help="show or merge the reports of `eval` batch folders")
    sub = rp.add_subparsers(title="report commands", metavar="COMMAND", required=True)
    show = sub.add_parser("show", help="print a batch folder's tables, recomputed from its run records")
    show.add_argument("dir", metavar="DIR")
    show.add_argument("--write", action="store_true", help="also rewrite the folder's report files")
    show.set_defaults(func=run_show)
    merge = sub.add_parser("merge", help="combine shard folders (`eval --shard I/N`) into one folder and report")
    merge.add_argument("dirs", nargs="+", metavar="DIR")
    merge.add_argument("--out", metavar="DIR", help="the merged folder (default: `merged` beside the first DIR)")
    merge.set_defaults(func=run_merge)
    page = sub.add_parser("html", help="write a batch folder as one self-contained web page: tables, sessions, transcripts")
    page.add_argument("dir", metavar="DIR")
    page.add_argument("--out", metavar="FILE", help="the page to write (default: DIR/report.html)")
    page.set_defaults(func=run_html)


def _consoles():
    from proactive_tui.cli.printer import SafeConsole

    err = SafeConsole(stderr=True, highlight=False, soft_wrap=True)
    console = SafeConsole(highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console = SafeConsole(highlight=False, soft_wrap=True, width=200)
    return console, err


def run_show(args: argparse.Namespace) -> int:
    from rich.text import Text

    from proactive_tui.cli.eval_batch import print_report
    from proactive_tui.evalrun.report import report_of_folder, write_report

    console, err = _consoles()
    folder = Path(args.dir)
    try:
        report = report_of_folder(folder)
    except (OSError, ValueError) as exc:
        err.print(Text(plain(f"error: {exc}"), style="red"))
        return 1
    if args.write:
        write_report(folder, report)
    print_report(console, report)
    err.print(Text(f"browse it (sort, filter, charts, each session's transcript): proactive-tui --report {folder}; "
                   f"as one web page for someone with nothing installed: proactive-tui report html {folder}", style="dim"))
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from rich.text import Text

    from proactive_tui.cli.eval_batch import print_report
    from proactive_tui.evalrun.report import MergeError, merge_folders, status_line

    console, err = _consoles()
    folders = [Path(d) for d in args.dirs]
    out = Path(args.out) if args.out else folders[0].parent / "merged"
    if out.resolve() in {f.resolve() for f in folders}:
        err.print(Text("error: --out must be a new folder, not one of the shards", style="red"))
        return 2
    try:
        report = merge_folders(folders, out)
    except (OSError, ValueError, MergeError) as exc:
        err.print(Text(plain(f"error: {exc}"), style="red"))
        return 1
    print_report(console, report)
    err.print(Text(plain(f"{status_line(report)}; merged into {out}"), style="dim"))
    return 0


def run_html(args: argparse.Namespace) -> int:
    from rich.text import Text

    from proactive_tui.export.viewer import ViewerError, write_report_page

    _, err = _consoles()
    try:
        path = write_report_page(Path(args.dir), Path(args.out) if args.out else None)
    except ViewerError as exc:
        err.print(Text(plain(f"error: {exc}"), style="red"))
        return 1
    say(path)
    err.print(Text("open it in any browser; it loads nothing from the network", style="dim"))
    return 0
