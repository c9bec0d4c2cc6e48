"""Large files with no index yet (issue 35 point 6): indexed in one streaming pass, record by record,
into the very index and filter words the full load writes; anything a record-by-record pass could
not word the same way falls back to the full load; and the playground lists such a file once it
has indexed it after the first frame."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SAMPLE_DIRS
from proactive_tui.envs import catalog, load_paths

SAMPLE_FAIR = SAMPLE_DIRS["proactiveeval"] / "persuasion" / "fair.json"


def _write(folder: Path, records: list, *, bom: bool = False, newline: str = "\n") -> Path:
    path = folder / "persuasion" / "fair.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "[" + ("," + newline).join(json.dumps(r, ensure_ascii=False, indent=1) for r in records) + "]" + newline
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.replace("\n", newline).encode("utf-8"))
    return path


def _records(n: int) -> list:
    base = json.loads(SAMPLE_FAIR.read_text(encoding="utf-8"))
    out = []
    for i in range(n):
        record = json.loads(json.dumps(base[i % len(base)]))
        record["target"] = f"Überzeugen {i} — naïve café ☕ " + record["target"]
        out.append(record)
    return out


def _index_files(path: Path) -> tuple[dict, list[str]]:
    from proactive_tui.envs.registry import _display, _folder_names
    from proactive_tui.core.family import FileCandidate

    root = path.parent.parent
    file = FileCandidate(path=path, root=root, display=_display(path), folders=_folder_names(path, root))
    where = catalog.index_path(file)
    return json.loads(where.read_text(encoding="utf-8")), where.with_suffix(".words").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("bom,newline", [(False, "\n"), (True, "\r\n")])
def test_the_streaming_pass_writes_the_index_the_full_load_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  bom: bool, newline: str) -> None:
    path = _write(tmp_path / "big", _records(40), bom=bom, newline=newline)
    monkeypatch.setattr(catalog, "STREAM_CHUNK", 97)  # elements cut across chunks, in every place
    monkeypatch.setattr(catalog, "STREAM_FROM", 0)
    calls = []
    real = catalog.stream_rows
    monkeypatch.setattr(catalog, "stream_rows", lambda *a: calls.append(1) or real(*a))
    streamed = load_paths([tmp_path / "big"], lazy=True)
    assert calls and not streamed.problems
    index, words = _index_files(path)
    monkeypatch.setattr(catalog, "STREAM_FROM", 10**12)  # the full load, into a fresh cache
    monkeypatch.setenv("PROACTIVE_TUI_CACHE", str(tmp_path / "cache2"))
    full = load_paths([tmp_path / "big"], lazy=True)
    assert (index, words) == _index_files(path)
    eager = load_paths([tmp_path / "big"])
    assert [e.id for e in streamed.environments] == [e.id for e in full.environments] == [e.id for e in eager.environments]
    monkeypatch.delenv("PROACTIVE_TUI_CACHE")
    again = load_paths([tmp_path / "big"], lazy=True)  # from the streamed index: records parsed by their bytes
    for entry, env in zip(again.environments, eager.environments):
        assert entry.full() == env


@pytest.mark.parametrize("bad", ["record", "not an array", "trailing comma", "cut short"])
def test_what_the_streaming_pass_cannot_word_goes_to_the_full_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     bad: str) -> None:
    monkeypatch.setattr(catalog, "STREAM_FROM", 0)
    monkeypatch.setattr(catalog, "STREAM_CHUNK", 101)
    records = _records(5)
    path = _write(tmp_path / "big", records + ([{"environment": 3}] if bad == "record" else []))
    text = path.read_text(encoding="utf-8")
    if bad == "not an array":
        path.write_text(json.dumps({"items": records}), encoding="utf-8")
    elif bad == "trailing comma":
        path.write_text(text.rstrip().rstrip("]") + ",]", encoding="utf-8")
    elif bad == "cut short":
        path.write_text(text[: len(text) // 2], encoding="utf-8")
    eager = load_paths([tmp_path / "big"])
    assert eager.problems
    lazy = load_paths([tmp_path / "big"], lazy=True)
    assert [p.render() for p in lazy.problems] == [p.render() for p in eager.problems]
    assert [e.id for e in lazy.environments] == [e.id for e in eager.environments]


async def test_a_large_file_without_an_index_is_listed_once_indexed_after_the_first_frame(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from proactive_tui.ui.app import ProactiveApp

    monkeypatch.setenv("PROACTIVE_TUI_PRELOAD", "off")
    path = _write(tmp_path / "big", _records(300))
    sizes = [p.stat().st_size for d in SAMPLE_DIRS.values() for p in d.rglob("*.json")]
    assert path.stat().st_size > max(sizes)
    monkeypatch.setattr(catalog, "LATER_FROM", path.stat().st_size)  # ours counts as large, no sample does
    expected = [e.id for e in load_paths([tmp_path / "big"]).environments]
    import threading

    release = threading.Event()
    build = catalog.build_index
    monkeypatch.setattr(catalog, "build_index", lambda *a: release.wait(30) and build(*a))
    app = ProactiveApp(extra_envs=[str(tmp_path / "big")])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        first = [e.id for e in app.screen.index.environments]
        assert not any(e.origin.yours for e in app.screen.index.environments)  # not read before the first frame
        assert any("in the background" in n.message for n in app._notifications)
        release.set()
        for _ in range(100):
            await pilot.pause(0.05)
            if set(expected) <= {e.id for e in app.screen.index.environments}:
                break
        listed = [e.id for e in app.screen.index.environments]
        assert [e.id for e in app.screen.index.environments if e.origin.yours] == expected
        assert len(listed) == len(first) + len(expected)
    monkeypatch.setattr(catalog, "LATER_FROM", 10**12)
    # the next start finds the index: nothing is left for later, the same list at once
    app = ProactiveApp(extra_envs=[str(tmp_path / "big")])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert [e.id for e in app.screen.index.environments] == listed
