"""Schema v7: a label and a vote name who gave them (ProactBench's study has many raters per
verdict and many voters per pair). A v6 database's labels and comparisons upgrade as the store
user's own (rater and voter ''), and several raters can then label one verdict."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from proactive_tui.store.db import MIGRATIONS, SCHEMA_VERSION, ComparisonRow, LabelRow, Store


def test_a_v6_database_keeps_its_labels_and_votes_and_takes_several_raters(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with sqlite3.connect(path) as raw:
        for statement in [s for step in MIGRATIONS[:6] for s in step]:
            raw.execute(statement)
        raw.execute("PRAGMA user_version=6")
        raw.execute("INSERT INTO sessions (id, env_id, family, seats, models, settings, status, created_at, updated_at, title) "
                    "VALUES ('s1', 'e', 'proactbench', '{}', '{}', '{}', 'finished', 't', 't', '')")
        raw.execute("INSERT INTO labels (session_id, verdict, kind, judge, judge_value, agree, value, note, created_at) "
                    "VALUES ('s1', 'trigger:1', 'turn check', 'm', 'true', 1, 'true', 'mine', '2026-01-01')")
        raw.execute("INSERT INTO comparisons (id, env_id, sessions, blind, vote, reason, created_at) "
                    "VALUES ('c1', 'e', '[\"s1\", \"s2\"]', 1, 's1', '', '2026-01-01')")
    with Store(path) as store:
        assert store.schema_version() == SCHEMA_VERSION >= 7
        (label,) = store.labels("s1")
        assert label.rater == "" and label.note == "mine" and label.value is True
        assert store.comparisons()[0].voter == "" and store.comparisons()[0].vote == "s1"
        for rater in ("A01", "A02"):
            store.put_label(label.model_copy(update={"rater": rater, "note": rater}))
        assert sorted((row.rater, row.note) for row in store.labels("s1")) == [("", "mine"), ("A01", "A01"), ("A02", "A02")]
        assert store.delete_label("s1", "trigger:1", rater="A01")
        assert sorted(row.rater for row in store.labels("s1")) == ["", "A02"]
        store.put_comparison(ComparisonRow(id="c2", env_id="e", sessions=["s1", "s2"], vote="tie", created_at="2026-01-02",
                                           voter="P03"))
        assert [(c.id, c.voter) for c in store.comparisons()] == [("c1", ""), ("c2", "P03")]
    assert LabelRow.model_fields["rater"].default == ""
