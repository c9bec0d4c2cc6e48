"""The first screen: find an environment by family, domain, tier or any word, and preview it.

Left, a filter above the tree; right, the description of the highlighted environment. The
reference solution (targets, which timeline states satisfy the needs, help-welcome marks) is
shown by default for people studying the benchmarks; `r` hides it so a person about to play the
user seat is not spoiled. Enter (or a second click) posts `EnvironmentChosen`; the app decides
what that opens.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.widgets import Input, Tree

from proactive_tui.envs.catalog import EnvironmentGone, full
from proactive_tui.envs.describe import describe
from proactive_tui.ui.env_index import (LEAVES_PER_GROUP, EnvironmentIndex, Group, MoreEnvironments, first_environment,
                                        group, is_environment, mixed_families)
from proactive_tui.ui.messages import EnvironmentChosen
from proactive_tui.ui.widgets.description_view import DescriptionView, Section
from proactive_tui.ui.widgets.env_tree import EnvironmentTree
from proactive_tui.ui.widgets.key_bar import KeyBar
from proactive_tui.ui.widgets.title_bar import TitleBar


def group_sections(grp: Group) -> list[Section]:
    """What the preview shows while a branch is highlighted: its path and what is under it (the
    first `LEAVES_PER_GROUP`, as the tree lists them, then how many more)."""
    lines = [f"{env.id}  {env.title}" for env in grp.environments[:LEAVES_PER_GROUP]]
    if grp.count > LEAVES_PER_GROUP:
        lines.append(f"… {grp.count - LEAVES_PER_GROUP:,} more: type to filter")
    source = f"\nsource: {grp.origin.description}" if grp.origin is not None else ""
    return [("", f"{' / '.join(grp.path)}\n{grp.count} environment(s){source}"), ("Environments", "\n".join(lines))]


def more_sections(more: MoreEnvironments) -> list[Section]:
    """What the preview shows on a branch's "… N more" line."""
    return [("", f"{' / '.join(more.group.path)}\n{more.count:,} more environment(s) not listed here "
                 f"(a branch lists its first {LEAVES_PER_GROUP:,}).\n"
                 "Type a word of the id, title or description (/ goes to the filter) to list them.")]


def _parsed(env: Any) -> Any:
    """The environment itself for a catalog entry (None when its file no longer holds it: the
    preview then starts empty and says so when the cursor reaches it)."""
    try:
        return full(env) if env is not None else None
    except EnvironmentGone:
        return None


class FilterInput(Input):
    """The filter field. Enter filters and moves to the list at once, while the key is handled,
    rather than through a `Submitted` message and a focus change that land later: keys typed
    faster than the app handles them (a loaded machine) are routed by the focus of the moment,
    so a second Enter right behind the first went to the field again, or to a list not yet
    filtered. The field has handled every key typed before this Enter, so its value is whole."""

    def action_submit(self) -> None:  # type: ignore[override]  # sync: done before the next key is routed
        screen = self.screen
        if isinstance(screen, PickerScreen):
            screen.leave_filter()


