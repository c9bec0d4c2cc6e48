"""Every command that prints model or environment text prints nothing a terminal acts on.

A model reply, a model string and an environment file each carry a window title (OSC 0), a
clipboard write (OSC 52), a clear screen (CSI 2J), 8-bit C1 controls and bidi overrides. Every
command that prints them (run, sessions list/show/fork --list/tree, labels, envs list/show/
validate, eval, eval splits, report show, regrade, export, synth, a mistyped command line) is run
as a person runs it, and no raw ESC, BEL, C1 control or bidi control may reach stdout or stderr. Before, `sessions fork ID --list`
printed replies raw and the run header echoed a model string raw. The second test holds the
structure that makes this true for printers not listed here: the command modules print only
through `textsafe.say` and `cli.printer.SafeConsole`, which pass every line through `plain`.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from conftest import PACKAGE

HOSTILE = ("\x1b]0;TITLE\x07 \x1b]52;c;cHduZWQ=\x07 \x1b[2J \x9b31m \x9d0;T\x9c \x85nel \x90dcs\x9c "
           "\u202eevil\u202c \u2066iso\u2069 \u200fend")
"""OSC 0, OSC 52, CSI 2J, 8-bit CSI/OSC/NEL/DCS/ST, and bidi overrides, isolates and marks."""
MODEL = "openai/agent-m\x1b]0;MODEL\x07\x9b2J\u202e"
"""A model string with escapes: the run header, `sessions list` and the batch tables print it."""
BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def raw_controls(data: bytes) -> list[str]:
    """Every character in the output a terminal would act on, or that reorders the line."""
    text = data.decode("utf-8", errors="replace")
    found = {ch for ch in text if ch in BIDI or ch in "\x1b\x07" or 0x80 <= ord(ch) <= 0x9F
             or (ord(ch) < 0x20 and ch not in "\n\t\r")}
    return sorted(f"U+{ord(ch):04X}" for ch in found)


def hostile_pe_responder(body: dict) -> str:
    """ProactiveEval's seats as tests/test_run_command plays them, every free text with HOSTILE."""
    from family_runs import with_text
    from test_run_command import judge_aware_responder

    return with_text(judge_aware_responder, HOSTILE)(body)


def test_every_command_that_prints_model_or_file_text_prints_no_raw_control(tmp_path: Path) -> None:
    from family_runs import RUNS, cli, hostile_env_files, run_family, session_id_of, with_text
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    envs = tmp_path / "envs"
    env_ids = hostile_env_files(envs, HOSTILE)
    outputs: dict[str, object] = {}
    sessions: list[str] = []

    def check(name: str, args: list[str], ok: tuple[int, ...] = (0,)) -> str:
        done = cli(args)
        outputs[name] = done
        assert done.returncode in ok, (name, done.returncode, done.stderr.decode(errors="replace")[-2000:])
        assert b"Traceback" not in done.stderr, (name, done.stderr.decode(errors="replace")[-2000:])
        return done.stdout.decode("utf-8", errors="replace")

    for family, run in RUNS.items():
        out = tmp_path / f"{family}.json"
        if family == "proactiveeval":  # the hostile model string too: the run header echoed it
            args = [a if a != "openai/agent-m" else MODEL for a in run.args]
            run = type(run)(run.family, run.env_id, tuple(args), run.responder, run.dataset_format)
        with FakeOpenAIServer(responder=with_text(run.responder, HOSTILE)) as server:
            done = run_family(run, server.base_url, out, env_id=env_ids[family], envs=envs)
        outputs[f"run {family}"] = done
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
        sessions.append(session_id_of(out))

    check("sessions list", ["sessions", "list"])
    check("sessions list --json", ["sessions", "list", "--json"])
    for session_id in sessions:
        check(f"sessions show {session_id}", ["sessions", "show", session_id])
        check(f"labels verdicts {session_id}", ["labels", "verdicts", session_id])
    forked = [check(f"sessions fork --list {s}", ["sessions", "fork", s, "--list"], ok=(0, 2)) for s in sessions]
    check("labels list", ["labels", "list"])
    check("sessions tree", ["sessions", "tree", sessions[0]])
    check("eval splits", ["eval", "splits"], ok=(0, 1))
    check("export markdown", ["export", sessions[0], "--format", "markdown", "--out", str(tmp_path / "md")])
    with FakeOpenAIServer(responder=hostile_pe_responder) as server:
        check("regrade", ["regrade", sessions[0], "--judge", MODEL, "--api-base", server.base_url])
    check("envs list", ["--envs", str(envs), "envs", "list"])
    check("envs validate", ["envs", "validate", str(envs)])
    for env_id in env_ids.values():
        check(f"envs show {env_id}", ["--envs", str(envs), "envs", "show", env_id])

    batch = tmp_path / "batch"
    with FakeOpenAIServer(responder=hostile_pe_responder) as server:
        done = cli(["eval", "run", "--envs", str(envs), env_ids["proactiveeval"], "--agent", MODEL, "--user",
                    "openai/user-m", "--judge", "openai/judge-m", "--max-turns", "2", "--api-base", server.base_url,
                    "--out", str(batch), "--no-store"])
    outputs["eval run"] = done
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    check("report show", ["report", "show", str(batch)])

    from synth_fake import responder as synth_responder, role_args, tree

    tree_file = tmp_path / "tree.json"
    tree_file.write_text(json.dumps(tree(fates=("fair", "schema"))), encoding="utf-8")
    synth_out = tmp_path / "synth"
    with FakeOpenAIServer(responder=with_text(synth_responder, HOSTILE)) as server:
        done = cli(["synth", "proactiveeval", "--domain", "recommendation", "--n", "2", "--seed", "3",
                    "--out", str(synth_out), "--tree", str(tree_file), *role_args(server.base_url)])
    outputs["synth proactiveeval"] = done
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-2000:]

    # the command line itself: argparse and the commands echo what they were given
    check("unknown command", [HOSTILE], ok=(2,))
    check("unrecognized argument", ["envs", "list", HOSTILE], ok=(2,))  # argparse echoed it raw
    assert b"unrecognized arguments: '\\x1b]0;TITLE\\x07" in outputs["unrecognized argument"].stderr  # shown, escaped
    check("unknown session", ["sessions", "show", HOSTILE], ok=(1, 2))
    check("unknown env", ["envs", "show", HOSTILE], ok=(1, 2))
    check("bad flag value", ["sessions", "list", "--limit", HOSTILE], ok=(2,))

    leaks = {name: raw_controls(done.stdout + done.stderr) for name, done in outputs.items()}
    leaks = {name: found for name, found in leaks.items() if found}
    assert not leaks, "; ".join(f"{name}: {found}" for name, found in sorted(leaks.items()))
    # the replies are listed (cut to one line), the escapes' payloads gone with them
    assert all("--turn 1 --seat agent" in text and "TITLE" not in text for text in forked), forked


