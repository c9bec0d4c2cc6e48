"""ProactiveEval's topic tree in the studio setup: grow it with the model or by hand, choose leaves.

The pipeline's first stage makes one topic tree per domain and draws each item's topic from its
leaves (`synth.ProactiveEvalPipeline.prepare`). Here a person shapes that tree before the run:
`x` asks the generator seat for the sub-topics of the node under the cursor (the pipeline's own
prompt, `synth_prompts.expand` / `first_level`, and its dedupe rule `near_duplicate`), `a` adds a
child, `r` renames, `d` removes, space marks a leaf to generate from. "Use this tree" writes the
trees into the run folder in the shape `--tree` reads ({domain: TopicNode}) and hands the studio
the command-line arguments `--tree FILE --leaf DOMAIN/PATH ...`, so the run (studio or headless)
is the same `synth` command either way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Static, Tree
from textual.widgets.tree import TreeNode

from proactive_tui.families.proactiveeval.env import DOMAINS
from proactive_tui.ui.screens.modal import Modal
from proactive_tui.ui.studio.view import SetupToolContext

TREE_FILE = "topic-tree.json"
"""Where "Use this tree" writes, in the run folder (DIR/tree.json is the run's own copy)."""
MARK = "● "


class TopicData:
    """What a tree node carries: its topic and whether a person chose it (a leaf) to generate from."""

    def __init__(self, topic: str, chosen: bool = False) -> None:
        self.topic = topic
        self.chosen = chosen


class NameModal(Modal[str | None]):
    """One line of text (a new or renamed topic): enter keeps it, escape cancels."""

    DEFAULT_CSS = """
    NameModal { align: center middle; }
    NameModal > Vertical { width: 60; max-width: 95%; height: auto; padding: 1 2; background: $panel;
                           border: round $accent; }
    NameModal Label { margin-bottom: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, prompt: str, value: str = "") -> None:
        super().__init__()
        self.prompt = prompt
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.prompt))
            yield Input(value=self.value, id="name")

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        text = " ".join(event.value.split())
        if not text:
            self.notify("a topic needs a name", severity="warning")
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class TopicTreeScreen(Modal[list[str] | None]):
    """The topic trees of the chosen domains (see the module docstring). Dismisses with the
    `synth` arguments (`--tree FILE` and a `--leaf` per chosen leaf) or None."""

    DEFAULT_CSS = """
    TopicTreeScreen { align: center middle; }
    TopicTreeScreen > Vertical { width: 110; max-width: 100%; height: 90%; background: $panel;
                                 border: round $accent; padding: 0 1; }
    TopicTreeScreen #trees { height: 1fr; }
    TopicTreeScreen Tree { height: auto; max-height: 100%; margin-bottom: 1; background: $panel; }
    TopicTreeScreen #keys { color: $text-muted; height: auto; }
    TopicTreeScreen #buttons { height: auto; align-horizontal: right; }
    TopicTreeScreen Button { margin-left: 1; }
    """
    BINDINGS = [
        Binding("x", "expand_model", "Expand with the model"),
        Binding("a", "add", "Add a child"),
        Binding("r", "rename", "Rename"),
        Binding("d,delete", "remove", "Remove"),
        Binding("space", "choose", "Choose leaf", priority=True),
        Binding("u", "use", "Use this tree"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, context: SetupToolContext) -> None:
        super().__init__()
        self.context = context
        self.domains = [d for d in context.targets if d in DOMAINS] or list(DOMAINS)
        self.expanding: set[int] = set()
        """Ids of the nodes whose expansion is under way (a second `x` on one waits for it)."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Topic tree: the items are drawn from the chosen leaves (●), or from every leaf of a "
                              "domain with none chosen", style="bold"), id="title")
            with VerticalScroll(id="trees"):
                for domain in self.domains:
                    yield self._tree(domain)
            yield Static(self._keys_text(), id="keys")
            with Horizontal(id="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Use this tree", id="use", variant="primary")

    def _keys_text(self) -> Text:
        settings = self.context.roles.get("generator") if isinstance(self.context.roles, dict) else None
        model = getattr(settings, "model", None)
        who = f" ({model}, the generator seat)" if model else " (no generator seat chosen)"
        return Text(f"x expand with the model{who} · a add · r rename · d remove · space choose a leaf · "
                    "u use this tree · esc cancel")

    def _tree(self, domain: str) -> Tree[TopicData]:
        title = DOMAINS[domain]
        tree: Tree[TopicData] = Tree(Text(title), data=TopicData(title), id=f"tree-{domain}")
        tree.domain = domain  # type: ignore[attr-defined]
        saved = self._saved().get(domain)
        if isinstance(saved, dict):
            self._fill(tree.root, saved.get("children") or [])
        tree.root.expand_all()
        return tree

    def _saved(self) -> dict[str, Any]:
        """The tree written before (this screen's file, else the run's DIR/tree.json), so a
        person comes back to the tree they left."""
        folder = Path(self.context.folder) if self.context.folder else None
        for name in (TREE_FILE, "tree.json"):
            path = folder / name if folder else None
            if path is not None and path.is_file():
                try:
                    data = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                if isinstance(data, dict):
                    return data
        return {}

    def _fill(self, node: TreeNode[TopicData], children: list[Any]) -> None:
        for child in children:
            if isinstance(child, dict) and isinstance(child.get("topic"), str):
                added = node.add(Text(child["topic"]), data=TopicData(child["topic"]))
                self._fill(added, child.get("children") or [])
                if not added.children:
                    added.allow_expand = False

    # -- the tree's shape ------------------------------------------------------------------------

    def _focused(self) -> tuple[Tree[TopicData], TreeNode[TopicData]] | None:
        tree = self.focused if isinstance(self.focused, Tree) else None
        if tree is None:
            trees = list(self.query(Tree))
            tree = trees[0] if trees else None
        if tree is None or tree.cursor_node is None:
            return None
        return tree, tree.cursor_node

    @staticmethod
    def _label(node: TreeNode[TopicData]) -> Text:
        data = node.data
        assert data is not None
        label = Text()
        if data.chosen:
            label.append(MARK, style="bold")
        label.append(data.topic)
        return label

    def _relabel(self, node: TreeNode[TopicData]) -> None:
        node.set_label(self._label(node))

    @staticmethod
    def _topics(node: TreeNode[TopicData]) -> list[str]:
        out = [node.data.topic] if node.data else []
        for child in node.children:
            out.extend(TopicTreeScreen._topics(child))
        return out

    def _add(self, node: TreeNode[TopicData], topic: str) -> TreeNode[TopicData]:
        if node.data is not None and node.data.chosen:  # no longer a leaf: its children are
            node.data.chosen = False
            self._relabel(node)
        node.allow_expand = True
        child = node.add(Text(topic), data=TopicData(topic))
        child.allow_expand = False
        node.expand()
        return child

    @staticmethod
    def path(node: TreeNode[TopicData]) -> list[str]:
        """Root to `node`, as topics (the root is the domain's title)."""
        trail: list[str] = []
        current: TreeNode[TopicData] | None = node
        while current is not None:
            if current.data is not None:
                trail.append(current.data.topic)
            current = current.parent
        return list(reversed(trail))

    def node_json(self, node: TreeNode[TopicData]) -> dict[str, Any]:
        assert node.data is not None
        return {"topic": node.data.topic, "children": [self.node_json(child) for child in node.children]}

    # -- actions -------------------------------------------------------------------------------

    def action_add(self) -> None:
        found = self._focused()
        if found is None:
            return
        _tree, node = found

        def added(topic: str | None) -> None:
            if topic:
                self._add(node, topic)

        self.app.push_screen(NameModal(Text(f"A new sub-topic of {node.data.topic}").plain), added)

    def action_rename(self) -> None:
        found = self._focused()
        if found is None:
            return
        _tree, node = found
        if node.is_root:
            self.notify("the root is the domain itself: it keeps its name", severity="warning")
            return

        def renamed(topic: str | None) -> None:
            if topic and node.data is not None:
                node.data.topic = topic
                self._relabel(node)

        self.app.push_screen(NameModal("Rename the topic", node.data.topic), renamed)

    def action_remove(self) -> None:
        found = self._focused()
        if found is None:
            return
        _tree, node = found
        if node.is_root:
            self.notify("the root is the domain itself: remove the domain in the setup instead", severity="warning")
            return
        parent = node.parent
        node.remove()
        if parent is not None and not parent.children:
            parent.allow_expand = False

    def action_choose(self) -> None:
        found = self._focused()
        if found is None:
            return
        _tree, node = found
        if node.children or node.is_root:
            self.notify("only a leaf can be chosen: the items are drawn from leaves", severity="warning")
            return
        node.data.chosen = not node.data.chosen
        self._relabel(node)

    def action_expand_model(self) -> None:
        found = self._focused()
        if found is None:
            return
        tree, node = found
        if id(node) in self.expanding:
            return
        settings = self.context.roles.get("generator") if isinstance(self.context.roles, dict) else None
        if settings is None:
            self.notify("no model for the generator seat: choose one in the setup first", severity="error")
            return
        self.expanding.add(id(node))
        node.set_label(self._label(node).append("  (asking the model…)", style="italic"))
        self.expand_with_model(tree, node, settings)

    @work(exclusive=False, group="topic-expand")
    async def expand_with_model(self, tree: Tree[TopicData], node: TreeNode[TopicData], settings: Any) -> None:
        """One call of the pipeline's expansion prompt for `node`; the new topics too like one
        already in the domain's tree are dropped (the pipeline's rule), at most `branching`."""
        from proactive_tui.families.proactiveeval import synth_prompts as prompts
        from proactive_tui.families.proactiveeval.synth import (TEMPERATURES, SynthOptions, TopicList,
                                                                 near_duplicate)
        from proactive_tui.llm.errors import ModelError
        from proactive_tui.llm.gateway import Gateway

        domain = tree.domain  # type: ignore[attr-defined]
        title = DOMAINS[domain]
        defaults = SynthOptions(domains=[domain], n=1)
        count = defaults.branching
        names = self.path(node)[1:]
        messages = (prompts.first_level(domain, title, count) if not names
                    else prompts.expand(domain, title, names, count))
        limits = self.context.limits if isinstance(self.context.limits, dict) else None
        try:
            reply = await Gateway(limits=limits).complete_structured(
                settings.model_copy(update={"temperature": TEMPERATURES["topic_tree"]}), messages, TopicList)
        except ModelError as exc:
            self.notify(f"expanding {node.data.topic}: {exc.message}", severity="error")
            return
        finally:
            self.expanding.discard(id(node))
            self._relabel(node)
        seen = self._topics(tree.root)
        added = 0
        for topic in reply.value.topics:
            topic = " ".join(topic.split())
            if not topic or near_duplicate(topic, seen, defaults.dedupe_ratio):
                continue
            seen.append(topic)
            self._add(node, topic)
            added += 1
            if added >= count:
                break
        if not added:
            self.notify(f"the model gave no new sub-topic of {node.data.topic}", severity="warning")

    # -- done ------------------------------------------------------------------------------------

    def arguments(self) -> list[str] | None:
        """Write the trees and return the `synth` arguments, or None (with a note) when a domain
        has no topic below its root (its items would have only the domain to go on)."""
        trees: dict[str, Any] = {}
        leaves: list[str] = []
        for tree in self.query(Tree):
            domain = tree.domain  # type: ignore[attr-defined]
            if not tree.root.children:
                self.notify(f"{DOMAINS[domain]}: add or expand topics below the domain first", severity="error")
                return None
            trees[domain] = self.node_json(tree.root)
            stack = [tree.root]
            while stack:
                node = stack.pop(0)
                if node.data is not None and node.data.chosen and not node.children:
                    leaves.append(f"{domain}/" + " / ".join(self.path(node)))
                stack.extend(node.children)
        if not self.context.folder:
            self.notify("choose the run's folder first: the tree is written into it", severity="error")
            return None
        from proactive_tui.evalrun.folder import write_atomic

        path = Path(self.context.folder).expanduser().resolve() / TREE_FILE
        write_atomic(path, json.dumps(trees, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
        args = ["--tree", str(path)]
        for leaf in leaves:
            args += ["--leaf", leaf]
        return args

    def action_use(self) -> None:
        args = self.arguments()
        if args is not None:
            self.dismiss(args)

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#use")
    def use_pressed(self) -> None:
        self.action_use()

    @on(Button.Pressed, "#cancel")
    def cancel_pressed(self) -> None:
        self.action_cancel()
