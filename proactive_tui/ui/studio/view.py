"""What a family's studio view is: a column of stage blocks drawn from an item's step files.

The studio screen owns the run (step / auto / pause / stop, edit, keep / reject, play); a family
only draws. `StudioItemView.show(state, live)` is called with the item as its folder holds it
(`synth.engine.read_item`) each time a step lands, and with the step being called now (`live`),
so the same drawing serves a run under way, a finished run, and one made headless. A block bound
to a step (`StageBlock.step`) is what `e` edits: the screen asks the focused block for its step.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from proactive_tui.synth.engine import ItemState

STATES = ("done", "live", "pending", "rejected", "edited", "cached")


class SetupToolContext:
    """What a setup tool is given: the family's choices so far (`domains` or templates: the
    values of the family's target option), each role's settings (`synth.setup.resolve_roles`),
    the run folder it may write into (created on demand) and the gateway's limits."""

    def __init__(self, family: str, targets: list[str], roles: dict[str, Any], folder: Any, limits: Any = None) -> None:
        self.family = family
        self.targets = targets
        self.roles = roles
        self.folder = folder
        self.limits = limits


class StageBlock(Static, can_focus=True):
    """One stage's output (or a part of it: a candidate, a probe, a draft). Focusable, so a
    person can move through the stages with tab / arrows and edit the one in focus.

    `step`: the step file this block shows, None for a block that is not one model call (a
    verdict the pipeline computed, a diff). `state` is drawn as a CSS class (`-done`, `-live`,
    `-rejected`, `-edited`, `-pending`)."""

    DEFAULT_CSS = """
    StageBlock { height: auto; padding: 0 1; margin: 0 0 1 0; border-left: thick $panel; }
    StageBlock.-live { border-left: thick $warning; }
    StageBlock.-rejected { border-left: thick $error; }
    StageBlock.-edited { border-left: thick $success; }
    StageBlock.-pending { color: $text-muted; }
    StageBlock:focus { border-left: thick $accent; background: $boost; }
    """
    """The focus rule last: a focused rejected (or live, edited) block shows the focus colour, so
    a person sees which block `e` edits."""

    def __init__(self, title: str, body: RenderableType | str, step: str | None = None, *, state: str = "done",
                 id: str | None = None) -> None:
        if isinstance(body, str):
            body = Text(body)  # model and environment text is data: never markup
        super().__init__(id=id)
        self.title = title
        self.body = body
        self.step = step
        self.state = state
        self.add_class(f"-{state}")

    def render(self) -> RenderableType:
        from rich.console import Group

        head = Text(self.title, style="bold")
        if self.state == "edited":
            head.append("  (edited by a person)", style="italic")
        elif self.state == "live":
            head.append("  (calling…)", style="italic")
        return Group(head, self.body)


class StudioItemView(VerticalScroll):
    """A family's drawing of one item. Subclasses give `blocks`; `show` redraws them, keeping
    the focused step in focus (a person reading the third probe keeps reading it as the judge's
    verdict lands below)."""

    DEFAULT_CSS = """
    StudioItemView { height: 1fr; }
    """

    def __init__(self, pipeline: Any, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.pipeline = pipeline
        self.state: ItemState | None = None
        self.live: str | None = None

    @classmethod
    def setup_tool(cls) -> tuple[str, type] | None:
        """A family's extra step in the studio setup, or None: (button label, a ModalScreen
        class). The screen is built as `Screen(context)` with a `SetupToolContext` and dismisses
        with more `synth` command-line arguments (a list of strings, e.g. `--tree FILE --leaf
        ...`) or None (cancelled). ProactiveEval's is its topic tree."""
        return None

    def blocks(self, state: ItemState, live: str | None) -> list[Widget]:
        """The item's stages in the order they are made; `live` is the step being called now
        (draw it as pending/live), None when nothing is under way."""
        raise NotImplementedError

    def show(self, state: ItemState, live: str | None = None) -> None:
        self.state, self.live = state, live
        focused = self.focused_step()
        focused_title = self.app.focused.title if isinstance(self.app.focused, StageBlock) else None
        self.remove_children()
        self.place_blocks(self.blocks(state, live))
        if focused is None and focused_title is None:
            return

        def refocus() -> None:
            # every block, also those a family nests in rows or columns
            for block in self.query(StageBlock):
                if (focused is not None and block.step == focused) or (focused is None and block.title == focused_title):
                    block.focus(scroll_visible=False)
                    return

        self.call_after_refresh(refocus)

    def place_blocks(self, blocks: list[Widget]) -> None:
        """Mount the blocks `show` drew; a family lays them out its own way here (Chronos puts its
        two branches in columns when the view is wide), and `show` keeps the focus either way."""
        self.mount_all(blocks)

    def focused_step(self) -> str | None:
        """The step of the block in focus (what `e` edits), or None."""
        focused = self.app.focused if self.is_attached else None
        if isinstance(focused, StageBlock) and focused in self.query(StageBlock):
            return focused.step
        return None
