"""Issue 33, point 7: inputs that are not files, values too long to print, files too large to list
slowly, and replies too long to keep several times.

- a FIFO or a device given as an environment file (or named like one in a folder) is refused
  with one line naming it and never opened for reading: a FIFO's read waits for a writer;
- `envs show` folds a long value, saying how many characters it hides;
- `envs list` prints a large file's rows as it goes, the same table as before
  (benchmarks/envs_list_large.py measures the time and memory);
- a long reply is kept once in the store (its deltas), every other copy of it in the events
  (the finished message, the call trace, the next calls' requests) a reference to them, and
  reads back exactly; the HTML and SVG exports fold long replies and say so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from test_envs_loaders import PE_ITEM, write

FIFO = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "proactive_tui", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "200"})


# -- FIFOs and devices ----------------------------------------------------------------------------


@FIFO
def test_a_fifo_given_as_the_file_is_refused_with_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "fair.json"
    os.mkfifo(fifo)
    proc = cli("envs", "validate", str(fifo))
    assert proc.returncode == 1, proc.stdout
    assert f"{fifo}: a FIFO (named pipe), not an environment file or folder: not read" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "FAILED: 0 environment(s) loaded from 0 file(s), 1 problem(s)"
    listed = cli("envs", "list", "--json", "--envs", str(fifo))
    assert listed.returncode == 0 and json.loads(listed.stdout.splitlines()[0])["id"]  # the rest still listed
    assert [line for line in listed.stderr.splitlines() if "FIFO" in line] == [
        f"{fifo}: a FIFO (named pipe), not an environment file or folder: not read (reading it could wait for ever or "
        "never end)"]


@FIFO
def test_a_fifo_or_device_inside_a_folder_is_named_and_the_rest_loads(tmp_path: Path) -> None:
    from proactive_tui.envs import load_paths

    write(tmp_path / "persuasion" / "fair.json", [PE_ITEM])
    os.mkfifo(tmp_path / "persuasion" / "hard.json")
    (tmp_path / "persuasion" / "eval.json").symlink_to(os.devnull)
    loaded = load_paths([tmp_path])
    assert [env.id for env in loaded.environments] == ["proactiveeval/persuasion/fair/0"]
    rendered = sorted(p.render() for p in loaded.problems)
    assert len(rendered) == 2
    assert rendered[0].startswith(str(tmp_path / "persuasion" / "eval.json") + ": a character device, not an environment")
    assert rendered[1].startswith(str(tmp_path / "persuasion" / "hard.json") + ": a FIFO (named pipe), not an environment")


def test_a_character_device_given_as_the_file_is_refused(tmp_path: Path) -> None:
    proc = cli("envs", "validate", os.devnull)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{os.devnull}: a character device, not an environment file or folder: not read")


@FIFO
def test_the_pickers_folders_name_a_fifo(tmp_path: Path, isolated_dirs: Path) -> None:
    """The user's environments folder (what the picker loads first) with a FIFO in it: the
    picker's warning names it."""
    from proactive_tui.envs import load_default
    from proactive_tui.paths import user_envs_dir
    from proactive_tui.ui.app import env_problems_message

    folder = user_envs_dir()
    (folder / "persuasion").mkdir(parents=True)
    os.mkfifo(folder / "persuasion" / "fair.json")
    loaded = load_default()
    assert loaded.environments  # the samples still load
    message = env_problems_message(loaded.problems)
    assert message.startswith("1 problem(s) loading environments: first problem ")
    assert "persuasion/fair.json: a FIFO (named pipe)" in message


@FIFO
def test_reading_a_fifo_that_replaced_a_file_does_not_wait(tmp_path: Path) -> None:
    """read_json itself checks what it opened (a file swapped for a FIFO after the scan): run in a
    child so that a read that waits for a writer fails the test instead of hanging it."""
    fifo = tmp_path / "fair.json"
    os.mkfifo(fifo)
    code = ("import sys; from pathlib import Path; from proactive_tui.envs.reading import Unreadable, read_json\n"
            "try:\n    read_json(Path(sys.argv[1]), 'x.json')\nexcept Unreadable as exc:\n    print(exc)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(fifo)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == ("x.json: a FIFO (named pipe), not an environment file or folder: not read (reading it "
                                   "could wait for ever or never end)"), proc.stderr


# -- long values ----------------------------------------------------------------------------------


def test_envs_show_folds_a_20_mb_value_and_says_how_much_is_hidden(tmp_path: Path) -> None:
    huge = "word " * 4_000_000  # 20 MB of one line
    write(tmp_path / "persuasion" / "fair.json", [{**PE_ITEM, "environment": {**PE_ITEM["environment"],
                                                                               "user_information": huge}}])
    proc = cli("envs", "show", "proactiveeval/persuasion/fair/0", "--envs", str(tmp_path), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) < 20_000  # the head of the value and every other section
    from proactive_tui.folding import LINE_CHARS

    hidden = len(huge) - LINE_CHARS
    assert f"… {hidden:,} more characters hidden (`envs show ID --json` prints it whole)" in proc.stdout
    assert "She searched for hive scales." in proc.stdout and "Compare two scales" in proc.stdout  # the rest in full
    whole = cli("envs", "show", "proactiveeval/persuasion/fair/0", "--envs", str(tmp_path), "--json", timeout=300)
    assert json.loads(whole.stdout)["item"]["environment"]["user_information"] == huge


def test_fold_text_keeps_short_text_and_counts_what_it_hides() -> None:
    from proactive_tui.folding import fold_text

    text = "line\n" * 100
    assert fold_text(text) is text
    many = "ab\n" * 60_000  # 180,000 characters of short lines: cut at a line end
    folded = fold_text(many)
    assert folded.endswith("\n… 80,002 more characters hidden") and many.startswith(folded.rsplit("\n", 1)[0])
    assert fold_text("y" * 3000 + "\nz", line_chars=10) == "y" * 10 + " … 2,990 more characters hidden\nz"
