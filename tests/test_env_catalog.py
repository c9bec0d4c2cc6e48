"""The environment catalog (envs.catalog): a lazy load from the cached index lists the same
environments, ids and problems as the eager load, parses records on demand into equal
environments, and never trusts a stale or corrupt index."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import SAMPLE_DIRS
from proactive_tui.envs import catalog, load_paths
from proactive_tui.envs.catalog import Entry, EnvironmentGone
from proactive_tui.envs.registry import EnvSource
from proactive_tui.ui.env_index import EnvironmentIndex

SAMPLE_FAIR = SAMPLE_DIRS["proactiveeval"] / "persuasion" / "fair.json"


def _sources(tmp: Path) -> list:
    """The samples as built-ins, plus a folder of one's own sharing a sample's file (shared ids),
    holding a bad record, a non-ASCII title (byte spans) and a duplicate id across its files."""
    records = json.loads(SAMPLE_FAIR.read_text(encoding="utf-8"))
    mine = tmp / "mine" / "persuasion"
    mine.mkdir(parents=True)
    extra = json.loads(json.dumps(records[0]))
    extra["target"] = "Überzeugen — naïve café ☕ " + extra["target"]
    (mine / "fair.json").write_text(json.dumps([*records, {"environment": 3}, extra], ensure_ascii=False),
                                    encoding="utf-8")
    (mine / "hard.json").write_text("{not json", encoding="utf-8")
    return [*(EnvSource(path, name, kind="builtin") for name, path in SAMPLE_DIRS.items()), tmp / "mine"]


def _same(eager, lazy) -> None:
    assert [e.id for e in lazy.environments] == [e.id for e in eager.environments]
    assert [p.render() for p in lazy.problems] == [p.render() for p in eager.problems]
    assert lazy.shared == eager.shared
    for entry, env in zip(lazy.environments, eager.environments):
        assert isinstance(entry, Entry)
        assert (entry.title, entry.list_label, entry.family, entry.domain, entry.tier, entry.source) == \
            (env.title, env.list_label, env.family, env.domain, env.tier, env.source)
        assert entry.search_text() == env.search_text()
        assert entry.origin == env.origin
        parsed = entry.parse()
        assert parsed == env and parsed.id == env.id and parsed.origin == env.origin and parsed._file == env._file


def test_lazy_load_lists_what_the_eager_load_lists(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    eager = load_paths(sources)
    assert eager.problems and eager.shared  # the case has both, or it proves little
    _same(eager, load_paths(sources, lazy=True))  # builds the index
    _same(eager, load_paths(sources, lazy=True))  # reads it


def test_second_lazy_load_reads_no_file_in_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sources = _sources(tmp_path)
    eager = load_paths(sources)
    load_paths(sources, lazy=True)
    from proactive_tui.envs import registry

    def no_full_read(*args, **kwargs):
        raise AssertionError("a file with a current index was read in full")

    monkeypatch.setattr(registry, "_load_file", no_full_read)
    lazy = load_paths(sources, lazy=True)
    _same(eager, lazy)
    non_ascii = next(e for e in lazy.environments if e.id.endswith("/fair/3") and e.origin.yours)
    assert non_ascii.span is not None and "naïve café" in non_ascii.full().item.target  # its bytes, parsed alone


def test_filter_words_match_the_eager_picker(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    eager = EnvironmentIndex(load_paths(sources).environments)
    load_paths(sources, lazy=True)
    lazy = EnvironmentIndex(load_paths(sources, lazy=True).environments)
    for query in ("café", "persuasion hard", "timeline", "builtin", "zzz-nothing"):
        assert [e.id for e in lazy.matches(query)] == [e.id for e in eager.matches(query)]
    assert lazy.matches("café")


def test_stale_index_is_rebuilt(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    load_paths(sources, lazy=True)
    fair = tmp_path / "mine" / "persuasion" / "fair.json"
    records = json.loads(fair.read_text(encoding="utf-8"))
    fair.write_text(json.dumps(records[:1], ensure_ascii=False), encoding="utf-8")
    os.utime(fair, ns=(1, 1))  # a new mtime even on a coarse clock
    eager = load_paths(sources)
    lazy = load_paths(sources, lazy=True)
    _same(eager, lazy)
    assert len([e for e in lazy.environments if e.origin.yours]) == 1
    _same(eager, load_paths(sources, lazy=True))  # the rebuilt index serves the next start


def test_corrupt_index_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    load_paths(sources, lazy=True)
    indexes = sorted(catalog.cache_folder().glob("*"))  # the indexes and their words files
    assert any(p.suffix == ".words" for p in indexes) and any(p.suffix == ".json" for p in indexes)
    for n, path in enumerate(indexes):
        stored = path.read_text(encoding="utf-8")
        # torn JSON, then a whole one with a wrong column type, then an empty file
        path.write_text([stored[: len(stored) // 2], stored.replace('"persuasion"', "7"), ""][n % 3], encoding="utf-8")
    eager = load_paths(sources)
    _same(eager, load_paths(sources, lazy=True))
    assert [e.id for e in EnvironmentIndex(load_paths(sources, lazy=True).environments).matches("café")] == \
        [e.id for e in EnvironmentIndex(eager.environments).matches("café")]
    for path in indexes:
        if path.suffix == ".json":
            assert isinstance(json.loads(path.read_text(encoding="utf-8"))["entries"], list)  # written again


def test_index_spans_that_lie_fall_back_to_the_whole_file(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    eager = load_paths(sources)
    lazy = load_paths(sources, lazy=True)
    lazy = load_paths(sources, lazy=True)
    for entry in lazy.environments:
        if entry.span is not None:
            entry.span = (0, 5)
    _same(eager, lazy)


def test_a_record_gone_since_the_start_is_said(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    load_paths(sources, lazy=True)
    lazy = load_paths(sources, lazy=True)
    fair = tmp_path / "mine" / "persuasion" / "fair.json"
    last = next(e for e in lazy.environments if e.id.endswith("/fair/3") and e.origin.yours)
    second = next(e for e in lazy.environments if e.id.endswith("/fair/1") and e.origin.yours)
    records = json.loads(fair.read_text(encoding="utf-8"))
    fair.write_text(json.dumps(records[:2], ensure_ascii=False), encoding="utf-8")
    with pytest.raises(EnvironmentGone, match="no longer in the file"):
        last.full()
    assert second.full().index == 1 and second.full().id == second.id  # found again by its source


def test_duplicate_ids_within_a_source_are_skipped_as_eagerly(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    nested = tmp_path / "mine" / "more" / "persuasion"
    nested.mkdir(parents=True)
    (nested / "fair.json").write_text(SAMPLE_FAIR.read_text(encoding="utf-8"), encoding="utf-8")
    eager = load_paths(sources)
    assert any("duplicate id" in p.message for p in eager.problems)
    load_paths(sources, lazy=True)
    _same(eager, load_paths(sources, lazy=True))
