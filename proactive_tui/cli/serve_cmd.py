"""`proactive-tui serve [--host H] [--port P] [--allow-remote] [--public-url URL] [--no-token] [--demo SESSION]`:
the playground in a browser.

Loopback by default. Whoever can open the page drives the app with this machine's keys, so binding
any other address needs `--allow-remote`, and then the command says so before it listens. The
printed URL carries a random token without which nothing is served (as Jupyter does), since any
local process could otherwise drive the app; `--no-token` drops it, on loopback only. See
`proactive_tui.webserve` for what the server adds to textual-serve (the token, an origin check,
apps that end with their tab and with serve, no external request).
"""

from __future__ import annotations

import argparse
import sys

from proactive_tui.textsafe import say

REMOTE_WARNING = ("warning: listening on {host}: anyone who can reach port {port} drives this playground and "
                  "spends its keys (every model the config or the environment has a key for)")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("serve", help="serve the playground in a browser (textual-serve); loopback only "
                              "unless --allow-remote")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a --host other than loopback: anyone who can reach the port drives the app and "
                   "spends its keys")
    p.add_argument("--public-url", metavar="URL", help="the address people type (behind a proxy, or a name "
                   "for a wildcard bind); only pages from it may drive the app. Default http://HOST:PORT")
    p.add_argument("--no-token", action="store_true",
                   help="serve without the URL's token (loopback only): then any program on this machine can "
                   "drive the app and spend its keys")
    p.add_argument("--envs", dest="sub_envs", action="append", default=[], metavar="PATH",
                   help="extra environment folder or file for every browser session (repeatable)")
    p.add_argument("--demo", metavar="SESSION_OR_FILE", help="every tab opens straight into this recorded "
                   "session's demo (as `proactive-tui demo`: no keys, no model calls, nothing recorded)")
    p.add_argument("--speed", type=float, default=1.0, metavar="X", help="with --demo: times the recorded pace "
                   "(0: step by step)")
    p.add_argument("--step", action="store_true", help="with --demo: start paused")
    p.set_defaults(func=run)


def plan(args: argparse.Namespace):  # -> PlaygroundServer; raises ServeError
    """Check the options and build the server, without listening."""
    from pathlib import Path

    from proactive_tui.webserve import (PlaygroundServer, ServeError, app_command, default_public_url, is_loopback,
                                        new_token)

    if not 0 < args.port < 65536:
        raise ServeError(f"--port must be between 1 and 65535, not {args.port}")
    if not is_loopback(args.host) and not args.allow_remote:
        raise ServeError(f"--host {args.host} is reachable from other machines: anyone who can reach it would "
                         "drive this playground and spend its keys. Add --allow-remote if that is what you want")
    if args.no_token and not is_loopback(args.host):
        raise ServeError(f"--no-token is for a loopback --host only: on {args.host} anyone who can reach port "
                         f"{args.port} would drive this playground and spend its keys without knowing the token")
    envs = [str(Path(p).expanduser().resolve()) for p in (getattr(args, "envs", None) or [])]
    missing = [p for p in envs if not Path(p).exists()]
    if missing:
        raise ServeError(f"--envs {missing[0]}: no such file or folder")
    report = getattr(args, "report", None)
    if report:
        from proactive_tui.evalrun.opened import problem

        report = str(Path(report).expanduser().resolve())
        why = problem(Path(report))
        if why:
            raise ServeError(why)
    demo: list[str] = []
    if args.demo:  # checked here, once, so a wrong id is one line now rather than a dead tab later
        from proactive_tui.cli import demo_cmd
        from proactive_tui.services.demo import DemoError

        try:
            session_id = demo_cmd.prepare(argparse.Namespace(session=args.demo, speed=args.speed)).session_id
        except DemoError as exc:
            raise ServeError(f"--demo {args.demo}: {exc}") from None
        demo = ["demo", session_id, "--speed", f"{args.speed:g}", *(["--step"] if args.step else [])]
    elif args.speed != 1.0 or args.step:
        raise ServeError("--speed and --step go with --demo")
    public_url = args.public_url or default_public_url(args.host, args.port)
    return PlaygroundServer(app_command(envs, report, demo), host=args.host, port=args.port, public_url=public_url,
                            token=None if args.no_token else new_token())


def run(args: argparse.Namespace) -> int:
    try:
        from proactive_tui.webserve import ServeError
    except ImportError as exc:  # an install without the serve dependency
        say(f"error: `serve` needs textual-serve ({exc.name} is missing): pip install textual-serve", file=sys.stderr)
        return 1
    try:
        server = plan(args)
    except ServeError as exc:
        say(f"error: {exc}", file=sys.stderr)
        return 2
    from proactive_tui.webserve import is_loopback

    if not is_loopback(args.host):
        say(REMOTE_WARNING.format(host=args.host, port=args.port), file=sys.stderr)
    try:
        server.serve()
    except OSError as exc:  # the port is taken, or the address is not this machine's
        say(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0
