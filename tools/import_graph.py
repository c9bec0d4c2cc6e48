#!/usr/bin/env python3
"""Draw the import graph of proactive_tui from its source and print what a reviewer needs to judge
its layering: the import cycles, the imports that run from a lower layer to a higher one, and the
largest modules.

Why a script of our own beside import-linter (which the suite runs, see `.importlinter`): the
linter answers yes/no per contract; this prints the whole picture, before and after a change, and
tells top-level imports from the lazy ones made inside a function (the project imports heavy parts
lazily on purpose, so a lazy import is a design choice that must still respect the layers) and from
the ones under `if TYPE_CHECKING:` (never executed; reported apart, still held to the layers).

It reads the files with `ast` only: nothing is imported, so it runs without the venv.

    python tools/import_graph.py            # the report
    python tools/import_graph.py --edges    # also every upward edge with file:line
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "proactive_tui"

# The layers, bottom to top. A module may import from its own layer and the layers below it.
# Each entry: (layer name, module-name prefixes). The first matching prefix wins, longest first
# (see layer_of), so a family's `ui` folder can sit in the ui layer while the rest of the family
# sits lower. Keep this table and `.importlinter` saying the same thing.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", (
        "proactive_tui.textsafe", "proactive_tui.tomlfile", "proactive_tui.paths",
        "proactive_tui.folding", "proactive_tui.redact",
    )),
    # The model layer: the gateway and the user's config file that sets its seats, limits and the
    # embedded model's threads (config reads llm's settings models; the loader reads config).
    ("model", ("proactive_tui.llm", "proactive_tui.config")),
    ("engine", ("proactive_tui.core",)),
    ("envs", ("proactive_tui.envs",)),
    ("families", ("proactive_tui.families",)),
    ("store", ("proactive_tui.store",)),
    ("services", ("proactive_tui.services",)),
    ("pipelines", (
        "proactive_tui.synth", "proactive_tui.evalrun", "proactive_tui.export",
        "proactive_tui.families.*.batch", "proactive_tui.families.*.synth",
        "proactive_tui.families.*.export", "proactive_tui.families.*.study",
        "proactive_tui.families.*.reward_check", "proactive_tui.families.*.generate",
    )),
    ("ui", ("proactive_tui.ui", "proactive_tui.families.*.ui", "proactive_tui.webserve")),
    ("cli", (
        "proactive_tui.cli", "proactive_tui.families.*.cli", "proactive_tui.families.*.eval_cli",
    )),
    ("top", (
        "proactive_tui.__main__", "proactive_tui.testing",
    )),
]
LAYER_INDEX = {name: i for i, (name, _) in enumerate(LAYERS)}


def _prefix_matches(prefix: str, module: str) -> bool:
    """`a.*.c` matches `a.x.c` and `a.x.c.d`; a plain prefix matches itself and its submodules."""
    want = prefix.split(".")
    have = module.split(".")
    if len(have) < len(want):
        return False
    return all(w == "*" or w == h for w, h in zip(want, have))


def layer_of(module: str) -> str | None:
    """The layer of a module: the most specific (longest) matching prefix decides."""
    best: tuple[int, str] | None = None
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if _prefix_matches(prefix, module):
                depth = prefix.count(".")
                if best is None or depth > best[0]:
                    best = (depth, name)
    return best[1] if best else None


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: str  # "top" (runs at import), "lazy" (inside a function), "typing" (TYPE_CHECKING only),
    # "plugin" (a family's own object loading one of its parts at first use: see is_plugin_load)
    line: int


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def discover() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def is_plugin_load(source: str, target: str, kind: str) -> bool:
    """A family's object (`families/<name>/__init__.py`, which the registry reaches by entry point,
    a dotted path) importing one of its own parts inside a method: the deliberate plugin load the
    architecture asks for (parts loaded at first use), not a layering decision, so it is counted
    apart. The same import at the top of the module would load the part at startup and counts."""
    parts = source.split(".")
    return (kind == "lazy" and len(parts) == 3 and parts[:2] == [PACKAGE, "families"]
            and target.startswith(source + "."))


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[Edge]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    edges: list[Edge] = []

    def target_module(name: str) -> str | None:
        # The deepest known module that `name` is or lies in (`a.b.func` -> `a.b`).
        parts = name.split(".")
        while parts:
            candidate = ".".join(parts)
            if candidate in modules:
                return candidate
            parts.pop()
        return None

    def visit(node: ast.AST, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            child_kind = kind
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                child_kind = "lazy" if kind == "top" else kind
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit_stmt(stmt, "typing")
                for stmt in child.orelse:
                    visit_stmt(stmt, kind)
                continue
            visit_stmt(child, child_kind)

    def visit_stmt(stmt: ast.AST, kind: str) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name.split(".")[0] == PACKAGE:
                    tgt = target_module(alias.name)
                    if tgt and tgt != module:
                        edges.append(Edge(module, tgt, kind, stmt.lineno))
        elif isinstance(stmt, ast.ImportFrom):
            base = _resolve(stmt, module, is_package)
            if base.split(".")[0] != PACKAGE:
                return
            for alias in stmt.names:
                tgt = target_module(f"{base}.{alias.name}") if alias.name != "*" else None
                tgt = tgt or target_module(base)
                if tgt and tgt != module:
                    edges.append(Edge(module, tgt, kind, stmt.lineno))
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and kind == "top":
            visit(stmt, "lazy")
        else:
            visit(stmt, kind)

    visit(tree, "top")
    # One edge per imported module per statement (`from m import a, b` is one import of m).
    unique = dict.fromkeys(edges)
    return [Edge(e.source, e.target, "plugin", e.line) if is_plugin_load(e.source, e.target, e.kind) else e
            for e in unique]


def strongly_connected(nodes: list[str], graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the package is deep enough to matter for recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                result.append(sorted(component))
    return result


def short(module: str) -> str:
    return module.removeprefix(PACKAGE + ".")


def report(show_edges: bool) -> int:
    modules = discover()
    edges = [e for m, p in modules.items() for e in imports_of(m, p, modules)]
    unplaced = sorted(m for m in modules if layer_of(m) is None and m != PACKAGE)
    out: list[str] = []
    kinds = Counter(e.kind for e in edges)
    out.append(f"modules: {len(modules)}; internal imports: {len(edges)} "
               f"(top-level {kinds['top']}, inside functions {kinds['lazy']}, "
               f"TYPE_CHECKING {kinds['typing']}, a family loading its own part {kinds['plugin']})")
    out.append("layers, bottom to top: " + " -> ".join(name for name, _ in LAYERS))
    if unplaced:
        out.append("modules in no layer: " + ", ".join(unplaced))

    for label, allowed in (
        ("all executed imports (top-level + inside functions + a family's own parts)", {"top", "lazy", "plugin"}),
        ("top-level imports only", {"top"}),
    ):
        graph: dict[str, set[str]] = defaultdict(set)
        for e in edges:
            if e.kind in allowed:
                graph[e.source].add(e.target)
        cycles = [c for c in strongly_connected(sorted(modules), graph) if len(c) > 1]
        cycles.sort(key=len, reverse=True)
        in_cycles = sum(len(c) for c in cycles)
        out.append("")
        out.append(f"== cycles over {label}: {len(cycles)} "
                   f"(strongly connected components > 1 module; {in_cycles} modules in them)")
        for c in cycles:
            out.append(f"  [{len(c)}] " + ", ".join(short(m) for m in c))

    upward = [
        e for e in edges
        if e.kind != "plugin" and layer_of(e.source) and layer_of(e.target)
        and LAYER_INDEX[layer_of(e.source)] < LAYER_INDEX[layer_of(e.target)]  # type: ignore[index]
    ]
    out.append("")
    by_kind = Counter(e.kind for e in upward)
    pairs = Counter((e.source, e.target) for e in upward)
    out.append(f"== upward imports (a lower layer importing a higher one): {len(upward)} import "
               f"statements, {len(pairs)} distinct module pairs (top-level {by_kind['top']}, "
               f"inside functions {by_kind['lazy']}, TYPE_CHECKING {by_kind['typing']})")
    per_layer = Counter((layer_of(e.source), layer_of(e.target)) for e in upward)
    for (a, b), n in sorted(per_layer.items(), key=lambda kv: (LAYER_INDEX[kv[0][0]], LAYER_INDEX[kv[0][1]])):  # type: ignore[index]
        out.append(f"  {a} -> {b}: {n}")
    seen: set[tuple[str, str]] = set()
    for e in sorted(upward, key=lambda e: (e.source, e.target, e.line)):
        if show_edges:
            out.append(f"    {short(e.source)}:{e.line} -> {short(e.target)} [{e.kind}]")
        elif (e.source, e.target) not in seen:
            seen.add((e.source, e.target))
            kinds_here = sorted({x.kind for x in upward if (x.source, x.target) == (e.source, e.target)})
            out.append(f"    {short(e.source)} -> {short(e.target)} [{', '.join(kinds_here)}]"
                       f" x{pairs[(e.source, e.target)]}")

    out.append("")
    out.append("== the 15 largest modules (lines)")
    sizes = sorted(((len(p.read_text(encoding='utf-8').splitlines()), m) for m, p in modules.items()),
                   reverse=True)[:15]
    for n, m in sizes:
        out.append(f"  {n:5d}  {short(m)}  [{layer_of(m)}]")
    print("\n".join(out))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Import cycles, upward imports and large modules "
                                                 "of proactive_tui.")
    parser.add_argument("--edges", action="store_true", help="list every upward import with its line")
    args = parser.parse_args(argv)
    return report(args.edges)


if __name__ == "__main__":
    sys.exit(main())
