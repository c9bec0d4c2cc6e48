"""The static HTML viewer (`export.viewer`): one self-contained page of a session (the `html`
export) or of a report folder (`report html DIR`).

What is checked: the page loads nothing (no URL in a src or href, no <link>, no script file, a
Content-Security-Policy of `default-src 'none'`); its data is the run record and report.json as
written (parsed back from the script element and compared); hostile text (a `</script>`, an
<img onerror>, U+2028/U+2029) stays inside the JSON string it belongs to; the script draws with
textContent only; a folder gives the same bytes every time; a folder that cannot be read is an
error naming what is wrong; and the CLI paths (`report html`, `export --format html`) write where
they say. Folders are made with scripted seats and the local fake OpenAI server, one turn each.
If chromium is installed, the page is also drawn by it and the DOM checked; without it that test
is skipped, saying so.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

from conftest import ROOT, chromium
from proactive_tui.cli.main import main
from proactive_tui.core.events import MessageRecord, parse_event
from proactive_tui.core.run_record import RunRecord
from proactive_tui.evalrun.report import BatchReport, table_cells
from proactive_tui.export import load_formats
from proactive_tui.export.registry import export
from proactive_tui.export.viewer import (
    DATA_CLOSE, DATA_OPEN, ViewerError, page as page_of, read_payload, report_data, report_page, session_page, source_of,
)
from proactive_tui.store import SessionRecorder, Store, load_record
from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder

FIXTURE = ROOT / "tests" / "fixtures" / "store" / "golden_session.jsonl"
SESSION_ID = "901de2c0ffee"
ASSETS = ROOT / "proactive_tui" / "export" / "viewer_assets"
HOSTILE = "</script><img src=x onerror=alert(1)> <!-- <script>alert(2)</script> line\u2028para\u2029& end"


def record_into(store: Store) -> RunRecord:
    recorder = SessionRecorder(store)
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        recorder.handle(parse_event(line))
    recorder.close()
    return load_record(store, SESSION_ID)


@pytest.fixture
def golden_record(tmp_path: Path) -> RunRecord:
    return record_into(Store(tmp_path / "golden.db"))


def hostile(record: RunRecord) -> RunRecord:
    """The record with HOSTILE in an agent message and in the environment's title."""
    first = record.messages[0]
    message = MessageRecord.model_validate({**first.model_dump(), "content": HOSTILE})
    environment = {**record.environment, "title": HOSTILE}
    return record.model_copy(update={"messages": [message, *record.messages[1:]], "environment": environment})


def assert_self_contained(page: str) -> None:
    assert "<link" not in page.lower()
    assert not re.search(r"""(?i)\b(src|href)\s*=\s*["']?\s*(https?:)?//""", page)
    assert not re.search(r"(?i)url\(\s*['\"]?\s*(https?:)?//", page)  # no CSS fetch either
    assert not re.search(r"(?i)@import", page)
    scripts = re.findall(r"(?i)<script\b[^>]*>", page)
    assert scripts == [DATA_OPEN, "<script>"], scripts  # the data, then the inline script: no src=
    assert "default-src 'none'" in page  # the browser refuses any fetch the page might still try
    assert 'id="theme-toggle"' in page and "prefers-color-scheme: dark" in page  # follows the system until toggled


def data_segment(page: str) -> str:
    start = page.index(DATA_OPEN) + len(DATA_OPEN)
    return page[start:page.index(DATA_CLOSE, start)]


# -- a session ------------------------------------------------------------------------------------


def test_the_session_page_is_self_contained(golden_record: RunRecord) -> None:
    page = session_page(golden_record)
    assert_self_contained(page)
    assert "<title>proactive-tui session 901de2c0ffee</title>" in page
    for name in ("viewer.css", "viewer.js"):  # inlined whole from the package's files
        assert (ASSETS / name).read_text(encoding="utf-8") in page


def test_the_session_data_is_the_run_record(golden_record: RunRecord, tmp_path: Path) -> None:
    load_formats()
    (html_file,) = export([golden_record], "html", tmp_path / "s.html")
    (json_file,) = export([golden_record], "run-record", tmp_path / "s.json")
    payload = read_payload(html_file.read_text(encoding="utf-8"))
    assert payload["kind"] == "session"
    assert payload["session"]["record"] == json.loads(json_file.read_text(encoding="utf-8"))
    view = payload["session"]["view"]
    assert [s["label"] for s in view["scores"]] == [s.label for s in golden_record.scores]
    assert [s["display"] for s in view["scores"]] == [s.display for s in golden_record.scores]
    turns = [b for s in view["sections"] for b in s["blocks"] if b["kind"] == "speech"]
    assert [(b["speaker"], b["turn"]) for b in turns] == [(m.role, m.turn) for m in
                                                          sorted(golden_record.messages, key=lambda m: (m.turn, m.role))]


