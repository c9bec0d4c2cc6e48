"""Export formats: golden files, the ProactiveEval round trip, no keys in any export, the CLI.

Golden files live in tests/golden/export/; regenerate them after an intended change with
`UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_export.py` and review the diff.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from proactive_tui.core.events import parse_event
from proactive_tui.core.run_record import RunRecord
from proactive_tui.envs import load_default, load_paths
from proactive_tui.export import load_formats
from proactive_tui.export.registry import ExportError, export
from proactive_tui.store import SessionRecorder, Store, load_record
from proactive_tui.store.db import default_path
from proactive_tui.testing.fake_openai import FakeOpenAIServer

FIXTURE = ROOT / "tests" / "fixtures" / "store" / "golden_session.jsonl"
GOLDEN = ROOT / "tests" / "golden" / "export"
SESSION_ID = "901de2c0ffee"
FILES = {"run-record": "session.json", "markdown": "session.md", "html": "session.html", "svg": "session.svg"}


@pytest.fixture
def golden_record(tmp_path: Path) -> RunRecord:
    """The fixture session, written through the recorder into a store and folded back out."""
    store = Store(tmp_path / "golden.db")
    recorder = SessionRecorder(store)
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        recorder.handle(parse_event(line))
    recorder.close()
    return load_record(store, SESSION_ID)


def check_golden(produced: Path, name: str) -> None:
    golden = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(produced.read_bytes())
    assert golden.exists(), f"missing golden file {golden}; run with UPDATE_GOLDEN=1"
    assert produced.read_text(encoding="utf-8") == golden.read_text(encoding="utf-8"), f"{name} differs from its golden file"


def test_problems_say_which_seat_failed_in_markdown_and_the_text_views(golden_record: RunRecord, tmp_path) -> None:
    from proactive_tui.core.run_record import ErrorDetail
    from proactive_tui.export.rich_view import transcript

    record = golden_record.model_copy(update={
        "errors": ["plan scoring failed: judge down", "an old error"],
        "error_details": [ErrorDetail(seat="judge", purpose="plan score", judgement=True)]})
    load_formats()
    (written,) = export([record], "markdown", tmp_path / "p.md")
    text = written.read_text(encoding="utf-8")
    assert "- plan score · judge seat scripted-judge: plan scoring failed: judge down" in text
    assert "- unknown seat: an old error" in text  # a record that does not say who failed
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(transcript(record))
    assert "plan score · judge seat scripted-judge: plan scoring failed" in console.export_text()


def test_builtin_formats_are_registered() -> None:
    assert {"proactiveeval", "run-record", "markdown", "html", "svg"} <= set(load_formats())


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_document_formats_match_golden_files(fmt: str, golden_record: RunRecord, tmp_path: Path) -> None:
    load_formats()
    (written,) = export([golden_record], fmt, tmp_path / FILES[fmt])
    check_golden(written, FILES[fmt])
    again = tmp_path / "again" / FILES[fmt]
    export([golden_record], fmt, again)
    assert again.read_bytes() == written.read_bytes()  # deterministic


def test_proactiveeval_format_matches_golden_file(golden_record: RunRecord, tmp_path: Path) -> None:
    load_formats()
    (written,) = export([golden_record], "proactiveeval", tmp_path / "dataset")
    assert written == tmp_path / "dataset" / "recommendation" / "fair.json"
    check_golden(written, "proactiveeval/recommendation/fair.json")


def test_every_format_states_the_human_seats(golden_record: RunRecord, tmp_path: Path) -> None:
    load_formats()
    assert golden_record.human_seats == ["user"]
    md = export([golden_record], "markdown", tmp_path / "s.md")[0].read_text()
    assert "| Human seats | user |" in md and "| User | a person (human seat) |" in md
    svg = export([golden_record], "svg", tmp_path / "s.svg")[0].read_text()
    assert "Human&#160;seats" in svg and "a&#160;person&#160;(human&#160;seat)" in svg
    from proactive_tui.export.viewer import read_payload

    page = read_payload(export([golden_record], "html", tmp_path / "s.html")[0].read_text())
    header = dict(map(tuple, page["session"]["view"]["header"]))  # what the page draws as its header
    assert header["Human seats"] == "user" and header["User"] == "a person (human seat)"
    assert page["session"]["record"]["human_seats"] == ["user"]
    item = json.loads(export([golden_record], "proactiveeval", tmp_path / "d")[0].read_text())[0]
    assert item["meta"]["human_seats"] == ["user"] and item["meta"]["seats"]["user"] == "human"
    assert json.loads(export([golden_record], "run-record", tmp_path / "r.json")[0].read_text())["human_seats"] == ["user"]


def test_model_text_is_never_markup(golden_record: RunRecord, tmp_path: Path) -> None:
    load_formats()
    from proactive_tui.export.viewer import DATA_OPEN, read_payload

    html = export([golden_record], "html", tmp_path / "s.html")[0].read_text()
    # the text is data: only inside the JSON script element, with < and > as \u escapes, drawn
    # by textContent (test_html_viewer checks the script never uses innerHTML)
    assert "\\u003cb\\u003eNumb" in html and "<b>Numb" not in html and "\x1b" not in html
    assert html.index("\\u003cb\\u003eNumb") > html.index(DATA_OPEN)
    shown = [b["text"] for s in read_payload(html)["session"]["view"]["sections"] for b in s["blocks"] if "text" in b]
    assert any("<b>Numb" in t for t in shown) and any("[bold]Congrats[/bold]" in t for t in shown)
    svg = export([golden_record], "svg", tmp_path / "s.svg")[0].read_text()
    assert "&lt;b&gt;Numb" in svg and "<b>Numb" not in svg and "\x1b" not in svg
    md = export([golden_record], "markdown", tmp_path / "s.md")[0].read_text()
    assert "\\<b\\>Numb toes\\</b\\>" in md and "<b>" not in md and "\x1b" not in md


def test_proactiveeval_export_loads_back_as_environments(golden_record: RunRecord, tmp_path: Path) -> None:
    load_formats()
    second = golden_record.model_copy(update={"id": "second000001", "started_at": "2025-03-02T00:00:00.000+00:00"})
    export([golden_record, second], "proactiveeval", tmp_path / "dataset")
    loaded = load_paths([tmp_path / "dataset"])
    assert loaded.problems == []
    # their own ids (from the session), not the positions the samples' ids use
    assert [e.id for e in loaded.environments] == [f"{golden_record.env_id}@{golden_record.id}",
                                                   f"{golden_record.env_id}@second000001"]
    # read back beside the samples, nothing is skipped as a duplicate
    with_samples = load_default([str(tmp_path / "dataset")])
    assert with_samples.problems == []
    assert {e.id for e in loaded.environments} <= {e.id for e in with_samples.environments}
    original = golden_record.environment["item"]
    for env, record in zip(loaded.environments, (golden_record, second)):
        item = env.item.model_dump(mode="json")
        for key in ("environment", "target", "sub_target", "topic"):
            assert item[key] == original[key]
        assert env.domain == "recommendation" and env.tier == "fair"
        assert item["dialogue"][0] == {"role": "assistant", "content": golden_record.messages[0].content}
        assert [d["role"] for d in item["dialogue"]] == ["assistant", "user", "assistant", "user"]
        assert item["planning"]["target"] == "help pick a thing" and item["scores"]["guidance"]["overall"] == 7
        assert item["meta"]["session_id"] == record.id and item["meta"]["env_id"] == golden_record.env_id
    # exporting a session run on an exported environment replaces, not nests, the produced keys
    rerun = golden_record.model_copy(update={"environment": loaded.environments[0].model_dump(mode="json")})
    (path,) = export([rerun], "proactiveeval", tmp_path / "again")
    (item,) = json.loads(path.read_text())
    assert list(item) == ["environment", "target", "sub_target", "topic", "dialogue", "planning", "scores", "meta"]


def test_proactiveeval_format_refuses_other_families(golden_record: RunRecord, tmp_path: Path) -> None:
    load_formats()
    other = golden_record.model_copy(update={"family": "proactivebench"})
    with pytest.raises(ExportError, match="takes proactiveeval sessions"):
        export([other], "proactiveeval", tmp_path / "d")


def test_several_records_make_one_file_each(golden_record: RunRecord, tmp_path: Path) -> None:
    load_formats()
    second = golden_record.model_copy(update={"id": "second000001"})
    written = export([golden_record, second], "markdown", tmp_path / "out")
    assert sorted(p.name for p in written) == ["901de2c0ffee.md", "second000001.md"]


# -- through the command line, with a canary key ------------------------------------------------

CANARY = "sk-canary-7f3a9c1e5b2d4f6a8c0e"


def cli(*argv: str, env: dict | None = None, input: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "proactive_tui", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env=env, input=input)


def test_exports_never_contain_the_api_key(isolated_dirs: Path, tmp_path: Path) -> None:
    from test_run_command import judge_aware_responder

    env = {**os.environ, "OPENAI_API_KEY": CANARY}
    with FakeOpenAIServer(responder=judge_aware_responder) as server:
        run = cli("run", "proactiveeval/persuasion/fair/0", "--api-base", server.base_url, "--agent", "openai/agent-m",
                  "--user", "human", "--judge", "openai/judge-m", "--max-turns", "2", "--quiet", env=env,
                  input="I am not sure\nok, I will try\n")
        sent = [r.headers.get("authorization", "") for r in server.requests]
    assert run.returncode == 0, run.stderr
    assert any(CANARY in h for h in sent)  # the key was really in use
    out = tmp_path / "exports"
    for fmt in ("proactiveeval", "run-record", "markdown", "html", "svg"):
        done = cli("export", "--all", "--format", fmt, "--out", str(out / fmt), env=env)
        assert done.returncode == 0, done.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) == 5
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert CANARY not in text, path
        assert "human" in text.lower(), path  # every export says a person sat in the user seat
    shown = cli("sessions", "show", "--json", json.loads(cli("sessions", "list", "--json").stdout)["id"], env=env)
    assert CANARY not in shown.stdout and CANARY not in run.stdout + run.stderr
    assert CANARY.encode() not in default_path().read_bytes()
    for wal in default_path().parent.glob("*-wal"):
        assert CANARY.encode() not in wal.read_bytes()


def test_export_command_errors_and_skips(isolated_dirs: Path, tmp_path: Path) -> None:
    with Store(default_path()) as store:
        recorder = SessionRecorder(store)
        for line in FIXTURE.read_text(encoding="utf-8").splitlines():
            recorder.handle(parse_event(line))
        other = json.loads(FIXTURE.read_text(encoding="utf-8").splitlines()[0])
        other.update(session_id="bench0000001", family="proactivebench", env_id="proactivebench/coding_01")
        other_recorder = SessionRecorder(store)
        other_recorder.handle(parse_event(other))
        other_recorder.close()
    bad = cli("export", SESSION_ID, "--format", "docx", "--out", str(tmp_path / "x"))
    assert bad.returncode == 1 and "unknown export format 'docx'" in bad.stderr and "markdown" in bad.stderr
    both = cli("export", SESSION_ID, "--all", "--format", "markdown", "--out", str(tmp_path / "x"))
    assert both.returncode == 1 and "not both" in both.stderr
    wrong = cli("export", "bench", "--format", "proactiveeval", "--out", str(tmp_path / "x"))
    assert wrong.returncode == 1 and "takes proactiveeval sessions" in wrong.stderr and "Traceback" not in wrong.stderr
    skipped = cli("export", "--all", "--format", "proactiveeval", "--out", str(tmp_path / "ds"))
    assert skipped.returncode == 0, skipped.stderr
    assert "skipped 1" in skipped.stderr and "bench0000001 (proactivebench)" in skipped.stderr
    assert skipped.stdout.strip() == str(tmp_path / "ds" / "recommendation" / "fair.json")
    one = cli("export", "901d", "--format", "markdown", "--out", str(tmp_path / "one.md"))
    assert one.returncode == 0 and (tmp_path / "one.md").read_text() == (GOLDEN / "session.md").read_text()


async def test_proactivebench_skipped_event_keeps_its_proposal(tmp_path: Path) -> None:
    """A person's skip leaves the agent's proposal in the upstream judged trace, with no verdict
    (`judgement: []`), which upstream's `zip(agent_response, judgement)` and our reader both skip."""
    from proactive_tui.core.participants import HumanParticipant
    from proactive_tui.core.run_record import fold
    from proactive_tui.families.proactivebench.metrics import confusion_from_trace
    from test_proactivebench_engine import agent_proposing_on, sample_env, session

    load_formats()
    human = HumanParticipant()
    s = session(sample_env(), agent_proposing_on({1, 2}), human, max_events=3)
    answers = iter(["a", "s", "s"])  # accept task 1, skip task 2, skip the null on event 3
    events = []
    async for event in s.events():
        events.append(event)
        if event.type == "awaiting_human":
            human.submit(next(answers))
    record = RunRecord.model_validate_json(fold(events).model_dump_json())
    export([record], "proactivebench", tmp_path / "out")
    data = json.loads((tmp_path / "out" / "coding_01.json").read_text(encoding="utf-8"))
    assert [(e["agent_response"], e["judgement"]) for e in data] == [(["task 1"], [True]), (["task 2"], []), ([None], [])]
    assert data[1]["other_infomation"] == {"Purpose": "purpose 2", "Thoughts": "thoughts 2", "Response": "offer 2"}
    # upstream's counting pairs the two lists, so the skipped proposals are left out of every cell
    assert [list(zip(e["agent_response"], e["judgement"])) for e in data] == [[("task 1", True)], [], []]
    counted = confusion_from_trace(data)
    assert counted == record.section.confusion and (counted.tp, counted.skipped, counted.proposals) == (1, 2, 1)


