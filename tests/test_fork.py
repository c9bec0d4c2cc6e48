"""Forking a session (issue 17): a branch shares its parent's turns up to the fork point, changes
one reply there, and goes on by itself.

Every family's branch is made the way a person makes one from a script: `run` against the fake
OpenAI server, then `sessions fork ID --turn N --edit ...`, so the real litellm path, the store
and the stitched prefix are all exercised. What a branch's models saw is checked through the
requests its `model_called` events recorded (the ones the server received).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from family_runs import RUNS, run_in_process
from proactive_tui.cli.main import main
from proactive_tui.core.fork import EDITED_BY
from proactive_tui.store import open_store
from proactive_tui.store.db import MIGRATIONS, SCHEMA_VERSION, Store
from proactive_tui.store.queries import list_sessions, load_events, load_record, session_tree
from proactive_tui.testing.fake_openai import FakeOpenAIServer

FORKS = {  # family -> (turn, seat, edit): a change every family's later calls must carry
    "proactiveeval": (2, "agent", "EDITED: shall we try a ten-minute walk after lunch today?"),
    "proactivebench": (1, "agent", "EDITED: run the failing test for the user"),
    "chronos": (2, "agent", "INFO_RETRIEVAL: EDITED which colour would you like the car in?"),
    "proactbench": (1, "agent", "EDITED: copy the DSLR photos off and verify them before you wipe anything."),
}


def fork(session_id: str, server: FakeOpenAIServer, out: Path, *args: str) -> str:
    assert main(["sessions", "fork", session_id, *args, "--api-base", server.base_url, "--out", str(out), "--quiet"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))["id"]


def calls(events: list) -> list:
    return [e for e in events if e.type == "model_called"]


def stored_rows(session_id: str) -> list[tuple]:
    with open_store() as store:
        return store.event_rows(session_id)


def without_seq(event) -> dict:
    return event.model_dump(exclude={"seq"})


@pytest.mark.parametrize("family", sorted(FORKS))
def test_a_branch_sees_the_prefix_and_the_edit_and_leaves_the_original_as_it_was(family: str, tmp_path: Path) -> None:
    turn, seat, edit = FORKS[family]
    with FakeOpenAIServer(responder=RUNS[family].responder) as server:
        parent_id = run_in_process(family, server.base_url, tmp_path / "parent.json")
        parent_rows = stored_rows(parent_id)
        with open_store() as store:
            parent_summary = list_sessions(store)[0].model_dump()
        branch_id = fork(parent_id, server, tmp_path / "branch.json", "--turn", str(turn), "--seat", seat, "--edit", edit)
    assert stored_rows(parent_id) == parent_rows  # the original's events are untouched
    with open_store() as store:
        assert next(s for s in list_sessions(store) if s.id == parent_id).model_dump() == parent_summary
        parent_events, branch_events = load_events(store, parent_id), load_events(store, branch_id)
        branch = load_record(store, branch_id)
        row = store.session(branch_id)
    # the prefix is the parent's, read from it and not stored with the branch
    start = branch_events[0]
    assert start.forked_from["session_id"] == parent_id and start.forked_from["turn"] == turn
    k = start.forked_from["prefix_events"]
    assert k > 0 and row.forked_from == parent_id and row.fork_prefix == k and (row.fork_turn, row.fork_seat) == (turn, seat)
    parent_payloads = {json.dumps(without_seq(e), sort_keys=True) for e in parent_events}
    assert all(json.dumps(without_seq(e), sort_keys=True) in parent_payloads for e in branch_events[1:k + 1])
    own = stored_rows(branch_id)
    assert own[0][1] == "session_started" and all(seq > k + 1 for seq, *_ in own[1:])
    assert not any(json.dumps(json.loads(payload) | {"seq": 0}, sort_keys=True) in
                   {json.dumps(without_seq(e) | {"seq": 0}, sort_keys=True) for e in parent_events}
                   for _seq, kind, payload, _ts in own[1:] if kind != "session_ended")
    # what the branch's models were sent: the parent's prefix with the edit in place of the original
    branch_calls, parent_calls = calls(branch_events[k + 1:]), calls(parent_events)
    assert branch_calls, "the branch made no model call after the fork point"
    if family == "proactiveeval":
        original = next(m.content for m in load_record_of(parent_id).messages if (m.role, m.turn) == (seat, turn))
        user_call = next(c for c in branch_calls if c.seat == "user" and c.turn == turn)
        parent_user_call = next(c for c in parent_calls if c.seat == "user" and c.turn == turn)
        sent, was = user_call.call.request["messages"], parent_user_call.call.request["messages"]
        assert sent[-1]["content"] == edit and was[-1]["content"] == original
        assert sent[:-1] == was[:-1]  # system prompt and turn 1 exactly as the parent's user saw them
        check = next(c for c in branch_calls if c.purpose == f"turn {turn} check")
        assert edit in check.call.request["messages"][-1]["content"]
        edited = next(m for m in branch.messages if (m.role, m.turn) == (seat, turn))
        assert edited.content == edit and edited.model == EDITED_BY
    elif family == "proactivebench":
        verdict = next(c for c in branch_calls if c.seat == "user" and c.turn == turn)
        assert json.loads(verdict.call.request["messages"][-1]["content"])["Proposed Task"] == edit
        agent_next = next(c for c in branch_calls if c.seat == "agent" and c.turn == turn + 1)
        parent_next = next(c for c in parent_calls if c.seat == "agent" and c.turn == turn + 1)
        sent, was = agent_next.call.request["messages"], parent_next.call.request["messages"]
        history = [m for m in sent if m["role"] == "assistant"]
        assert len(history) == 1 and json.loads(history[0]["content"])["Proactive Task"] == edit
        assert [m for m in sent if m["role"] != "assistant"] == [m for m in was if m["role"] != "assistant"]
        assert branch.section.events[0].attempts[0].model == EDITED_BY
    elif family == "proactbench":
        verdict = next(c for c in branch_calls if c.seat == "judge" and c.purpose == f"verdict on turn {turn}")
        parent_verdict = next(c for c in parent_calls if c.purpose == f"verdict on turn {turn}")
        original = next(m.content for m in load_record_of(parent_id).messages if (m.role, m.turn) == (seat, turn))
        assert json.dumps(verdict.call.request["messages"]) == json.dumps(
            parent_verdict.call.request["messages"]).replace(json.dumps(original)[1:-1], json.dumps(edit)[1:-1])
        # offline, a later trigger's context is the recorded dialogue: the later agent call is the parent's
        later = next(c for c in branch_calls if c.seat == "agent" and c.turn > turn)
        twin = next(c for c in parent_calls if (c.seat, c.purpose) == ("agent", later.purpose))
        assert later.call.request["messages"] == twin.call.request["messages"]
        edited = next(m for m in branch.messages if (m.role, m.turn) == (seat, turn))
        assert (edited.content, edited.model) == (edit, EDITED_BY)
        assert [t.counted for t in branch.section.triggers] == ["PASS", "PARTIAL"]  # the edit judged afresh
    else:
        later = [c for c in branch_calls if c.turn and c.turn > turn]
        assert later and any("EDITED which colour" in json.dumps(c.call.request["messages"]) for c in later)
        parent_turn = next(t for t in load_record_of(parent_id).section.turns if t.turn == turn)
        first = next(c for c in later if c.seat == "user")
        twin = next(c for c in parent_calls if (c.seat, c.turn, c.purpose) == (first.seat, first.turn, first.purpose))
        dialogue = [m for m in first.call.request["messages"] if m["role"] != "system"]  # its brief is the oracle's
        replaced = json.dumps(dialogue).replace("EDITED which colour would you like the car in?",
                                                parent_turn.reply.response_text)
        assert replaced == json.dumps([m for m in twin.call.request["messages"] if m["role"] != "system"])
        edited = next(t for t in branch.section.turns if t.turn == turn)
        assert edited.model == EDITED_BY and edited.reply.proactive_action == "INFO_RETRIEVAL"
    # the branch's record holds the whole dialogue: the parent's turns, then its own
    assert branch.forked_from["session_id"] == parent_id and branch.termination is not None


def load_record_of(session_id: str):
    with open_store() as store:
        return load_record(store, session_id)


def test_branch_scores_are_its_own(tmp_path: Path) -> None:
    """ProactiveBench: flipping the first verdict changes the branch's confusion counts and F1,
    says a person gave that verdict, and leaves the parent's scores as they were."""
    with FakeOpenAIServer(responder=RUNS["proactivebench"].responder) as server:
        parent_id = run_in_process("proactivebench", server.base_url, tmp_path / "parent.json")
        parent = load_record_of(parent_id)
        first = parent.section.events[0].attempts[0].verdicts[0]
        flipped = "rejected" if first.judgement == "accepted" else "accepted"
        branch_id = fork(parent_id, server, tmp_path / "b.json", "--turn", "1", "--seat", "user",
                         "--edit", f"{flipped} not what I needed")
    branch, again = load_record_of(branch_id), load_record_of(parent_id)
    assert again.model_dump() == parent.model_dump()
    verdict = branch.section.events[0].attempts[0].verdicts[0]
    assert (verdict.judgement, verdict.thought, verdict.by, verdict.by_kind) == (flipped, "not what I needed", EDITED_BY, "human")
    assert branch.section.confusion != parent.section.confusion
    assert branch.score("f1").value != parent.score("f1").value
    assert EDITED_BY in branch.score("f1").by and "human" in branch.score("f1").by_kind
    # event 2 was judged again by the model, independently of the parent's verdict
    assert branch.section.events[1].attempts[0].verdicts[0].by == "openai/judge-m"


