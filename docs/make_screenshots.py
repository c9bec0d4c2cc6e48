"""The README's screenshots, made by the app itself on the embedded offline model.

    python docs/make_screenshots.py [--out docs/screenshots] [--only NAME ...]

Drives the real playground through Textual's `App.run_test` and its Pilot, the way a person
would, at 110x34, and saves each screen as SVG. Every seat (agent, user, judge) is the embedded
model `local/smollm2` with a fixed seed, so the text and scores shown are real model output (the
135M demo model's: not meaningful as an evaluation). Sessions are kept short (two turns, two
events); the whole run takes a few minutes on 2 cores.

It never touches your own config or session history: `PROACTIVE_TUI_CONFIG` and
`PROACTIVE_TUI_DATA` point into a temporary folder, and the report folder for the results screen
is made there by `proactive-tui eval` and opened by a relative name (built-in environments are
shown as "built-in sample, families/..." wherever the package lives). Before an SVG is written,
its text is checked for this machine's paths and anything shaped like a key; a hit stops the
script.

`SHOTS` (name -> caption) is what the README shows; tests/test_screenshots_docs.py checks the
README, this list and the files against each other.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
SIZE = (110, 34)
MODEL = "local/smollm2"
SEED = 0
PE_ENV = "proactiveeval/persuasion/fair/0"
PB_ENV = "proactivebench/coding_01"
CHRONOS_ENV = "chronos/car-purchase/positive"
BRANCH_EDIT = "How about walking to the station with me tomorrow instead of the taxi? It is only 900 m."

SHOTS: dict[str, str] = {
    'picker': "The picker: the three families with their domains and tiers folded to counts, and the highlighted environment's preview.",
    'session': 'A watched ProactiveEval session: the transcript beside the judge panels (plan score, sub-target checklist, per-turn checks, guidance score) filled in by the judge model.',
    'play': "Play mode: a person in the user seat, typing a reply to the agent's opening.",
    'proactivebench': "A ProactiveBench session: the observed events on a timeline, the agent's proposal and the judge's verdict under each, and the confusion matrix with its metrics.",
    'chronos': "A Chronos session: the simulated clock and states, the agent's task description, and each turn's action checked against the oracle.",
    'fork': 'Forking a finished session (`F`): pick a reply, edit it or have it asked again, and a branch runs on from there; the original stays as it was.',
    'branch': "The branch switcher (`b`) after forking with an edited agent reply: the session's branch tree, what the branch changed and how its scores differ from the parent's.",
    'results': 'The results screen on a batch report folder (`proactive-tui eval ... --out DIR`, here three sessions on the embedded model).',
    'light': 'The same ProactiveEval session in the `textual-light` theme (`ctrl+t` cycles the themes).',
    'history': 'The History screen: the sessions the script recorded, of all three families, to replay, resume, fork or export.',
    'studio': "The studio (`g` on the picker): ProactiveEval's data pipeline making one environment on the embedded model, stage by stage (the topic, U and F, the target candidates side by side; the reference, probes and votes follow below); the item list gives each item's fate, here rejected as `empty` (the 135M demo model's ensemble gave no usable reference).",
}
"""name -> the README's caption under it, in the README's order; the file is `<name>.svg`."""

GUARD_S = 1200.0
"""Wall-clock seconds any one wait may take before the script gives up (a hang guard only)."""


def forbidden_texts() -> list[str]:
    """What no screenshot may contain: this machine's paths and key-like strings."""
    home = str(Path.home())
    out = ["/work/", "/tmp/", str(ROOT), tempfile.gettempdir() + "/"]
    if home not in ("/", ""):
        out.append(home)
    return out


def check_svg_text(text: str, name: str) -> None:
    for bad in forbidden_texts():
        if bad in text:
            i = text.index(bad)
            raise SystemExit(f"screenshot {name!r} shows {bad!r} ({text[max(0, i - 80):i + 80]!r}): not written")
    if re.search(r"(?<![A-Za-z0-9])sk-", text):
        raise SystemExit(f"screenshot {name!r} shows something that starts like a key (sk-): not written")
    if re.search(r"(api[_-]?key|secret)\s*[=:]\s*\S{8,}", text, re.IGNORECASE):
        raise SystemExit(f"screenshot {name!r} shows something shaped like a key: not written")


# -- waiting ------------------------------------------------------------------------------------


async def wait_for(pilot: Any, predicate: Callable[[], bool], what: str) -> None:
    start = time.monotonic()
    while not predicate():
        await pilot.pause(0.2)
        if time.monotonic() - start > GUARD_S:
            raise SystemExit(f"gave up waiting for {what}")


def _busy(screen: Any) -> bool:
    return any(not w.is_finished and (w.node is screen or screen in getattr(w.node, "ancestors", ()))
               for w in screen.app.workers)


def _scroll_state(screen: Any) -> tuple:
    return tuple((id(w), w.scroll_y, w.max_scroll_y, tuple(w.virtual_size), tuple(w.size))
                 for w in [screen, *screen.query("*")] if w.is_scrollable)