def test_each_score_and_verdict_says_who_gave_it(golden_record: RunRecord) -> None:
    assert source_of("llm") == "judge call" and source_of("human") == "person" and source_of("rule") == "rule"
    assert source_of("human, llm") == "person, judge call" and source_of("") == "not recorded"
    labelled = golden_record.model_copy(update={"human_labels": [{
        "session_id": SESSION_ID, "verdict": "turn_check:1", "kind": "turn check", "judge": "scripted-judge",
        "judge_value": False, "agree": False, "value": True, "note": "it was reached", "created_at": "x"}]})
    view = read_payload(session_page(labelled))["session"]["view"]
    assert {s["source"] for s in view["scores"]} == {"script"}  # the fixture's judge is a scripted seat
    verdicts = {v["key"]: v for v in view["verdicts"]}
    assert verdicts["turn_check:1"]["source"] == "script" and verdicts["turn_check:1"]["value"] == "no"
    assert verdicts["turn_check:1"]["person"] == {"agree": False, "value": "yes", "note": "it was reached",
                                                  "source": "person"}
    assert verdicts["plan_score"]["person"] is None


def test_the_header_says_where_a_branch_rerun_or_comparison_comes_from(golden_record: RunRecord) -> None:
    branch = golden_record.model_copy(update={
        "forked_from": {"session_id": "parent000001", "turn": 2, "seat": "agent", "change": "regenerated",
                        "instruction": "ask first", "changed_seats": {"agent": "openai/other"}},
        "rerun_of": {"session_id": "orig00000001", "agent": "openai/new", "user": "frozen", "user_turns_recorded": 2},
        "comparisons": [{"id": "c1", "side": "A", "sessions": [SESSION_ID, "other0000001"], "blind": True,
                         "vote": SESSION_ID, "verdict": "won", "reason": "asked first", "voted_at": "x"}]})
    header = dict(map(tuple, read_payload(session_page(branch))["session"]["view"]["header"]))
    assert header["Branch of"].startswith("parent000001 at turn 2 agent · regenerated ('ask first') · agent openai/other")
    assert header["Re-run"] == "re-run of orig00000001 against openai/new, the user's 2 recorded turns frozen " \
                               "(simulated beyond them)"
    assert header["Comparison c1"] == "side A against other0000001 (blind); voted better: asked first"
    assert header["Family"] == "ProactiveEval" and header["Agent"].startswith("scripted-agent")


def test_failed_calls_are_errors_not_replies(golden_record: RunRecord) -> None:
    from proactive_tui.core.run_record import ErrorDetail

    failed = golden_record.model_copy(update={"errors": ["guidance score failed: judge down"],
                                              "error_details": [ErrorDetail(seat="judge", purpose="guidance score",
                                                                            judgement=True)]})
    view = read_payload(session_page(failed))["session"]["view"]
    assert view["failures"] == [{"who": "guidance score · judge seat scripted-judge", "kind": "judge",
                                 "message": "guidance score failed: judge down"}]
    speeches = [b["text"] for s in view["sections"] for b in s["blocks"] if b["kind"] == "speech"]
    assert not any("judge down" in t for t in speeches)


def test_hostile_text_cannot_leave_the_data(golden_record: RunRecord) -> None:
    record = hostile(golden_record)
    page = session_page(record)
    assert_self_contained(page)
    segment = data_segment(page)
    assert not re.search("[<>&\u2028\u2029]", segment)  # escaped: nothing can close or open an element
    assert page.count("</script>") == 2 and "<img" not in page and "<!--" not in page
    titled = page_of(HOSTILE, {"kind": "session", "session": read_payload(page)["session"]})  # a hostile page title
    assert titled.count("</script>") == 2 and "<img" not in titled and titled.count("<title>") == 1
    assert "<title>&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in titled
    payload = json.loads(segment)
    assert payload["session"]["record"]["messages"][0]["content"] == HOSTILE  # the record: lossless
    assert payload["session"]["record"]["environment"]["title"] == HOSTILE
    shown = [b["text"] for s in payload["session"]["view"]["sections"] for b in s["blocks"] if "text" in b]
    assert HOSTILE in shown  # the view: the same text (plain() keeps U+2028, < and >), drawn as text
    assert dict(map(tuple, payload["session"]["view"]["header"]))["Title"] == HOSTILE