def test_a_branch_can_itself_be_forked_exported_and_shown_as_a_tree(tmp_path: Path, capsys) -> None:
    turn, seat, edit = FORKS["proactiveeval"]
    with FakeOpenAIServer(responder=RUNS["proactiveeval"].responder) as server:
        root = run_in_process("proactiveeval", server.base_url, tmp_path / "p.json")
        child = fork(root, server, tmp_path / "c.json", "--turn", str(turn), "--seat", seat, "--edit", edit)
        grandchild = fork(child, server, tmp_path / "g.json", "--turn", str(turn), "--seat", "user",
                          "--edit", "GRANDCHILD: fine, after lunch then.")
        sibling = fork(root, server, tmp_path / "s.json", "--turn", "1", "--instruction", "be brief",
                       "--agent", "openai/other-agent", "--temperature", "0.9")
    g = load_record_of(grandchild)
    by_turn = {(m.role, m.turn): m for m in g.messages}
    parent_first = next(m for m in load_record_of(root).messages if (m.role, m.turn) == ("agent", 1))
    assert by_turn[("agent", 1)].content == parent_first.content  # from the root, through the child
    assert by_turn[("agent", 2)].content == edit  # from the child's own events
    assert by_turn[("user", 2)].content.startswith("GRANDCHILD") and by_turn[("user", 2)].model == EDITED_BY
    user_rows = [json.loads(p) for _s, kind, p, _t in stored_rows(grandchild) if kind == "message_done"]
    assert all(r["message"]["turn"] >= 2 and (r["message"]["role"], r["message"]["turn"]) != ("agent", 2) for r in user_rows)
    # regenerated with another model and an added instruction: the call says both
    s_events = load_events(open_store(), sibling)
    regen = next(c for c in calls(s_events) if c.seat == "agent" and c.turn == 1)
    assert regen.call.model == "openai/other-agent" and regen.call.request["temperature"] == 0.9
    assert regen.call.request["messages"][0]["content"].endswith("Additional instruction for this reply: be brief")
    assert s_events[0].forked_from["changed_seats"] == {"agent": "openai/other-agent"}
    # the tree, from any of its sessions
    with open_store() as store:
        tree = session_tree(store, grandchild)
    assert [(d, n.id) for d, n in tree.walk()] == [(0, root), (1, child), (2, grandchild), (1, sibling)]
    capsys.readouterr()
    assert main(["sessions", "tree", child]) == 0
    shown = capsys.readouterr().out
    assert all(i in shown for i in (root, child, grandchild, sibling)) and "turn 2 user · edited" in shown
    assert "at temperature 0.9 · agent openai/other-agent" in shown
    assert main(["sessions", "list"]) == 0
    listed = capsys.readouterr().out
    assert listed.count("(branch)") == 3  # the root is no branch
    assert main(["sessions", "show", grandchild]) == 0
    assert f"{child} at turn 2 user · edited" in " ".join(capsys.readouterr().out.split())
    # a branch exports like any session: the whole dialogue, and where it comes from
    out = tmp_path / "export"
    assert main(["export", grandchild, "--format", "run-record", "--out", str(out)]) == 0
    exported = json.loads(next(p for p in [out, *out.rglob("*.json")] if p.is_file()).read_text(encoding="utf-8"))
    assert exported["forked_from"]["session_id"] == child
    assert [m["content"] for m in exported["messages"]][:1] == [parent_first.content]
    assert main(["export", grandchild, "--format", "markdown", "--out", str(tmp_path / "g.md")]) == 0
    assert f"{child} at turn 2 user · edited" in (tmp_path / "g.md").read_text(encoding="utf-8")
    assert main(["export", grandchild, "--format", "proactiveeval", "--out", str(tmp_path / "ds")]) == 0
    (item,) = json.loads(next((tmp_path / "ds").rglob("*.json")).read_text(encoding="utf-8"))
    assert item["meta"]["forked_from"]["session_id"] == child and item["meta"]["session_id"] == grandchild
    assert [d["content"] for d in item["dialogue"]][2:4] == [edit, by_turn[("user", 2)].content]


