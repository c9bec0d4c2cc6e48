"""`proactive-tui envs list|show|validate`: browse and check environment files from a script."""

from __future__ import annotations

import argparse
import sys

from proactive_tui.textsafe import plain, say


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    envs = subparsers.add_parser("envs", help="list, show and validate environments")
    sub = envs.add_subparsers(title="envs commands", metavar="ACTION", required=True)

    listing = sub.add_parser("list", help="a table of the environments found")
    listing.add_argument("--family", help="only this family (proactiveeval, proactivebench, chronos or a plug-in)")
    listing.add_argument("--domain", help="only this domain (e.g. recommendation, coding, car_purchase)")
    listing.add_argument("--envs", dest="sub_envs", action="append", default=[], metavar="PATH", help="extra folder or file (repeatable)")
    listing.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    listing.set_defaults(func=run_list)

    show = sub.add_parser("show", help="one environment in full")
    show.add_argument("env_id", metavar="ID")
    show.add_argument("--envs", dest="sub_envs", action="append", default=[], metavar="PATH",
                      help="extra environment folder or file, loaded beside the samples (repeatable)")
    show.add_argument("--json", action="store_true", help="print the environment as JSON")
    show.set_defaults(func=run_show)

    validate = sub.add_parser("validate", help="check files; exit 1 listing every problem")
    validate.add_argument("paths", nargs="+", metavar="PATH")
    validate.set_defaults(func=run_validate)


def _configured_envs() -> list[str]:
    """The config's `envs` folders, which the playground and `run` load too (a config that cannot
    be read is said once and left out, as the playground does)."""
    from proactive_tui.config import ConfigError, load_config

    try:
        return list(load_config().envs)
    except ConfigError as exc:
        from proactive_tui.textsafe import plain

        say(plain(f"warning: config file not used: {exc}"), file=sys.stderr)
        return []


def _load(args: argparse.Namespace):
    from proactive_tui.envs import load_default

    extra = list(getattr(args, "envs", []) or [])
    return load_default(_configured_envs() + extra)


def _report_shared(shared, stream=sys.stderr) -> None:
    """Ids that several sources hold: notes, not problems (every holder is listed)."""

    if not shared:
        return
    say(f"note: {len(shared)} id(s) are in more than one source; your data keeps the id, the other holder is "
        "listed as SOURCE:ID (builtin: for what ships with proactive-tui):", file=stream)
    for one in shared:
        say(plain(f"note: {one.render()}"), file=stream)


def _report_problems(problems, stream=sys.stderr) -> None:

    for problem in problems:  # a message may quote a file's own text: never let it act on the terminal
        say(plain(problem.render()), file=stream)


def run_list(args: argparse.Namespace) -> int:
    if args.family:
        from proactive_tui.core import registry

        if registry.find(args.family) is None:
            say(f"error: no family named {args.family!r} (installed: {', '.join(registry.names())})", file=sys.stderr)
            return 2
    envset = _load(args)
    envs = envset.filtered(args.family, args.domain)
    if args.json:
        from proactive_tui.textsafe import json_text

        for env in envs:
            say(json_text({"id": env.id, "family": env.family, "domain": env.domain, "tier": env.tier, "title": env.title,
                           "source": env.origin.name if env.origin is not None else None}))
    else:
        _print_table(envs)
    listed = {env.id for env in envs}
    _report_shared([one for one in envset.shared if any(h.id in listed for h in one.holders)])
    if envset.problems:
        say(f"{len(envset.problems)} problem(s) while loading; run `proactive-tui envs validate PATH` for details:", file=sys.stderr)
        _report_problems(envset.problems)
    return 0


def _print_table(envs: list) -> None:
    """The environments as a table, written as it is made.

    Ids are what a person copies into `envs show` / `run`: never cut. On a terminal narrower than
    110 columns family, domain and tier go (the id holds them); where each comes from is a column
    when that varies (the built-in ones, your envs folder, --envs folders). The title, then the
    domain and source, then the title, give way to the terminal's width, cut with `…`.

    Drawn here rather than by Rich's Table: Rich measures and renders every cell as a renderable
    (about 0.1 ms a cell), so 200,000 environments took most of a minute and a gigabyte before the
    first line; this is one pass to measure and one to write, in batches, with the same look.
    """
    from proactive_tui.cli.printer import SafeConsole

    width = SafeConsole().width  # the terminal's width as Rich reads it (COLUMNS included); every cell is plain()
    wide = width >= 110
    sources = wide and len({env.origin.name for env in envs if env.origin is not None}) > 1
    # (header, cap on the width or None, the narrowest it may be squeezed to, or None: never cut)
    columns: list[tuple[str, int | None, int | None]] = [("id", None, None)]
    if wide:
        columns += [("family", None, None), ("domain", 21, 6), ("tier", None, None)]
    if sources:
        columns.append(("source", 16, 6))
    columns.append(("title", None, 8))
    rows = []
    for env in envs:
        cells = [env.id] + ([env.family, env.domain, env.tier or "-"] if wide else [])
        cells += [env.origin.name if env.origin is not None else "-"] if sources else []
        cells.append(env.title)
        rows.append([plain(str(v)).replace("\n", " ") for v in cells])
    widths = _column_widths(columns, rows, width)
    out = sys.stdout
    out.write(f"{len(envs)} environments\n")
    out.write("┏" + "┳".join("━" * (w + 2) for w in widths) + "┓\n")
    out.write("┃" + "┃".join(" " + _cell(h, w) + " " for (h, _, _), w in zip(columns, widths)) + "┃\n")
    out.write("┡" + "╇".join("━" * (w + 2) for w in widths) + "┩\n")
    batch: list[str] = []
    for row in rows:
        batch.append("│" + "│".join(" " + _cell(v, w) + " " for v, w in zip(row, widths)) + "│")
        if len(batch) >= 2000:
            out.write("\n".join(batch) + "\n")
            batch.clear()
    batch.append("└" + "┴".join("─" * (w + 2) for w in widths) + "┘")
    out.write("\n".join(batch) + "\n")
    out.flush()


