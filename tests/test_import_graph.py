"""weatkit's modules import each other without circles (issue 25 §5).

The graph is read from the source, not from ``sys.modules``: every ``import`` and
``from ... import`` of a weatkit module anywhere in a module (at module level, inside functions,
under ``if TYPE_CHECKING``) is an edge. ``from weatkit.x import y`` is an edge to the module
``weatkit.x.y`` when that is a module, else to ``weatkit.x``. A package ``__init__``'s
``if TYPE_CHECKING`` block only mirrors its lazy ``__getattr__`` table for type checkers and is
left out, as the table itself is.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1] / "weatkit"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, package_init: bool) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of ``tree`` (a package ``__init__``'s TYPE_CHECKING blocks left
    out)."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if package_init and isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _targets(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: set[str]
) -> set[str]:
    """The weatkit modules one import statement of ``module`` imports."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in modules}
    if node.level:  # relative: from the module's package, one level up per extra dot
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, *([node.module] if node.module else [])])
    else:
        base = node.module or ""
    if base not in modules:
        return set()
    return {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}


def import_graph() -> nx.DiGraph:
    """Module -> the weatkit modules it imports."""
    paths = {_module_name(p): p for p in ROOT.rglob("*.py")}
    modules = set(paths)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, path in paths.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree, package_init=is_package):
            for target in _targets(node, module, is_package, modules) - {module}:
                graph.add_edge(module, target)
    return graph


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert graph.has_edge("weatkit.pipeline.execute", "weatkit.engine.weat")  # module level
    assert graph.has_edge("weatkit.pipeline.manifest", "weatkit")  # import weatkit
    assert graph.has_edge("weatkit.lists.sources", "weatkit.data")  # from weatkit import data
    assert graph.has_edge("weatkit.models.batching", "weatkit.progress")  # ... import progress
    assert graph.has_edge("weatkit.config.files", "weatkit.models.hub")  # in a function
    assert graph.has_edge("weatkit.mbe.measure", "weatkit.mbe.run")  # under TYPE_CHECKING
    assert not graph.has_edge("weatkit", "weatkit.pipeline")  # the lazy table's mirror


def test_no_import_cycles() -> None:
    graph = import_graph()
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    shown = []
    for circle in circles:
        cycle = nx.find_cycle(graph.subgraph(circle))
        shown.append(" -> ".join([*(src for src, _ in cycle), cycle[0][0]]))
    assert not circles, "import cycles:\n" + "\n".join(shown)