def test_an_interrupted_branch_resumes_as_a_branch_of_the_same_parent(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=RUNS["chronos"].responder) as server:
        parent_id = run_in_process("chronos", server.base_url, tmp_path / "p.json")
        branch_id = fork(parent_id, server, tmp_path / "b.json", "--turn", "2", "--edit", FORKS["chronos"][2])
        whole = load_record_of(branch_id)
        # a crash after the branch's first own agent turn: its later rows never reached the store
        own = stored_rows(branch_id)
        cut = next(seq for seq, kind, _p, _t in own if kind == "chronos.timeline_turn")
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        with sqlite3.connect(open_store().path) as raw:
            raw.execute("DELETE FROM events WHERE session_id = ? AND seq > ?", (branch_id, cut))
            raw.execute("UPDATE sessions SET status = 'running', summary = NULL, pid = ? WHERE id = ?",
                        (int(dead.stdout), branch_id))
        assert main(["sessions", "resume", branch_id, "--api-base", server.base_url, "--out", str(tmp_path / "r.json"),
                     "--quiet"]) == 0
    resumed_id = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["id"]
    resumed = load_record_of(resumed_id)
    assert resumed.forked_from["session_id"] == parent_id and resumed.resumed_from["session_id"] == branch_id
    assert [t.model_dump(exclude={"user_read_note"}) for t in resumed.section.turns] == \
        [t.model_dump(exclude={"user_read_note"}) for t in whole.section.turns]
    assert resumed.section.outcome == whole.section.outcome
    with open_store() as store:
        assert store.session(resumed_id).forked_from == parent_id
        assert [n.id for _d, n in session_tree(store, parent_id).walk()] == [parent_id, branch_id, resumed_id]
    start = load_events(open_store(), resumed_id)[0]
    assert all(seq > start.forked_from["prefix_events"] + 1 for seq, *_ in stored_rows(resumed_id)[1:])


