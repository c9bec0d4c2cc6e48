"""`snap_compare`: the screens' SVG snapshot tests, on syrupy.

Why our own: pytest-textual-snapshot 1.1.0 (Textualize, MIT), the last release, pins syrupy 4.8,
which requires pytest below 9; the fix (its PR #24, syrupy 5) has stayed unmerged. Its fixture is
small, and both of its foundations are maintained: syrupy (5 made the method it overrode public)
and Textual's own screenshot function (`textual._doc.take_svg_screenshot`, what it called, also used
by Textual's docs). So this module keeps its behaviour on those, which keeps every existing
snapshot valid unchanged:
- the same picture: `take_svg_screenshot(app, press, terminal_size, run_before)`;
- the same files: `tests/__snapshots__/<test module>/<test name>.svg`, one per test;
- the same comparison: Rich's per-export random id in the SVG's class names is taken out of the
  stored and the new SVG before they are compared, and before a new one is written.
`--snapshot-update` (syrupy's) accepts what the screens now show. A mismatch leaves the received
SVG in `<pytest's base temp>/snapshots-received/`, and the run's summary names the folder: open it
beside the stored one (CONTRIBUTING.md, "Snapshot tests").
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path, PurePath
from typing import Any, Awaitable, Callable, Iterable

import pytest
from syrupy import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

_RECEIVED = pytest.StashKey[list[Path]]()


def normalize_svg(svg: str) -> str:
    """The SVG without the random id Rich puts in every class name of an export."""
    return re.sub(r"\bterminal-\d+-([\w-]+)", r"terminal-\1", svg)


class SVGImageExtension(SingleFileSnapshotExtension):
    """One text file per snapshot, `.svg`, compared and written normalised."""

    file_extension = "svg"
    _write_mode = WriteMode.TEXT

    def read_snapshot_data_from_location(self, *, snapshot_location: str, snapshot_name: str,
                                         session_id: str) -> Any:
        data = super().read_snapshot_data_from_location(snapshot_location=snapshot_location,
                                                        snapshot_name=snapshot_name, session_id=session_id)
        return normalize_svg(data) if data is not None else None

    def serialize(self, data: Any, **kwargs: Any) -> Any:
        return normalize_svg(super().serialize(data, **kwargs))


@pytest.fixture
def snap_compare(snapshot: SnapshotAssertion, request: pytest.FixtureRequest,
                 tmp_path_factory: pytest.TempPathFactory) -> Callable[..., bool]:
    """`snap_compare(app, press=(), terminal_size=(80, 24), run_before=None)`: whether the app's
    screen now is the stored snapshot (`app` an App instance, or a path to a file holding one)."""
    snapshot = snapshot.use_extension(SVGImageExtension)

    def compare(app: Any, press: Iterable[str] = (), terminal_size: tuple[int, int] = (80, 24),
                run_before: Callable[[Any], Awaitable[None] | None] | None = None) -> bool:
        from textual._doc import take_svg_screenshot
        from textual.app import App

        if not isinstance(app, App):
            from textual._import_app import import_app

            path = Path(app) if Path(app).is_absolute() else request.node.path.parent / PurePath(app)
            app = import_app(str(path.resolve()))
        async def then_steady_cursors(pilot: Any) -> None:
            """`run_before` and the keys, as `take_svg_screenshot` runs them, then every text
            cursor steady: a blinking one is in either phase when the picture is taken, and on a
            loaded machine more than its half-second can pass between a field's focus and the
            shot (the write form's snapshot failed once so in CI)."""
            if run_before is not None:
                result = run_before(pilot)
                if inspect.isawaitable(result):
                    await result
            await pilot.pause()
            await pilot.press(*press)
            for screen in pilot.app.screen_stack:
                for widget in screen.query("Input, TextArea"):
                    widget.cursor_blink = False  # shown while focused, as at the blink's first phase
            await pilot.pause()

        received = take_svg_screenshot(app=app, terminal_size=terminal_size, run_before=then_steady_cursors)
        matched = snapshot == received
        if not matched:
            folder = tmp_path_factory.getbasetemp() / "snapshots-received"
            folder.mkdir(exist_ok=True)
            name = re.sub(r"[^\w.\[\]-]+", "_", request.node.nodeid)
            (folder / f"{name}.svg").write_text(received, encoding="utf-8")
            request.config.stash.setdefault(_RECEIVED, []).append(folder / f"{name}.svg")
        return matched

    return compare


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    received = config.stash.get(_RECEIVED, [])
    if received:
        terminalreporter.write_line(f"{len(received)} snapshot(s) differ; the received SVGs are in "
                                    f"{received[0].parent}")