def test_credentials_inside_the_api_base_are_stored_nowhere(isolated_dirs: Path, tmp_path: Path) -> None:
    """litellm's HTTP client refuses credentials in the URL beside its own Authorization header,
    so a run with them is refused before it starts (keys.api_base_problem), naming the URL
    without them; nothing is recorded, and the secret is in no output and no file."""
    from test_run_command import judge_aware_responder

    secret = "urlCANARY0pass"
    with FakeOpenAIServer(responder=judge_aware_responder) as server:
        base = server.base_url.replace("http://", f"http://bob:{secret}@")
        record_file = tmp_path / "run.json"
        run = cli("run", "proactiveeval/persuasion/fair/0", "--api-base", base, "--agent", "openai/agent-m",
                  "--user", "openai/user-m", "--judge", "openai/judge-m", "--max-turns", "1", "--quiet",
                  "--out", str(record_file))
        public = server.base_url
        assert not server.requests  # refused before any call
    assert run.returncode == 1 and "has credentials in it" in run.stderr and public in run.stderr
    assert not record_file.exists() and "Traceback" not in run.stderr
    assert secret not in run.stdout + run.stderr
    written = [p for p in [*isolated_dirs.rglob("*"), *tmp_path.rglob("*")] if p.is_file()]
    assert all(secret.encode() not in p.read_bytes() for p in written)


def test_markdown_export_keeps_model_links_and_images_dead() -> None:
    from markdown_it import MarkdownIt

    from proactive_tui.export.formats.markdown import _cell, _quoted, _text

    hostile = ("See [click](https://evil.com/x) and ![pixel](https://evil.com/p.png), https://evil.com/y, "
               "www.evil.com, <img src=x onerror=alert(1)> and *bold* | cell")
    md = MarkdownIt("gfm-like")  # linkify on, as GitHub renders
    for rendered in (md.render(_text(hostile)), md.render(_quoted(hostile)), md.render(f"| a |\n|---|\n| {_cell(hostile)} |")):
        assert "<a " not in rendered and "<img" not in rendered and "<strong>" not in rendered, rendered
        assert "https://evil.com/x" in rendered and "[click]" in rendered  # shown, literally