def test_fork_refuses_what_it_cannot_do_with_the_reason(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=RUNS["chronos"].responder) as server:
        parent_id = run_in_process("chronos", server.base_url, tmp_path / "p.json")
        branch_id = fork(parent_id, server, tmp_path / "b.json", "--turn", "2", "--edit", FORKS["chronos"][2])
        capsys.readouterr()
        assert main(["sessions", "fork", parent_id, "--turn", "40", "--edit", "x"]) == 1
        assert "no agent reply at turn 40" in capsys.readouterr().err
        assert main(["sessions", "fork", parent_id, "--turn", "2", "--edit", "not an action line"]) == 1
        assert "turn 2 cannot be read" in capsys.readouterr().err
        assert main(["sessions", "fork", parent_id, "--turn", "1", "--seat", "user", "--edit", "hi"]) == 1
        assert "no user reply at turn 1" in capsys.readouterr().err
        bad = tmp_path / "missing.txt"
        assert main(["sessions", "fork", parent_id, "--turn", "2", "--edit-file", str(bad)]) == 1
        assert str(bad) in capsys.readouterr().err
        assert main(["sessions", "fork", parent_id, "--list"]) == 0
        listed = capsys.readouterr().out
        assert "--turn 2 --seat agent\texchange 1 · agent reply 2 (after its check)" in listed
    assert main(["sessions", "delete", parent_id, "--yes"]) == 1
    assert branch_id in capsys.readouterr().err
    assert load_record_of(branch_id).forked_from["session_id"] == parent_id  # nothing was deleted


def test_the_v3_migration_keeps_a_v2_database_readable(tmp_path: Path) -> None:
    """A database written before branches existed (schema v2) opens, is upgraded with a backup,
    and every session in it reads exactly as before; it is no branch and has none."""
    with FakeOpenAIServer(responder=RUNS["proactivebench"].responder) as server:
        session_id = run_in_process("proactivebench", server.base_url, tmp_path / "p.json")
    before = load_record_of(session_id)
    with open_store() as store:
        row, rows = store.session(session_id), store.event_rows(session_id)
    old = tmp_path / "old" / "sessions.db"
    old.parent.mkdir()
    v2_columns = ("id", "env_id", "family", "seats", "models", "settings", "status", "created_at", "updated_at",
                  "title", "spec", "summary", "pid", "resumed_from")
    with sqlite3.connect(old) as raw:
        for statement in [s for step in MIGRATIONS[:2] for s in step]:
            raw.execute(statement)
        raw.execute("PRAGMA user_version=2")
        values = row.model_dump()
        for col in ("seats", "models", "settings", "spec", "summary"):
            values[col] = json.dumps(values[col]) if values[col] is not None else None
        raw.execute(f"INSERT INTO sessions ({', '.join(v2_columns)}) VALUES ({', '.join('?' * len(v2_columns))})",
                    [values[c] for c in v2_columns])
        raw.executemany("INSERT INTO events (session_id, seq, type, payload, ts) VALUES (?, ?, ?, ?, ?)",
                        [(session_id, *r) for r in rows])
    with Store(old) as store:
        assert store.schema_version() == SCHEMA_VERSION >= 3  # upgraded to today's schema (v4 added gradings)
        assert load_record(store, session_id).model_dump() == before.model_dump()
        (summary,) = list_sessions(store)
        assert summary.forked_from is None and store.branches(session_id) == []
        assert [n.id for _d, n in session_tree(store, session_id).walk()] == [session_id]
    with sqlite3.connect(old.with_name("sessions.v2.backup.db")) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 2
