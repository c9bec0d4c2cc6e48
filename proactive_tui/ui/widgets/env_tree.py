"""The picker's tree: families -> domains (-> tiers for proactiveeval) -> environments, a family
whose environments come from several sources split into one branch per source
(`dataset:proactiveeval`, `builtin:proactiveeval`, named as their ids are qualified).

Labels are `Text` built from plain strings (escape sequences stripped), never markup.
Branch labels carry counts ("recommendation (4)") so a filter shows at a glance where its
matches are. Leaves hold the environment as node data; branches hold their `Group`. A branch
lists at most `LEAVES_PER_GROUP` environments, then one "… N more: type to filter" line whose
data is a `MoreEnvironments` (not an environment: selecting it opens nothing).
"""

from __future__ import annotations

from typing import Any, Sequence

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from proactive_tui.textsafe import plain
from proactive_tui.ui.env_index import LEAVES_PER_GROUP, Group, MoreEnvironments, group


def group_label(grp: Group) -> Text:
    return Text.assemble((plain(grp.label), "bold"), f" ({grp.count})")


class EnvironmentTree(Tree[Any]):
    """A `Tree` that rebuilds from a list of environments and keeps the cursor on the same
    environment when it is still listed.

    A single click only moves the cursor (so the preview follows the mouse); clicking the
    highlighted environment again opens it, like Enter. Opening on the first click would throw
    a modal over the preview a person was about to read.
    """

    HELP_TITLE = "Environment list"
    BINDINGS = [
        Binding("enter", "select_cursor", "Open", tooltip="Open the highlighted environment (Enter on a group folds it)"),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__("environments", **kwargs)
        self.show_root = False
        self.guide_depth = 3

    def show_environments(
        self, environments: Sequence[Any], keep: str | None = None, groups: list[Group] | None = None,
        mixed: set[str] | frozenset[str] = frozenset(),
    ) -> TreeNode[Any] | None:
        """Rebuild showing only `environments` (already grouped as `groups`, when given; else
        grouped with one branch per source for the `mixed` families), all expanded; put the
        cursor on the environment with id `keep` if listed, else on the first environment.
        Returns the node under the cursor."""
        self.clear()
        target: TreeNode[Any] | None = None
        first: TreeNode[Any] | None = None
        for family in group(environments, mixed) if groups is None else groups:
            for leaf in self._add_group(self.root, family):
                first = first or leaf
                if keep is not None and leaf.data.id == keep:
                    target = leaf
        self.root.expand_all()
        # Reading `last_line` lays the lines out now, so the nodes know their line numbers and
        # the cursor can be placed before the next refresh.
        _ = self.last_line
        node = target or first
        if node is None:
            return None
        # Set the line rather than `move_cursor`: scrolling to a node before the first layout
        # (size 0) would scroll the family headings out of view.
        self.cursor_line = node.line
        if target is None:
            self.scroll_home(animate=False)
        else:
            self.call_after_refresh(self.scroll_to_node, node, False)
        return node

    def _add_group(self, parent: TreeNode[Any], grp: Group) -> list[TreeNode[Any]]:
        node = parent.add(group_label(grp), data=grp, expand=True)
        if grp.children:
            leaves = []
            for child in grp.children:
                leaves += self._add_group(node, child)
            return leaves
        shown = grp.environments[:LEAVES_PER_GROUP]
        leaves = [node.add_leaf(Text(plain(env.list_label)), data=env) for env in shown]
        if len(grp.environments) > len(shown):
            more = MoreEnvironments(grp, len(grp.environments) - len(shown))
            node.add_leaf(Text(more.label, style="italic"), data=more)
        return leaves

    _content_width: int | None = None
    """The content width while `render_lines` runs: asked once per render, not once per label
    (the region is a property worked out anew on every call)."""

    def render_lines(self, crop: Any) -> list[Any]:
        self._content_width = self.scrollable_content_region.width
        try:
            return super().render_lines(crop)
        finally:
            self._content_width = None

    def _room(self, node: TreeNode[Any]) -> int:
        """The cells a label has at `node`'s depth (labels wider are cut, `render_label`)."""
        depth = 0
        parent = node.parent
        while parent is not None and parent is not self.root:
            depth += 1
            parent = parent.parent
        width = self._content_width if self._content_width is not None else self.scrollable_content_region.width
        return width - depth * self.guide_depth

    def get_label_width(self, node: TreeNode[Any]) -> int:
        """What `render_label` gives, measured without rendering it: the tree asks for every
        line's width on each rebuild (a third of the picker's first draw went to rendering
        labels only to measure them). A label wider than its room is cut to the room."""
        width = node._label.cell_len
        if node._allow_expand:
            width += cell_len(self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE)
        room = self._room(node)
        return width if room <= 4 or width <= room else room

    def render_label(self, node: TreeNode[Any], base_style: Style, style: Style) -> Text:
        """Cut labels that do not fit with an ellipsis: a clean end beats a horizontal scrollbar
        in a narrow column, and the preview shows the whole title anyway."""
        label = super().render_label(node, base_style, style)
        room = self._room(node)
        if room <= 4 or label.cell_len <= room:
            return label
        if isinstance(node.data, Group):
            # Shorten the name, keep the count: "long-term_follo… (4)".
            suffix = len(f" ({node.data.count})")
            name_end = len(label.plain) - suffix
            keep = name_end - (label.cell_len - room) - 1
            if keep > 2:
                mark = label[keep : keep + 1]
                mark.plain = "…"  # same length, so the cell keeps its styles (cursor highlight)
                return Text.assemble(label[:keep], mark, label[name_end:])
        label.truncate(room, overflow="ellipsis")
        return label

    def leaves(self) -> list[TreeNode[Any]]:
        """Every environment node, in tree order (not the "more" lines)."""
        out: list[TreeNode[Any]] = []

        def walk(node: TreeNode[Any]) -> None:
            for child in node.children:
                if isinstance(child.data, Group):
                    walk(child)
                elif not isinstance(child.data, MoreEnvironments):
                    out.append(child)

        walk(self.root)
        return out

    async def _on_click(self, event: events.Click) -> None:
        meta = event.style.meta
        line = meta.get("line")
        if line is not None and not meta.get("toggle", False) and line != self.cursor_line:
            # Stop Tree's own click handler (which would also select) and only move the cursor.
            event.prevent_default()
            self.cursor_line = line
