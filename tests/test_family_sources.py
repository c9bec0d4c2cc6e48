"""Each family names its source (paper, arXiv id, repository) where a reader meets it: the README,
`envs show`, the picker preview and the dataset exports' metadata. Other works share the names."""

from __future__ import annotations

from conftest import ROOT
from proactive_tui.core import registry
from proactive_tui.envs import load_default
from proactive_tui.envs.describe import describe

BUILT_IN = ("proactiveeval", "proactivebench", "chronos")
SAME_NAME = {"proactivebench": "2603.19466", "chronos": "2603.16862"}


def test_every_built_in_family_has_a_source_and_the_readme_names_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in BUILT_IN:
        ref = registry.get(name).source
        assert ref is not None and ref.arxiv and ref.paper
        assert ref.arxiv in readme and ref.paper in readme, name
        if ref.repository:
            assert ref.repository.removeprefix("https://github.com/") in readme
    for name, other in SAME_NAME.items():
        assert any(other in d for d in registry.get(name).source.distinct_from), name
        assert other in readme


def test_describe_names_the_source_and_the_works_not_to_confuse() -> None:
    envs = load_default().environments
    for name in BUILT_IN:
        env = next(e for e in envs if e.family == name)
        sections = dict(describe(env, reveal_reference=False))
        ref = registry.get(name).source
        assert f"arXiv {ref.arxiv}" in sections["Benchmark"]
        if name in SAME_NAME:
            assert SAME_NAME[name] in sections["Benchmark"]


def test_export_metadata_names_the_benchmark() -> None:
    from proactive_tui.export.formats.common import run_facts

    class Record:  # only what run_facts reads
        started_at, models, settings, seats, human_seats, mode, termination = "d", {}, {}, {}, [], "watch", None
        forked_from = rerun_of = None
        comparisons: list = []
        human_labels: list = []

    for name in BUILT_IN:
        record = Record()
        record.family = name
        facts = run_facts(record)  # type: ignore[arg-type]
        assert facts["benchmark"]["arxiv"] == registry.get(name).source.arxiv
        assert facts["benchmark"]["name"] == registry.get(name).title