async def settle(pilot: Any, screen: Any = None, waiting_for_person: bool = False) -> None:
    """Until the screen's workers are done and its layout is unchanged for a few rounds."""
    screen = screen or pilot.app.screen
    previous, stable, start = None, 0, time.monotonic()
    while stable < 4:
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.1)
        state = _scroll_state(screen)
        stable = stable + 1 if (waiting_for_person or not _busy(screen)) and state == previous else 0
        previous = state
        if time.monotonic() - start > GUARD_S:
            raise SystemExit("the screen never settled")


# -- the shots ----------------------------------------------------------------------------------


class Shooter:
    def __init__(self, out: Path, only: set[str] | None) -> None:
        self.out = out
        self.only = only
        self.written: list[str] = []

    def wanted(self, *names: str) -> bool:
        return self.only is None or any(n in self.only for n in names)

    def save(self, app: Any, name: str) -> None:
        assert name in SHOTS, name
        if self.only is not None and name not in self.only:
            return
        svg = app.export_screenshot(title=f"proactive-tui · {name}")
        check_svg_text(svg, name)
        (self.out / f"{name}.svg").write_text(svg, encoding="utf-8")
        self.written.append(name)
        print(f"  wrote {name}.svg", flush=True)


def spec_for(env_id: str, human: str | None = None, **settings: Any) -> Any:
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.llm.settings import ModelSettings, RoleSettings

    ms = ModelSettings(model=MODEL, seed=SEED)
    spec = SessionSpec(env_id=env_id, roles=RoleSettings(agent=ms, user=ms, judge=ms), settings=settings)
    if human:
        spec.seats[human] = "human"
    return spec


def new_app() -> Any:
    from proactive_tui.ui.app import ProactiveApp

    return ProactiveApp()


async def shot_picker(sh: Shooter) -> None:
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.screen.tree
        node = next(n for n in tree.leaves() if n.data.id == PE_ENV)
        on_path, up = set(), node
        while up is not None:
            on_path.add(id(up))
            up = up.parent
        # every family stays open; the domains and tiers off the highlighted one fold (as a person
        # would with the left arrow), so all three families fit on one screen
        stack = list(tree.root.children)
        while stack:
            n = stack.pop()
            stack.extend(n.children)
            if n.children and n.parent is not tree.root and id(n) not in on_path:
                n.collapse()
        await pilot.pause()
        tree.move_cursor(node)
        await settle(pilot)
        sh.save(app, "picker")


async def run_session(pilot: Any, app: Any, env_id: str, **settings: Any) -> Any:
    env = app.environments.get(env_id)
    app.start_session(env, spec_for(env_id, **settings))
    await pilot.pause()
    screen = app.screen
    await wait_for(pilot, lambda: screen.ended is not None, f"the {env_id} session to end")
    await settle(pilot, screen)
    return screen


async def shot_session_fork_light(sh: Shooter) -> None:
    from textual.widgets import OptionList, TextArea

    from proactive_tui.ui.screens.branches import BranchSwitcher
    from proactive_tui.ui.screens.fork_modal import ForkModal

    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await run_session(pilot, app, PE_ENV, max_turns=2, seed=SEED, agreeableness="low")
        sh.save(app, "session")
        await pilot.press("F")
        await wait_for(pilot, lambda: isinstance(app.screen, ForkModal), "the fork modal")
        modal = app.screen
        agent_steps = [i for i, s in enumerate(modal.steps) if s.seat == "agent"]
        if agent_steps:
            modal.query_one("#fork-steps", OptionList).highlighted = agent_steps[-1]
        await settle(pilot, modal)
        sh.save(app, "fork")
        if sh.wanted("branch"):
            # a person's edit of the agent's reply: the branch runs on from it, judged anew
            modal.query_one("#fork-text", TextArea).load_text(BRANCH_EDIT)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: app.screen is not modal and getattr(app.screen, "fork", None) is not None,
                           "the branch's screen")
            branch = app.screen
            await wait_for(pilot, lambda: branch.ended is not None, "the branch to end")
            await settle(pilot, branch)
            await pilot.press("b")
            await wait_for(pilot, lambda: isinstance(app.screen, BranchSwitcher), "the branch switcher")
            await settle(pilot, app.screen)
            sh.save(app, "branch")
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is branch, "the branch's screen again")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, "the session screen again")
        app.theme = "textual-light"
        await settle(pilot, screen)
        sh.save(app, "light")
        app.theme = "proactive-dark"
        await pilot.pause()


async def shot_play(sh: Shooter) -> None:
    from proactive_tui.ui.widgets.compose_box import ComposeBox

    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        env = app.environments.get(PE_ENV)
        app.start_session(env, spec_for(PE_ENV, human="user", max_turns=2, seed=SEED, agreeableness="low"))
        await pilot.pause()
        screen = app.screen
        box = screen.query_one(ComposeBox)
        await wait_for(pilot, lambda: not box.disabled, "the agent's opening and the compose box")
        box.focus()
        await pilot.press(*"I already walk to the station, so I am not sure I need more.")
        await settle(pilot, screen, waiting_for_person=True)
        sh.save(app, "play")
        await pilot.press("escape", "x")  # leave the box, then stop (recorded as stopped)
        await wait_for(pilot, lambda: screen.ended is not None, "the played session to stop")


