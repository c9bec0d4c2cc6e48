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


def test_the_listing_table_keeps_every_border_and_every_id(tmp_path: Path) -> None:
    """The table is drawn row by row (Rich's Table took most of a minute for 200,000 rows): every
    row as wide as the header, closed by its border, ids whole."""
    items = [{**PE_ITEM, "topic": f"Topic {i} " + "long " * 30} for i in range(300)]
    write(tmp_path / "persuasion" / "fair.json", items)
    proc = cli("envs", "list", "--envs", str(tmp_path), "--domain", "persuasion")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("environments") and lines[1].startswith("┏") and lines[-1].startswith("└")
    assert "┃ source " in lines[2]
    rows = [line for line in lines[4:-1]]
    assert len({len(line) for line in lines[1:]}) == 1 and len(lines[1]) <= 200  # COLUMNS=200
    assert all(row.startswith("│ ") and row.endswith(" │") for row in rows)
    for i in range(300):
        row = next(r for r in rows if f"│ proactiveeval/persuasion/fair/{i} " in r)
        assert f"Topic {i} long long" in row and "…" in row


# -- long replies: kept once, shown folded --------------------------------------------------------

def long_reply(tag: str, words: int = 200) -> str:
    """About 200 KB, different per call (each turn's and seat's reply is its own text). The fake
    server streams a word a chunk: long words keep the stream short, numbered because litellm
    takes a chunk repeated many times for a looping model and breaks the stream."""
    return f"{tag}: " + "".join(f"{i:05d}" + "w" * 994 + " " for i in range(words)) + f"end of {tag}"


def long_run(tmp_path: Path, words: int = 200) -> tuple[str, Path, list[list[dict]]]:
    """A ProactiveEval session through the real model path, every dialogue reply long; the
    session's id, its --out record and the messages of every request the server was sent."""
    from test_run_command import judge_aware_responder
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    calls = {"n": 0}

    def responder(body: dict) -> str:
        answer = judge_aware_responder(body)
        if answer.startswith("{"):
            return answer
        calls["n"] += 1
        return long_reply(f"reply {calls['n']}", words)

    out = tmp_path / "run.json"
    with FakeOpenAIServer(responder=responder) as server:
        proc = subprocess.run([sys.executable, "-m", "proactive_tui", "run", "proactiveeval/persuasion/fair/0",
                               "--api-base", server.base_url, "--agent", "openai/agent-m", "--judge", "openai/judge-m",
                               "--user", "openai/user-m", "--max-turns", "4", "--out", str(out)],
                              cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "160"})
        sent = [request["messages"] for request in server.chat_requests()]
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())["id"], out, sent