# -- the structure: no command module prints any other way -----------------------------------------

PRINTING_MODULES = sorted([*(PACKAGE / "cli").glob("*.py"), *(PACKAGE / "families").glob("*/cli.py"),
                           *(PACKAGE / "families").glob("*/eval_cli.py")])
OWNED_ELSEWHERE: set[str] = set()
"""Modules exempt from the check (none: `serve`'s address and errors go through `say` too)."""


def raw_printers(path: Path) -> list[str]:
    """Calls that would write to the terminal without `plain`: the builtin print, a plain Rich
    Console, or a direct write to sys.stdout / sys.stderr."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("print", "Console"):
            found.append(f"{path.name}:{node.lineno} {func.id}(")
        elif isinstance(func, ast.Attribute) and func.attr in ("write", "writelines") and \
                isinstance(func.value, ast.Attribute) and func.value.attr in ("stdout", "stderr"):
            found.append(f"{path.name}:{node.lineno} sys.{func.value.attr}.{func.attr}(")
    return found


@pytest.mark.parametrize("path", [p for p in PRINTING_MODULES if p.name not in OWNED_ELSEWHERE], ids=lambda p: p.name)
def test_command_modules_print_only_through_the_text_safety_function(path: Path) -> None:
    assert raw_printers(path) == []


def test_the_safe_console_keeps_styles_and_drops_what_a_terminal_acts_on() -> None:
    import io

    from rich.table import Table
    from rich.text import Text

    from proactive_tui.cli.printer import SafeConsole

    buffer = io.StringIO()
    console = SafeConsole(file=buffer, force_terminal=True, color_system="standard", width=60, highlight=False)
    line = Text("ok ")
    line.append("red\x1b[2J\x9b31m\u202e", style="red")
    table = Table("model")
    table.add_row(Text(MODEL))
    table.add_row(Text("bidi \u202e" * 4))  # cleaned before the table measures it: not cropped
    console.print(line)
    console.print(table)
    console.print(HOSTILE, markup=False)
    written = buffer.getvalue()
    assert "\x1b[31mred<U+202E>" in written  # Rich's own colour codes stay; the content's go
    stripped = written.replace("\x1b[31m", "").replace("\x1b[0m", "").replace("\x1b[1m", "")
    assert raw_controls(stripped.encode()) == [], repr(stripped)
    assert "openai/agent-m" in written and "<U+202E>evil" in written
    assert "bidi <U+202E>bidi <U+202E>bidi <U+202E>bidi <U+202E>" in written and "…" not in written