class PickerScreen(Screen[None]):
    """Filter + tree + preview. Owns the spoiler setting and the filter text."""

    HELP_TITLE = "Picker"
    AUTO_FOCUS = "#env-tree"
    """The list has the focus from the first frame. Textual's default (the first focusable
    widget, the filter) moved focus a frame after the first paint, which re-styled both widgets
    and re-rendered the list just as a person's first key arrived."""

    BINDINGS = [
        # Priority: taken when the key arrives, before the keys typed after it are routed (see
        # `action_focus_filter`); `check_action` lets a `/` typed in the filter through.
        Binding("slash", "focus_filter", "Filter", priority=True,
                tooltip="Type to filter by id, title or any word of the description"),
        Binding("r", "toggle_reference", "Reference", tooltip="Show or hide the reference solution (spoilers for players)"),
        Binding("d", "details", "Details", tooltip="The highlighted environment in full, in a scrollable window"),
        Binding("h", "history", "History", tooltip="Recorded sessions: replay, resume, export, delete"),
        Binding("g", "studio", "Generate", show=False, tooltip="The studio: generate environments with a paper's "
                "pipeline, stage by stage (or open a run folder)"),
        # Off the footer (80 columns hold no more); F1 lists it, the palette has it too.
        Binding("c", "compare", "Compare", show=False, tooltip="Compare agent models side by side on the highlighted "
                "environment (same user, judge and seed), blind until you vote"),
        Binding("ctrl+r", "reload", "Reload", show=False,
                tooltip="Read the environment folders again: new files (synth) appear"),
        Binding("escape", "clear_filter", "Clear", tooltip="Clear the filter and list everything"),
        Binding("down", "focus_tree", "To the list", show=False, tooltip="From the filter down to the list"),
        Binding("n", "write_new", "Write", show=False,
                tooltip="Write a new environment from scratch: a form per benchmark, checked as you type"),
    ]

    DEBOUNCE_FROM = 2_000
    """From this many environments, the filter applies after a pause in typing (`DEBOUNCE_S`)
    rather than on every key: a key that filters tens of thousands of haystacks and rebuilds the
    tree would hold up the next key. The filter field itself shows each key at once. Below it
    (the bundled environments) every key filters at once, as a person sees the list follow."""
    DEBOUNCE_S = 0.2
    WARM_SLICE = 500
    """Haystacks built per idle slice (about 10 ms) once a large picker has painted, so the
    first filter finds them ready; keys are handled between slices."""

    # `var`, not `reactive`: a reactive on a screen repaints the whole screen when it changes,
    # and the watchers already refresh exactly the widgets that change (the preview, the tree).
    reveal_reference: reactive[bool] = var(True, init=False)
    query_text: reactive[str] = var("", init=False)

    def __init__(self, environments: list[Any], first_preview: tuple[str, dict[bool, list[Section]]] | None = None,
                 **kwargs) -> None:
        """`first_preview`: (an environment's id, its preview with the reference shown and hidden),
        as the first frame's snapshot kept it (`envs.first_frame`): shown for that environment
        without parsing it or importing its family, until the list is replaced."""
        super().__init__(**kwargs)
        self.index = EnvironmentIndex(environments)
        self.mixed = mixed_families(environments)
        """Families listed with one branch per source (decided on all, so a filter keeps the shape)."""
        self.shown: list[Any] = list(environments)
        self._first_preview = first_preview
        self._shown_env: Any = None  # the environment (or catalog entry) the preview shows
        self._current: Any = None  # the same, parsed (`current`)
        self.first_listed: Any = None
        """The environment the tree listed first when the screen was composed."""
        self._groups: list[Group] | None = None  # group(self.shown), kept from compose for the first build
        self._debounce: Any = None  # the Timer of a filter waiting for a pause in typing

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="picker-body"):
            with Vertical(id="picker-left"):
                yield FilterInput(placeholder="/ filter: any word", id="filter")
                yield EnvironmentTree(id="env-tree")
            # Composed with the first environment's description already in place, so the first
            # paint is the finished screen rather than an empty pane that fills a frame later.
            self._groups = group(self.shown, self.mixed)
            self.first_listed = first_environment(self._groups)
            cached = self._cached_preview(self.first_listed)
            if cached is not None:
                yield DescriptionView(cached[self.reveal_reference], id="preview")
            else:
                first = _parsed(self.first_listed)
                yield DescriptionView(describe(first, reveal_reference=self.reveal_reference) if first else (), id="preview")
        yield KeyBar()

    @property
    def current(self) -> Any:
        """The highlighted environment, parsed (None on a branch, or when its file no longer holds
        it). A catalog entry shown from the first frame's cached preview is parsed only when asked."""
        if self._current is None and self._shown_env is not None:
            try:
                self._current = full(self._shown_env)
            except EnvironmentGone:
                self._shown_env = None
        return self._current

    @current.setter
    def current(self, env: Any) -> None:
        self._shown_env = self._current = env

    def _cached_preview(self, env: Any) -> dict[bool, list[Section]] | None:
        """The first frame's preview of `env` when it is the environment it was kept for."""
        if env is None or self._first_preview is None or getattr(env, "id", None) != self._first_preview[0]:
            return None
        return self._first_preview[1]

    @property
    def tree(self) -> EnvironmentTree:
        return self.query_one(EnvironmentTree)

    @property
    def preview(self) -> DescriptionView:
        return self.query_one("#preview", DescriptionView)

    class Ready(Message):
        """Posted once, after the picker's first paint (start-up benchmark, model preload)."""

    def on_mount(self) -> None:
        self._say_count()
        self._rebuild()
        self._update_preview_title()
        self.tree.focus()
        self.call_after_refresh(self.post_message, self.Ready())
        if len(self.index) >= self.DEBOUNCE_FROM:
            self.call_after_refresh(self._warm_index)

    def _warm_index(self) -> None:
        """One slice of the filter's haystacks, then the next after a breath (a timer, so keys
        and repaints queued meanwhile go first)."""
        if not self.index.warm(self.WARM_SLICE):
            self.set_timer(0.005, self._warm_index)

    def on_screen_resume(self) -> None:
        """Back from setup, a session or the history: their subtitles (env id, seats) are gone
        and the picker's count is back."""
        self._say_count()

    def add_environment(self, env: Any) -> None:
        """List one more environment (saved while the app runs), keeping the filter and the
        highlighted one."""
        if any(e.id == env.id for e in self.index.environments):
            return
        self._first_preview = None
        self.index = EnvironmentIndex([*self.index.environments, env])
        self.mixed = mixed_families(self.index.environments)
        self._rebuild()

    def action_reload(self) -> None:
        self.app.reload_environments()

    def replace_environments(self, environments: list[Any]) -> None:
        """List a freshly read set (ctrl+r), keeping the filter and, where it is still there, the
        highlighted environment."""
        self._first_preview = None  # the list was read again: previews come from the environments
        self.index = EnvironmentIndex(environments)
        self.mixed = mixed_families(environments)
        self._say_count()
        self._rebuild()

    def _say_count(self) -> None:
        count = len(self.index)
        self.app.sub_title = f"{count} environment{'s' if count != 1 else ''}"

    # -- filter -----------------------------------------------------------------------------

    @property
    def filter_input(self) -> Input:
        return self.query_one("#filter", Input)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "filter":
            return
        self._cancel_debounce()
        # The field's value now, not the event's: keys typed together reach here after Enter has
        # filtered by the whole text (`FilterInput`), and their prefixes would widen it again.
        value = self.filter_input.value
        if len(self.index) < self.DEBOUNCE_FROM or not value.strip():
            self.query_text = value
        else:
            self._debounce = self.set_timer(self.DEBOUNCE_S, self.apply_filter)
            self.refresh_bindings()  # Escape clears a filter still waiting to apply

    def leave_filter(self) -> None:
        """From the filter to the list, the filter applied first (Enter and Down do not wait for
        the pause in typing). The focus moves at once (`Screen.set_focus`), not after the keys
        already queued (`Widget.focus` defers it): the next key goes to the filtered list."""
        self.apply_filter()
        self.set_focus(self.tree)

    def apply_filter(self) -> None:
        """Filter by what the filter field holds now (a waiting debounce is dropped)."""
        self._cancel_debounce()
        self.query_text = self.filter_input.value

    @property
    def filter_pending(self) -> bool:
        """Whether typed text is waiting for a pause in typing before it filters."""
        return self._debounce is not None

    def _cancel_debounce(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None

    def watch_query_text(self) -> None:
        self._rebuild()
        self.refresh_bindings()

    def _rebuild(self) -> None:
        self.shown = self.index.matches(self.query_text)
        groups, self._groups = self._groups, None
        keep = self._shown_env.id if self._shown_env is not None else None
        node = self.tree.show_environments(self.shown, keep=keep, groups=groups, mixed=self.mixed)
        if node is not None:
            self._show_node(node.data)
        total = len(self.index)
        if not self.query_text.strip():
            self.tree.border_title = f"Environments ({total})"
        elif self.shown:
            self.tree.border_title = f"Environments {len(self.shown)}/{total}"
        else:
            self.tree.border_title = f"No match (0/{total})"
        self.tree.border_subtitle = "" if self.shown else "Escape clears the filter"
        if not self.shown:
            self.current = None
            self.preview.show([("", f"No environment matches {self.query_text.strip()!r}.\nEscape clears the filter.")])

    def action_focus_filter(self) -> None:
        """To the filter at once: `/` is a priority binding, run as the app takes the key, so the
        letters typed right behind it go to the filter even when they arrived together (a busy
        app). With the deferred `Widget.focus` they went to the list: a letter that is a key
        there (`r`, `c`, `n`) acted, and an Enter opened the environment highlighted before."""
        self.set_focus(self.filter_input)

    def action_focus_tree(self) -> None:
        if isinstance(self.focused, Input):
            self.leave_filter()
        else:
            self.set_focus(self.tree)

    def action_clear_filter(self) -> None:
        self._cancel_debounce()
        self.filter_input.value = ""
        self.query_text = ""
        self.set_focus(self.tree)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide keys that do nothing right now: Escape with no filter, and `/` and `r` while
        typing in the filter (the input takes those characters)."""
        if action == "clear_filter":
            return bool(self.query_text) or self.filter_pending
        if action == "details":
            return self._shown_env is not None and not isinstance(self.focused, Input)
        if action in ("focus_filter", "toggle_reference", "history"):
            return not isinstance(self.focused, Input)
        return True

    def action_details(self) -> None:
        from proactive_tui.ui.screens.detail import EnvironmentDetailScreen

        if self.current is not None:
            self.app.push_screen(EnvironmentDetailScreen(self.current, reveal_reference=self.reveal_reference))

    def action_history(self) -> None:
        self.app.open_history()

    def action_write_new(self) -> None:
        from proactive_tui.ui.studio.write import open_write_form

        open_write_form(self.app)

    def action_studio(self) -> None:
        self.app.open_studio()  # type: ignore[attr-defined]

    def action_compare(self) -> None:
        if self.current is not None:
            self.app.ask_compare(self.current)  # type: ignore[attr-defined]

    # -- preview ----------------------------------------------------------------------------

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        """Show what is under the cursor now, not the event's node: after a filter rebuilt the
        tree, highlight messages from the old tree (or from a cursor that moved on) can still be
        in the queue, and showing their node left a stale preview."""
        node = self.tree.cursor_node
        if node is not None:
            self._show_node(node.data)

    def _show_node(self, data: Any) -> None:
        if isinstance(data, Group):
            self.preview.show(group_sections(data))
        elif isinstance(data, MoreEnvironments):
            self.preview.show(more_sections(data))
        elif data is not None:
            cached = self._cached_preview(data)
            if cached is not None:  # the first frame's: nothing parsed until it is needed
                self._shown_env, self._current = data, None
                self.preview.show(cached[self.reveal_reference])
                return
            try:
                self.current = full(data)
            except EnvironmentGone as exc:
                self.current = None
                self.preview.show([("", f"{exc}")])
                return
            self.preview.show(describe(self.current, reveal_reference=self.reveal_reference))

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        """Open what the list highlights once the filter typed so far has applied: a filter still
        waiting for a pause in typing (a large list; Tab or a click took the focus to the list)
        applies first, and the cursor's node is read now, not the event's (a rebuild between the
        key and this message would leave the event a row of the old list)."""
        if self.filter_input.value != self.query_text:
            self.apply_filter()
        node = self.tree.cursor_node
        if node is None:
            return
        data = node.data
        if is_environment(data):
            try:
                env = full(data)
            except EnvironmentGone as exc:
                self.notify(str(exc), severity="warning", markup=False)
                return
            self.post_message(EnvironmentChosen(env, reveal_reference=self.reveal_reference))

    def action_toggle_reference(self) -> None:
        self.reveal_reference = not self.reveal_reference

    def watch_reveal_reference(self, reveal: bool) -> None:
        if not self.is_mounted:  # compose reads the flag before the widgets exist
            return
        self._update_preview_title()
        node = self.tree.cursor_node
        if node is None or not is_environment(node.data) or self._shown_env is None:
            return
        cached = self._cached_preview(self._shown_env)
        if cached is not None:
            self.preview.sections = tuple(cached[reveal])
        elif self.current is not None:
            self.preview.sections = tuple(describe(self.current, reveal_reference=reveal))

    def _update_preview_title(self) -> None:
        state = "reference shown" if self.reveal_reference else "reference hidden"
        self.preview.border_title = f"Preview · {state}"
        self.preview.border_subtitle = "r hides it" if self.reveal_reference else "r shows it"
