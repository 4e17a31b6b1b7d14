"""No module of memstrata imports, directly or through others, a module that imports it back.

The import contracts in pyproject.toml (``make lint``) hold the layers and the order between
the siblings of each package; this holds what they do not see: a package and one of its own
modules importing each other (``memstrata.consolidate`` and ``memstrata.consolidate.by_model``),
imports inside functions and under ``TYPE_CHECKING`` included.
"""

from __future__ import annotations

import grimp


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
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
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_finder_sees_a_cycle_of_three_and_a_package_with_its_module() -> None:
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d", "pkg.sub", "pkg.sub.x"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    graph.add_import(importer="pkg.d", imported="pkg.a")
    graph.add_import(importer="pkg.sub", imported="pkg.sub.x")
    graph.add_import(importer="pkg.sub.x", imported="pkg.sub")
    assert sorted(_cycles(graph)) == [["pkg.a", "pkg.b", "pkg.c"], ["pkg.sub", "pkg.sub.x"]]


def test_no_module_of_memstrata_is_in_an_import_cycle() -> None:
    graph = grimp.build_graph("memstrata", cache_dir=None)
    assert len(graph.modules) > 200  # the whole package was read
    assert _cycles(graph) == []
