"""Install the test-only `countdown` family (tests/plugin_family/countdown) through the entry-point
group `proactive_tui.families`, exactly as a separately installed package would: a
`countdown_plugin-0.1.dist-info/` with an `entry_points.txt`, on `sys.path`, then
`registry.reset()`. Everything is undone (and the registry reset again) afterwards.

    from plugin_helpers import countdown_plugin  # noqa: F401  (a fixture)

    def test_something(countdown_plugin): ...
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

import pytest

from proactive_tui.core import registry

TESTS = Path(__file__).resolve().parent
BUILTINS = ["proactiveeval", "proactivebench", "chronos", "proactbench"]
ENTRY_POINTS = "[proactive_tui.families]\ncountdown = plugin_family.countdown:family\n"


def write_dist_info(site: Path) -> Path:
    """A minimal installed-distribution record declaring the countdown entry point."""
    info = site / "countdown_plugin-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: countdown-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    return info


def _forget_exporter() -> None:
    from proactive_tui.export import registry as exports

    exports.EXPORTERS.pop("countdown", None)


@contextlib.contextmanager
def countdown_installed(site: Path) -> Iterator[object]:
    """The countdown family installed for the duration; yields it."""
    write_dist_info(site)
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(TESTS))
        mp.syspath_prepend(str(site))
        registry.reset()
        try:
            names = registry.names()
            assert names[:len(BUILTINS)] == BUILTINS and names[-1] == "countdown", (names, registry.problems())
            yield registry.get("countdown")
        finally:
            _forget_exporter()
    registry.reset()  # after sys.path is restored: the next lookup finds only the built-ins
    _forget_exporter()


@pytest.fixture
def countdown_plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    with countdown_installed(tmp_path_factory.mktemp("site")) as family:
        yield family