def test_a_long_reply_is_stored_once_and_reads_back_exactly(tmp_path: Path) -> None:
    from proactive_tui.core.run_record import RunRecord
    from proactive_tui.store import open_store
    from proactive_tui.store.queries import load_events, load_record

    session_id, out, sent = long_run(tmp_path)
    emitted = RunRecord.model_validate_json(out.read_text())
    replies = [m.content for m in emitted.messages if len(m.content) > 100_000]
    assert len(replies) >= 3 and len(set(replies)) == len(replies)
    store = open_store()
    rows = store.event_rows(session_id)
    # each reply once, in its deltas (how many rows they take depends on the stream's timing); the
    # session's other events together hold less than one reply
    others = sum(len(payload) for _, type_, payload, _ in rows if type_ != "message_delta")
    assert others < 150_000, others
    streamed: dict[str, str] = {}
    for _, type_, payload, _ in rows:
        if type_ == "message_delta":
            delta = json.loads(payload)
            streamed[delta["message_id"]] = streamed.get(delta["message_id"], "") + delta["text"]
    long_streamed = [text for text in streamed.values() if len(text) > 100_000]  # a reply made ahead and dropped too
    assert set(replies) <= set(long_streamed)
    for reply in long_streamed:  # no row but the reply's own deltas holds a long piece of it
        piece = reply[len(reply) // 2: len(reply) // 2 + 5000]
        holders = {type_ for _, type_, payload, _ in rows if piece in payload}
        assert holders <= {"message_delta"}, holders
    # read back, every copy is whole again: the record, the call traces, the requests
    record = load_record(store, session_id)
    assert [(m.role, m.turn, m.content) for m in record.messages] == [(m.role, m.turn, m.content) for m in emitted.messages]
    assert record.section.model_dump() == emitted.section.model_dump()
    events = load_events(store, session_id)
    calls = [e for e in events if e.type == "model_called"]
    by_id = {m.id: m.content for m in emitted.messages}
    assert all(e.call.reply == by_id[e.message_id] for e in calls if e.message_id in by_id)
    canon = lambda messages: json.dumps(messages, sort_keys=True)  # noqa: E731
    assert sorted(canon(e.call.request["messages"]) for e in calls) == sorted(canon(m) for m in sent)
    assert sum(r in canon(m) for m in sent for r in replies) > len(replies)  # the requests did quote the replies
    done = [e for e in events if e.type == "message_done" and len(e.message.content) > 100_000]
    assert [e.message.content for e in done] == replies
    store.close()


def test_every_cut_of_a_long_session_reads_back_as_emitted(tmp_path: Path) -> None:
    """A kill can fall between any two events: whatever prefix is stored reads back as the
    events emitted up to there (a reference never points past what is stored), so resume and
    replay, which read the store, see the session as it happened."""
    from proactive_tui.core.run_record import fold
    from proactive_tui.store import Store, open_store
    from proactive_tui.store.queries import load_events
    from proactive_tui.store.recorder import SessionRecorder

    session_id, _, _ = long_run(tmp_path, words=40)
    store = open_store()
    emitted = load_events(store, session_id)
    store.close()
    assert sum(e.type == "message_delta" for e in emitted) >= 4
    dump = lambda events: [e.model_dump(mode="json") for e in events]  # noqa: E731
    with_refs = 0
    for cut in range(2, len(emitted) + 1):
        copy = Store(tmp_path / f"cut{cut}.db")
        recorder = SessionRecorder(copy)
        for event in emitted[:cut]:
            recorder.handle(event)
        recorder.flush()
        rows = copy.event_rows(session_id)
        with_refs += any("stored_refs" in payload for _, _, payload, _ in rows)
        assert dump(load_events(copy, session_id)) == dump(emitted[:cut]), f"cut {cut}"
        assert fold(load_events(copy, session_id)).model_dump() == fold(emitted[:cut]).model_dump()
        copy.close()
    assert with_refs > len(emitted) // 2  # the cuts did hold references


def test_html_and_svg_exports_fold_long_replies_and_keep_each_once(tmp_path: Path) -> None:
    from proactive_tui.core.run_record import RunRecord
    from proactive_tui.export.viewer import read_payload

    session_id, out, _ = long_run(tmp_path)
    emitted = RunRecord.model_validate_json(out.read_text())
    replies = [m.content for m in emitted.messages if len(m.content) > 100_000]
    total = sum(map(len, replies))
    note = "more characters hidden (the run-record export keeps it whole)"
    for fmt in ("html", "svg"):
        proc = cli("export", session_id, "--format", fmt, "--out", str(tmp_path / fmt), timeout=600)
        assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "html" / f"{session_id}.html").read_text(encoding="utf-8")
    picture = (tmp_path / "svg" / f"{session_id}.svg").read_text(encoding="utf-8")
    # each reply whole once, in the page's record (its copies in later messages' context folded);
    # the picture draws the replies' heads only, a few KB a line
    assert len(page) < total + 300_000, (len(page), total)
    assert len(picture) < total, (len(picture), total)
    assert "more&#160;characters&#160;hidden" in picture
    payload = read_payload(page)["session"]
    assert [m["content"] for m in payload["record"]["messages"]] == [m.content for m in emitted.messages]
    from proactive_tui.folding import VIEW_CHARS

    shown = [b["text"] for s in payload["view"]["sections"] for b in s["blocks"] if len(b.get("text") or "") > VIEW_CHARS]
    assert shown and all(len(text) < VIEW_CHARS + 200 and note in text for text in shown)
    hidden = len(replies[0]) - VIEW_CHARS
    assert any(f"… {hidden:,} {note}" in text for text in shown)