def _column_widths(columns: list[tuple[str, int | None, int | None]], rows: list[list[str]], width: int) -> list[int]:
    """Each column as wide as its widest cell (capped); then, while the table is wider than the
    terminal, the squeezable columns give way: domain and source (the id holds the domain), then
    the title."""
    from rich.cells import cell_len

    natural = [cell_len(h) for h, _, _ in columns]
    for row in rows:
        for i, value in enumerate(row):
            n = len(value) if value.isascii() else cell_len(value)
            if n > natural[i]:
                natural[i] = n
    widths = [min(n, cap) if cap else n for n, (_, cap, _) in zip(natural, columns)]
    over = sum(widths) + 3 * len(widths) + 1 - width
    for i in sorted(range(len(columns)), key=lambda i: columns[i][0] == "title"):  # the id holds the domain
        floor = columns[i][2]
        if over <= 0:
            break
        if floor is not None and widths[i] > floor:
            give = min(over, widths[i] - floor)
            widths[i] -= give
            over -= give
    return widths


def _cell(text: str, width: int) -> str:
    """`text` in exactly `width` terminal cells: padded, or cut with `…`."""
    if text.isascii():
        return text.ljust(width) if len(text) <= width else text[: width - 1] + "…"
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) <= width:
        return set_cell_size(text, width)
    return set_cell_size(set_cell_size(text, width - 1) + "…", width)


def run_show(args: argparse.Namespace) -> int:
    envset = _load(args)
    env = envset.get(args.env_id)
    if env is None:
        close = [e.id for e in envset.environments if args.env_id in e.id][:5]
        hint = f" (did you mean: {', '.join(close)}?)" if close else " (see `proactive-tui envs list`)"
        from proactive_tui.textsafe import plain

        say(plain(f"no environment with id {args.env_id!r}{hint}"), file=sys.stderr)
        return 1
    if args.json:
        from proactive_tui.textsafe import json_text

        say(json_text(env, indent=2))
        return 0
    from proactive_tui.cli.printer import SafeConsole

    from proactive_tui.envs.describe import describe
    from proactive_tui.textsafe import plain

    console = SafeConsole()
    for heading, body in describe(env):  # environment text is data: escapes never reach the terminal
        if heading:
            console.rule(plain(heading), align="left", style="bold")
        console.print(plain(body), highlight=False, markup=False)
    return 0


def _shared_with_default(paths: list[str], envset) -> list:
    """The ids the files share with what the app loads anyway (the user's folder, the samples, the
    config's folders), as the app would settle them (`envs.sources`): your file keeps an id a
    sample has, and is listed as `<folder>:<id>` beside an earlier folder of yours with the id.
    Notes, not problems: nothing is skipped."""
    from proactive_tui.envs import load_default
    from proactive_tui.envs.describe import shown_source

    mine = {shown_source(env.source) for env in envset.environments}
    together = load_default(_configured_envs() + list(paths))
    return [one for one in together.shared if any(h.source in mine for h in one.holders)]


def run_validate(args: argparse.Namespace) -> int:
    from proactive_tui.envs import load_paths

    envset = load_paths(args.paths)
    shared = _shared_with_default(args.paths, envset)
    _report_problems(envset.problems, stream=sys.stdout)
    _report_shared(shared, stream=sys.stdout)
    status = "OK" if not envset.problems else "FAILED"
    notes = f", {len(shared)} id(s) shared with other sources (notes above)" if shared else ""
    say(
        f"{status}: {len(envset.environments)} environment(s) loaded from {envset.files_read} file(s), "
        f"{len(envset.problems)} problem(s){notes}"
    )
    return 1 if envset.problems else 0