async def shot_bench(sh: Shooter) -> None:
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await run_session(pilot, app, PB_ENV, max_events=2)
        sh.save(app, "proactivebench")


async def shot_chronos(sh: Shooter) -> None:
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await run_session(pilot, app, CHRONOS_ENV, max_turns=3)
        sh.save(app, "chronos")


async def shot_history(sh: Shooter) -> None:
    from proactive_tui.ui.screens.history import HistoryScreen

    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_history()
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.current is not None,
                       "the history table")
        await settle(pilot, app.screen)
        sh.save(app, "history")


async def shot_studio(sh: Shooter, work: Path) -> None:
    """One ProactiveEval item made in the studio on the embedded model, with the paper's stages
    cut to their smallest (one topic, two candidates, no refinement round, one validator) so the
    shot takes about a minute; the folder is in the temporary work folder (its name is shown)."""
    from proactive_tui.cli.main import build_parser
    from proactive_tui.synth import setup
    from proactive_tui.ui.studio.screen import StudioScreen

    argv = ["synth", "proactiveeval", "--domain", "recommendation", "--n", "1", "--seed", str(SEED), "--depth", "1",
            "--branching", "1", "--candidates", "2", "--max-rounds", "0", "--validators", "1", "--concurrency", "1",
            "--out", str(work / "studio-run"), "--out-only"]
    for role in ("generator", "probe", "judge", "validator"):
        argv += ["--role", f"{role}={MODEL}"]
    args = build_parser().parse_args(argv)
    prepared = setup.prepare(args)
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = StudioScreen(prepared, args.concurrency, mode="auto")
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.finished, "the studio's item")
        await settle(pilot, screen)
        sh.save(app, "studio")


def make_report(work: Path) -> None:
    """A tiny batch of all three families on the embedded model, into `work/report` (and the
    temporary history, so History lists them too)."""
    cmd = [sys.executable, "-m", "proactive_tui", "eval", "run", PE_ENV, PB_ENV, CHRONOS_ENV,
           "--agent", MODEL, "--user", MODEL, "--judge", MODEL, "--agreeableness", "low",
           "--max-turns", "2", "--max-events", "2", "--seed", str(SEED),
           "--concurrency", "1", "--out", "report"]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    subprocess.run(cmd, cwd=work, env=env, check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)


async def shot_results(sh: Shooter, work: Path) -> None:
    from proactive_tui.ui.screens.results import ResultsScreen

    if not (work / "report" / "report.json").exists():
        make_report(work)
    app = new_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        os.chdir(work)  # the report folder is opened (and shown) by its relative name
        try:
            assert app.open_report("report"), "the report folder did not open"
            await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen), "the results screen")
            screen = app.screen
            await settle(pilot, screen)
            # `t` on to ProactiveEval's guidance table, as a person would
            titles = [t.title for _, t in screen.tables]
            print("    tables:", "; ".join(titles), flush=True)
            for _ in range(len(titles)):
                if "ProactiveEval" in screen.current[1].title and "guidance" in screen.current[1].title:
                    break
                await pilot.press("t")
                await pilot.pause()
            await settle(pilot, screen)
            sh.save(app, "results")
        finally:
            os.chdir(ROOT)


async def main_async(out: Path, only: set[str] | None, work: Path) -> list[str]:
    sh = Shooter(out, only)
    steps: list[tuple[tuple[str, ...], Callable[[], Any]]] = [
        (("picker",), lambda: shot_picker(sh)),
        (("session", "fork", "branch", "light"), lambda: shot_session_fork_light(sh)),
        (("play",), lambda: shot_play(sh)),
        (("proactivebench",), lambda: shot_bench(sh)),
        (("chronos",), lambda: shot_chronos(sh)),
        (("results",), lambda: shot_results(sh, work)),
        (("studio",), lambda: shot_studio(sh, work)),
        (("history",), lambda: shot_history(sh)),  # last: the sessions above are in its store
    ]
    for names, step in steps:
        if sh.wanted(*names):
            print(f"{', '.join(names)} ...", flush=True)
            await step()
    return sh.written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"), help="folder for the SVGs")
    parser.add_argument("--only", nargs="+", choices=sorted(SHOTS), help="make only these screenshots")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="proactive-shots-") as tmp:
        work = Path(tmp)
        os.environ["PROACTIVE_TUI_CONFIG"] = str(work / "config.toml")
        os.environ["PROACTIVE_TUI_DATA"] = str(work / "data")
        os.environ["PROACTIVE_TUI_NO_PRELOAD"] = "1"
        os.environ.pop("PROACTIVE_TUI_SAMPLE_ENVS", None)
        sys.path.insert(0, str(ROOT))
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            written = asyncio.run(main_async(out, set(args.only) if args.only else None, work))
        finally:
            os.chdir(cwd)
    print(f"{len(written)} screenshot(s) in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