def test_the_script_never_writes_markup() -> None:
    js = (ASSETS / "viewer.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                 "setTimeout(\"", "fetch(", "XMLHttpRequest", "http://", "https://", "<script", "</script", "<!--"):
        assert sink not in js, sink
    assert "textContent" in js
    for stable in ('"sessions"', '"session-row', '"session"', '"turn ', '"judge"', '"report-tables"', '"filter"',
                   '"theme-toggle"'):
        assert stable in js, stable


def test_the_script_parses() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the viewer's JavaScript syntax is not checked")
    proc = subprocess.run([node, "--check", str(ASSETS / "viewer.js")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_export_format_html_through_the_cli(isolated_dirs: Path, tmp_path: Path, capsys) -> None:
    from proactive_tui.store.db import default_path

    record = record_into(Store(default_path()))
    out = tmp_path / "shared" / "demo.html"
    assert main(["export", SESSION_ID, "--format", "html", "--out", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    assert_self_contained(page)
    assert read_payload(page)["session"]["record"]["id"] == record.id


def test_no_key_reaches_the_page(golden_record: RunRecord, monkeypatch) -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    first = golden_record.messages[0]
    message = MessageRecord.model_validate({**first.model_dump(),
                                            "content": f"my key is {key}, the proxy https://bob:hunter22@proxy.example/v1"})
    from proactive_tui.export.formats.common import scrub

    page = session_page(scrub(golden_record.model_copy(update={"messages": [message, *golden_record.messages[1:]]})))
    assert key not in page and "hunter22" not in page


# -- a report folder ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An eval folder of every family, with scripted seats (no model): one turn, two events."""
    from test_eval_batch import Seats, run

    folder = tmp_path_factory.mktemp("mixed") / "out"
    argv = ["proactiveeval/persuasion/fair/0", "chronos/car-purchase/positive", "proactivebench/coding_01",
            "--agent", "m1", "--agent", "m2", "--agreeableness", "low", "--max-turns", "1", "--max-events", "2",
            "--no-store", "--concurrency", "2", "--out", str(folder)]
    assert run(argv, Seats()) == 0
    return folder


@pytest.fixture(scope="module")
def judged_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ProactiveEval eval folder through the fake OpenAI server: every seat a model."""
    folder = tmp_path_factory.mktemp("judged") / "out"
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        code = main(["eval", "proactiveeval/persuasion/fair/0", "--agent", "openai/a", "--user", "openai/u",
                     "--judge", "openai/j", "--api-base", server.base_url, "--agreeableness", "low",
                     "--max-turns", "1", "--no-store", "--out", str(folder)])
    assert code == 0
    return folder


def test_report_html_writes_the_default_path(mixed_folder: Path, capsys) -> None:
    target = mixed_folder / "report.html"
    target.unlink(missing_ok=True)
    assert main(["report", "html", str(mixed_folder)]) == 0
    assert capsys.readouterr().out.strip() == str(target)
    page = target.read_text(encoding="utf-8")
    assert_self_contained(page)
    assert "<title>proactive-tui report out</title>" in page


def test_report_tables_are_report_json(mixed_folder: Path) -> None:
    payload = read_payload(report_page(mixed_folder))
    written = json.loads((mixed_folder / "report.json").read_text(encoding="utf-8"))
    assert payload["kind"] == "report" and payload["report"]["source"] == "report.json"
    assert payload["report"]["data"] == written  # the same numbers, its own time of writing included
    report = BatchReport.model_validate(written)
    expected = [(family, t.id, t.title, *table_cells(t)) for family, tables in report.families.items() for t in tables]
    drawn = [(t["family"], t["id"], t["title"], t["header"], t["rows"]) for t in payload["report"]["tables"]]
    assert drawn == expected
    assert {t[0] for t in drawn} == {"proactiveeval", "proactivebench", "chronos"}
    titles = {t[2] for t in drawn}
    assert {"ProactiveEval: dialogue guidance (1-10)", "ProactiveBench: per split", "Chronos: per tier"} <= titles


def test_every_session_of_the_folder_is_embedded_whole(mixed_folder: Path) -> None:
    payload = read_payload(report_page(mixed_folder))
    files = sorted((mixed_folder / "sessions").glob("*.json"))
    assert len(payload["sessions"]) == len(files) == 2 * (1 + 1 + 1)
    by_key = {s["key_id"]: s for s in payload["sessions"]}
    for path in files:
        saved = json.loads(path.read_text(encoding="utf-8"))
        entry = by_key[saved["key_id"]]
        assert entry["file"] == f"sessions/{path.name}" and entry["status"] == "finished"
        assert entry["session"]["record"] == RunRecord.model_validate(saved["record"]).model_dump(mode="json")
        assert entry["agent"] == saved["key"]["agent"] and entry["session"]["view"]["id"] == saved["record"]["id"]
    assert {s["agent"] for s in payload["sessions"]} == {"m1", "m2"}  # what the model filter offers
    chronos = next(s for s in payload["sessions"] if s["family"] == "chronos")
    assert {x["source"] for x in chronos["session"]["view"]["scores"]} == {"rule"}  # the oracle, not a model


def test_a_model_judge_is_labelled_a_judge_call(judged_folder: Path) -> None:
    (entry,) = read_payload(report_page(judged_folder))["sessions"]
    view = entry["session"]["view"]
    overall = next(s for s in view["scores"] if s["name"] == "overall")
    assert overall["source"] == "judge call" and overall["by"] == "openai/j"
    assert {v["source"] for v in view["verdicts"]} == {"judge call"}
    assert entry["headline"]["name"] == "overall" and entry["headline"]["display"] == overall["display"]


def test_the_report_page_is_deterministic(mixed_folder: Path, tmp_path: Path, monkeypatch) -> None:
    first = tmp_path / "a.html"
    assert main(["report", "html", str(mixed_folder), "--out", str(first)]) == 0
    monkeypatch.chdir(mixed_folder.parent)  # the folder named another way: the same page
    second = tmp_path / "b.html"
    assert main(["report", "html", "out", "--out", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()


def test_a_recomputed_report_is_deterministic_too(mixed_folder: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(mixed_folder, copy)
    (copy / "report.json").write_text("{not json", encoding="utf-8")
    data = report_data(copy)
    assert data["report"]["source"] == "recomputed" and data["report"]["data"]["timing"] == {"generated_at": ""}
    assert any(p.startswith("report.json:") for p in data["report"]["problems"])
    assert report_page(copy) == report_page(copy)


def test_a_bad_folder_is_an_error_naming_it(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nowhere"
    assert main(["report", "html", str(missing)]) == 1
    assert f"{missing} does not exist" in " ".join(capsys.readouterr().err.split())
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "report.json").write_text("{not json", encoding="utf-8")
    (broken / "sessions").mkdir()
    with pytest.raises(ViewerError, match="no manifest.json and no readable report.json"):
        report_data(broken)
    assert main(["report", "html", str(broken)]) == 1
    assert "manifest.json" in capsys.readouterr().err and not (broken / "report.html").exists()


def test_the_report_page_in_a_browser(mixed_folder: Path, golden_record: RunRecord, tmp_path: Path) -> None:
    browser = chromium()
    if browser is None:
        pytest.skip("no chromium installed: the page is not drawn by a browser here (its data is checked above)")

    def dom(path: Path, fragment: str = "") -> str:
        proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                               path.as_uri() + fragment],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout

    page = tmp_path / "report.html"
    page.write_text(report_page(mixed_folder), encoding="utf-8")
    drawn = dom(page)
    assert drawn.count('class="session-row') == 6 and 'id="report-tables"' in drawn and 'id="filter"' in drawn
    assert 'id="sessions"' in drawn and 'id="theme-toggle"' in drawn
    chronos = next(s for s in read_payload(page.read_text(encoding="utf-8"))["sessions"] if s["family"] == "chronos")
    drilled = dom(page, "#s=" + quote(chronos["file"], safe=""))  # a session row's link: its session view
    assert f'data-session="{chronos["session"]["view"]["id"]}"' in drilled and 'class="turn ' in drilled
    one = tmp_path / "session.html"
    one.write_text(session_page(hostile(golden_record)), encoding="utf-8")
    drawn = dom(one)
    assert 'id="session"' in drawn and drawn.count('class="turn ') == len(golden_record.messages)
    assert 'class="judge"' in drawn
    assert "<img" not in drawn and "alert(2)</script>" not in drawn  # drawn as text, never as elements
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in drawn
